internal import CPKCS11
import CertificateProviders
import Foundation

/// Sessions on one token, logged in as the user: a pool that hands one session to each concurrent
/// operation (a PKCS#11 session runs one operation at a time) and survives what servers meet.
///
/// - Concurrency: operations take an idle session or open a new one; when the module answers
///   `CKR_SESSION_COUNT` the pool remembers the limit and waits for a session to come back instead
///   of failing the batch.
/// - Lost sessions: `CKR_SESSION_HANDLE_INVALID`, `CKR_SESSION_CLOSED`, `CKR_TOKEN_NOT_PRESENT`,
///   `CKR_DEVICE_REMOVED` and `CKR_USER_NOT_LOGGED_IN` (someone closed every session, the token was
///   pulled and put back) lead to one clean re-open: the slot is searched again by the token's
///   attributes, a session opened and the user logged in with the PIN that worked before. A login
///   that fails is never retried: a wrong PIN burns one of the token's tries only once.
/// - Fork: when the module was re-initialised in a forked child, every handle from the parent is
///   dropped without being closed, and the pool re-opens as above.
/// - PIN: the `Secret` is kept (its buffer is wiped when released) because re-opening and
///   `CKA_ALWAYS_AUTHENTICATE` keys need it again; ``close()`` logs out and drops it. The bytes are
///   passed to `C_Login` straight from the secret's buffer, never copied into a `String`.
/// - One login, many providers: PKCS#11 keeps the login state per application and token, not per
///   session, and modules are loaded once per process. So when a second connection (another
///   provider) opens a session on a token this process is logged in to, the session is already
///   logged in, and its own `C_Login` would answer `CKR_USER_ALREADY_LOGGED_IN` without looking at
///   its PIN. A session of its own or a fresh one proves nothing either; logging out to log in again
///   would pull the login from under the first provider. Instead the connection that makes a login
///   records how (``PKCS11LoginVerifier``: a salted SHA-256 of its PIN, or "on the PIN pad") in the
///   process-wide table of ``PKCS11Module``, under one lock with the state check and the `C_Login`;
///   a later connection finding the token logged in must hold a PIN that matches it: a different PIN
///   is `.wrongPassword`, no PIN `.passwordRequired`, both without a `C_Login` (no PIN try used), and
///   a PIN-pad login is never shared. A login no connection of this process made (other code in the
///   process called `C_Login`) is logged out and made again with this connection's PIN. The record
///   goes with the last connection to the token, which logs out. A PIN changed on the token since the
///   login was made does not match until every provider of the token has closed.
final class PKCS11TokenConnection: @unchecked Sendable {
    // Safe to share: every mutable field is read and written only with `condition` locked.
    let module: PKCS11Module
    let tokenFilter: PKCS11URI
    private let condition = NSCondition()
    private var slotID: CK_SLOT_ID
    private var moduleGeneration: UInt64
    private var epoch: UInt64 = 1
    private var idle: [CK_SESSION_HANDLE] = []
    private var openCount = 0
    private var sessionLimit: Int?
    private var pin: Secret?
    private var closed = false
    private var needsReopen = false
    private var tokenKey = ""
    private var counters = Counters()

    /// Diagnostics the tests and the benchmark read.
    struct Counters: Sendable {
        var logins = 0
        var failedLogins = 0
        var contextLogins = 0
        /// Logins of another connection this connection's PIN was checked against (no `C_Login`).
        var sharedLogins = 0
        var reopens = 0
        var sessionsOpened = 0
        var sessionLimitHits = 0
    }

    /// Finds the token, opens a first session and logs in.
    /// - Throws: `.tokenNotFound` naming the URI's token attributes; the login errors of ``login(session:)``.
    init(module: PKCS11Module, tokenFilter: PKCS11URI, pin: Secret?) throws {
        self.module = module
        self.tokenFilter = tokenFilter
        self.pin = pin
        moduleGeneration = try module.ensureInitialized()
        slotID = try Self.findSlot(module, tokenFilter)
        let key = PKCS11Module.tokenKey(try module.tokenInfo(slot: slotID))
        // Counted before the login check, so that no other connection logs out under this one.
        PKCS11Module.retainToken(key)
        tokenKey = key
        let session: CK_SESSION_HANDLE
        do {
            session = try openSession()
        } catch {
            PKCS11Module.releaseToken(key) {}
            tokenKey = ""  // deinit runs close(): nothing left to release
            throw error
        }
        do {
            try login(session: session)
        } catch {
            PKCS11Module.releaseToken(key) {}
            tokenKey = ""
            _ = module.rv { $0.C_CloseSession?(session) }
            throw error
        }
        idle.append(session)
        openCount = 1
    }

    deinit {
        close()
    }

    /// The slot holding the token the filter describes.
    static func findSlot(_ module: PKCS11Module, _ filter: PKCS11URI) throws -> CK_SLOT_ID {
        let slots = try module.slotsWithTokens()
        let matching = slots.filter { matches(filter, $0) }
        guard let first = matching.first else {
            let present = slots.map { "'\($0.token.label)' (serial \($0.token.serialNumber))" }.joined(separator: ", ")
            throw CertificateProviderError(
                .tokenNotFound,
                "no token matching \(filter.tokenDescription) is present in the PKCS#11 module \(module.path); "
                    + "tokens present: \(present.isEmpty ? "none" : present)"
            )
        }
        guard matching.count == 1 else {
            let names = matching.map { "'\($0.token.label)' (serial \($0.token.serialNumber))" }.joined(separator: ", ")
            throw CertificateProviderError.invalidParameter(
                "\(matching.count) tokens match \(filter.tokenDescription): \(names); add serial= to the pkcs11: URI"
            )
        }
        return first.id
    }

    /// Whether the token in `slot` has the token attributes of `filter` (the object ones are ignored).
    static func matches(_ filter: PKCS11URI, _ slot: PKCS11Module.Slot) -> Bool {
        (filter.token == nil || filter.token == slot.token.label)
            && (filter.manufacturer == nil || filter.manufacturer == slot.token.manufacturer)
            && (filter.model == nil || filter.model == slot.token.model)
            && (filter.serial == nil || filter.serial == slot.token.serialNumber)
            && (filter.slotID == nil || filter.slotID == UInt(slot.id))
    }

    var diagnostics: Counters { condition.withLock { counters } }

    /// The slot the token is in now.
    var currentSlot: CK_SLOT_ID { condition.withLock { slotID } }

    // MARK: Running operations

    /// Runs `body` on a session of its own; re-opens once when the session or token went away.
    /// `body` receives the session and the epoch (which changes on every re-open, so object handles
    /// cached for an older epoch must be looked up again).
    func withSession<R>(_ body: (CK_SESSION_HANDLE, UInt64) throws -> R) throws -> R {
        var reopened = false
        while true {
            let (session, sessionEpoch) = try acquire()
            do {
                let result = try body(session, sessionEpoch)
                release(session, epoch: sessionEpoch)
                return result
            } catch let failure as PKCS11Failure where failure.sessionLost {
                discard(session, epoch: sessionEpoch)
                guard !reopened else { throw failure }
                reopened = true
                try reopen(after: sessionEpoch)
            } catch {
                release(session, epoch: sessionEpoch)
                throw error
            }
        }
    }

    private func acquire() throws -> (CK_SESSION_HANDLE, UInt64) {
        condition.lock()
        defer { condition.unlock() }
        while true {
            guard !closed else {
                throw CertificateProviderError(
                    .notStored,
                    "the PKCS#11 identity was logged out (deleteStoredCertificate); initialize it again"
                )
            }
            if try module.ensureInitialized() != moduleGeneration || needsReopen {
                // A forked child (the parent's handles mean nothing here), or a re-open that failed before.
                idle.removeAll()
                openCount = 0
                try reopenLocked()
            }
            if let session = idle.popLast() { return (session, epoch) }
            if openCount < sessionLimit ?? Int.max {
                openCount += 1
                do {
                    let session = try openSession()
                    // Sessions share the token's login state; a new one is logged in when an older one is.
                    return (session, epoch)
                } catch let failure as PKCS11Failure where failure.rv == CK_RV(CKR_SESSION_COUNT) && openCount > 1 {
                    openCount -= 1
                    sessionLimit = openCount
                    counters.sessionLimitHits += 1
                } catch {
                    openCount -= 1
                    throw error
                }
            }
            // Every session is busy and the module allows no more: wait for one to come back. The
            // holders are inside a token call, not waiting on anything, so one returns soon.
            condition.wait()
        }
    }

    private func release(_ session: CK_SESSION_HANDLE, epoch sessionEpoch: UInt64) {
        condition.withLock {
            if sessionEpoch == epoch && !closed {
                idle.append(session)
            } else if sessionEpoch == epoch {
                _ = module.rv { $0.C_CloseSession?(session) }
            }
            // A handle of an older epoch is dropped unclosed: it died with its token or session, and
            // the module may already have given its number to a new session.
            condition.signal()
        }
    }

    private func discard(_ session: CK_SESSION_HANDLE, epoch sessionEpoch: UInt64) {
        condition.withLock {
            // The module said this session is gone: nothing to close.
            if sessionEpoch == epoch { openCount = max(0, openCount - 1) }
            condition.signal()
        }
    }

    /// Re-opens unless another operation already did since `failedEpoch`.
    private func reopen(after failedEpoch: UInt64) throws {
        try condition.withLock {
            guard epoch == failedEpoch, !closed else { return }
            // Idle sessions of the lost epoch are dropped unclosed (see release).
            idle.removeAll()
            openCount = 0
            try reopenLocked()
        }
    }

    /// Finds the token again (it may be in another slot after re-insertion), opens a session and
    /// logs in once. Called with the lock held.
    private func reopenLocked() throws {
        needsReopen = true
        moduleGeneration = try module.ensureInitialized()
        epoch += 1
        counters.reopens += 1
        slotID = try Self.findSlot(module, tokenFilter)
        let session = try openSession()
        do {
            try loginLocked(session: session)
        } catch {
            _ = module.rv { $0.C_CloseSession?(session) }
            throw error
        }
        idle.append(session)
        openCount = 1
        needsReopen = false
        condition.broadcast()
    }

    private func openSession() throws -> CK_SESSION_HANDLE {
        var session: CK_SESSION_HANDLE = 0
        try module.call("C_OpenSession") { $0.C_OpenSession?(slotID, CK_FLAGS(CKF_SERIAL_SESSION), nil, nil, &session) }
        counters.sessionsOpened += 1
        return session
    }

    // MARK: Login

    private func login(session: CK_SESSION_HANDLE) throws {
        try condition.withLock { try loginLocked(session: session) }
    }

    /// Logs the user in with this connection's PIN, or checks that the login the process already
    /// holds on the token was made with it (see "One login, many providers" above), as one step under
    /// the login table's lock.
    private func loginLocked(session: CK_SESSION_HANDLE) throws {
        let token = try module.tokenInfo(slot: slotID)
        guard token.flags & CK_FLAGS(CKF_LOGIN_REQUIRED) != 0 else { return }
        try PKCS11Module.withTokenLogin(tokenKey) { login in
            var info = CK_SESSION_INFO()
            try module.call("C_GetSessionInfo") { $0.C_GetSessionInfo?(session, &info) }
            let loggedIn =
                info.state == CK_STATE(CKS_RO_USER_FUNCTIONS) || info.state == CK_STATE(CKS_RW_USER_FUNCTIONS)
            if loggedIn, let verifier = login.verifier {
                try checkSharedLogin(verifier, token: token)
                return
            }
            if loggedIn {
                // Logged in by code outside these providers: that login says nothing about this PIN.
                _ = module.rv { $0.C_Logout?(session) }
            }
            login.verifier = try logIn(session: session, token: token)
        }
    }

    /// Checks this connection's PIN against the login another connection of this process made.
    /// No `C_Login` is made, so no PIN try is used.
    /// - Throws: `.wrongPassword` (another PIN), `.passwordRequired` (no PIN, or a PIN-pad login).
    private func checkSharedLogin(_ verifier: PKCS11LoginVerifier, token: PKCS11Module.TokenInfo) throws {
        let shared = "another pkcs11 provider of this process is logged in to token '\(token.label)'"
        let rule = "a provider signs only on a login made with its own PIN"
        guard !verifier.madeOnPINPad else {
            throw CertificateProviderError(
                .passwordRequired,
                "\(shared) on the token's PIN pad, and \(rule): a PIN-pad login cannot be checked again while it "
                    + "lasts. Use one provider for this token, or close the other one first (deleteStoredCertificate)"
            )
        }
        guard let pin else {
            throw CertificateProviderError(
                .passwordRequired,
                "token '\(token.label)' needs the user PIN: give the secret parameter 'pin' (\(shared), and \(rule))"
            )
        }
        guard verifier.matches(pin) else {
            self.pin = nil  // never used again
            throw CertificateProviderError(
                .wrongPassword,
                "the PIN for token '\(token.label)' is wrong: \(shared) with another PIN, and \(rule) (no C_Login "
                    + "was made, so no PIN try was used)"
            )
        }
        counters.sharedLogins += 1
    }

    /// `C_Login` with this connection's PIN, or on the PIN pad. Checks the PIN flags first (a locked
    /// PIN is reported without a try); a wrong PIN is reported with what the token says is left, and
    /// the PIN is dropped so that nothing can try it again.
    /// - Returns: how the login was made.
    private func logIn(session: CK_SESSION_HANDLE, token: PKCS11Module.TokenInfo) throws -> PKCS11LoginVerifier {
        if token.flags & CK_FLAGS(CKF_USER_PIN_LOCKED) != 0 {
            throw CertificateProviderError(
                .pinLocked,
                "the user PIN of token '\(token.label)' is locked (CKF_USER_PIN_LOCKED); no login was tried. Unlock "
                    + "it with the SO PIN (e.g. pkcs11-tool --init-pin --login --login-type so)"
            )
        }
        let rv: CK_RV
        if let pin {
            rv = pin.withUnsafeBytes { bytes in
                let pointer = UnsafeMutablePointer(mutating: bytes.bindMemory(to: CK_UTF8CHAR.self).baseAddress)
                return module.rv { $0.C_Login?(session, CK_USER_TYPE(CKU_USER), pointer, CK_ULONG(bytes.count)) }
            }
        } else if token.flags & CK_FLAGS(CKF_PROTECTED_AUTHENTICATION_PATH) != 0 {
            // A PIN pad or biometric reader: the token asks the user itself.
            rv = module.rv { $0.C_Login?(session, CK_USER_TYPE(CKU_USER), nil, 0) }
        } else {
            throw CertificateProviderError(
                .passwordRequired,
                "token '\(token.label)' needs the user PIN: give the secret parameter 'pin'\(Self.pinWarning(token.flags))"
            )
        }
        counters.logins += 1
        if rv == CK_RV(CKR_OK) { return pin.map(PKCS11LoginVerifier.init(pin:)) ?? .protectedAuthenticationPath }
        counters.failedLogins += 1
        let failure = PKCS11Failure(function: "C_Login", rv: rv)
        if failure.providerError("").code == .wrongPassword {
            pin = nil  // never tried again
            let after = (try? module.tokenInfo(slot: slotID))?.flags ?? token.flags
            throw CertificateProviderError(
                .wrongPassword,
                "the PIN for token '\(token.label)' is wrong (C_Login returned \(failure.name)); it was tried once "
                    + "and will not be retried\(Self.pinWarning(after))"
            )
        }
        throw failure.providerError("logging in to token '\(token.label)'")
    }

    /// A context-specific login right after `C_SignInit` for a `CKA_ALWAYS_AUTHENTICATE` key,
    /// with the PIN the user gave (no second prompt).
    func contextSpecificLogin(session: CK_SESSION_HANDLE, keyLabel: String) throws {
        let pin = condition.withLock { () -> Secret? in
            counters.contextLogins += 1
            return self.pin
        }
        guard let pin else {
            throw CertificateProviderError(
                .passwordRequired,
                "the key '\(keyLabel)' asks for the PIN before each signature (CKA_ALWAYS_AUTHENTICATE) and no PIN "
                    + "is available"
            )
        }
        let rv = pin.withUnsafeBytes { bytes in
            let pointer = UnsafeMutablePointer(mutating: bytes.bindMemory(to: CK_UTF8CHAR.self).baseAddress)
            return module.rv {
                $0.C_Login?(session, CK_USER_TYPE(CKU_CONTEXT_SPECIFIC), pointer, CK_ULONG(bytes.count))
            }
        }
        guard rv == CK_RV(CKR_OK) else {
            let failure = PKCS11Failure(function: "C_Login(CKU_CONTEXT_SPECIFIC)", rv: rv)
            if failure.providerError("").code == .wrongPassword { condition.withLock { self.pin = nil } }
            throw failure
        }
    }

    /// " (one try left before the PIN locks)" and the like, from the token's PIN flags.
    static func pinWarning(_ flags: CK_FLAGS) -> String {
        if flags & CK_FLAGS(CKF_USER_PIN_LOCKED) != 0 {
            return "; the PIN is now locked (CKF_USER_PIN_LOCKED): unlock it with the SO PIN"
        }
        if flags & CK_FLAGS(CKF_USER_PIN_FINAL_TRY) != 0 {
            return "; one try left before the PIN locks (CKF_USER_PIN_FINAL_TRY)"
        }
        if flags & CK_FLAGS(CKF_USER_PIN_COUNT_LOW) != 0 {
            return "; the token reports few tries left (CKF_USER_PIN_COUNT_LOW)"
        }
        return ""
    }

    /// Logs out (when no other connection of this process uses the token: the login state is the
    /// process's), closes every session of this connection and drops the PIN. Later operations throw `.notStored`.
    func close() {
        condition.withLock {
            guard !closed else { return }
            closed = true
            if !tokenKey.isEmpty, let session = idle.first {
                PKCS11Module.releaseToken(tokenKey) { _ = module.rv { $0.C_Logout?(session) } }
            } else if !tokenKey.isEmpty {
                PKCS11Module.releaseToken(tokenKey) {}  // every session is in use or gone: closing them logs out
            }
            for session in idle { _ = module.rv { $0.C_CloseSession?(session) } }
            idle.removeAll()
            openCount = 0
            pin = nil
            condition.broadcast()
        }
    }
}
