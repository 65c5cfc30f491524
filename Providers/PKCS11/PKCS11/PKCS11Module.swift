internal import CPKCS11
internal import CPKCS11Shims
import CertificateProviders
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One PKCS#11 module (a shared library) loaded into this process with `dlopen`.
///
/// A PKCS#11 module is process-global state by its own specification: `C_Initialize` may be called
/// once per process, and a forked child must call it again before using the module. So modules are
/// kept in one process-wide table keyed by path (with the token login table below, the only globals
/// in this provider: both mirror state the module keeps per process), loaded once and never
/// unloaded, and initialised with `CKF_OS_LOCKING_OK` (the module's threads use the OS's locks).
/// ``ensureInitialized()`` re-initialises in a forked child; the ``generation`` it returns changes
/// then, which tells sessions made before the fork that their handles are void.
final class PKCS11Module: @unchecked Sendable {
    // Safe to share: `functions` points at the module's static, immutable function table; the mutable
    // initialisation state is behind `state`'s lock.
    let path: String
    let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    private struct State {
        var initializedPID: pid_t?
        var generation: UInt64 = 0
    }
    private let state = Mutex(State())

    /// This process's login to one token: how many connections use it and how it was made.
    struct TokenLogin {
        /// The open connections to the token (of any module path: p11-kit's proxy and the module
        /// itself reach the same token, and the login state is the token's).
        var connections = 0
        /// How the current login was made; nil when no connection of this process made it.
        var verifier: PKCS11LoginVerifier?
    }
    /// Logins by token (see ``tokenKey(_:)``): the login state of a token is shared by the whole
    /// process (PKCS#11 keeps it per application), so this table is process-wide, like the modules.
    private static let logins = Mutex<[String: TokenLogin]>([:])

    private static let loaded = Mutex<[String: PKCS11Module]>([:])

    /// The module `p11-kit-proxy.so`: every module p11-kit is configured to load (`/usr/share/p11-kit/modules`).
    static let defaultPath = "p11-kit-proxy.so"

    private init(path: String, functions: UnsafeMutablePointer<CK_FUNCTION_LIST>) {
        self.path = path
        self.functions = functions
    }

    /// Loads (once per process) the module at `path` and initialises it.
    /// - Throws: `.moduleNotLoadable` naming the path when it cannot be opened, has no
    ///   `C_GetFunctionList`, or fails `C_Initialize`.
    static func load(_ path: String) throws -> PKCS11Module {
        let key = path.hasPrefix("/") ? (URL(fileURLWithPath: path).resolvingSymlinksInPath().path) : path
        let module: PKCS11Module = try loaded.withLock { table in
            if let module = table[key] { return module }
            if path.hasPrefix("/") && !FileManager.default.fileExists(atPath: path) {
                throw CertificateProviderError(.moduleNotLoadable, "the PKCS#11 module \(path) does not exist")
            }
            var message = [CChar](repeating: 0, count: 512)
            guard let library = CPKCS11Shims_dlopen(path, &message, message.count) else {
                let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                throw CertificateProviderError(
                    .moduleNotLoadable,
                    "the PKCS#11 module \(path) cannot be loaded: \(text)"
                )
            }
            var list: UnsafeMutablePointer<CK_FUNCTION_LIST>?
            let rv = CPKCS11Shims_get_function_list(library, &list)
            guard rv == CK_RV(CKR_OK), let list else {
                // Leave the library loaded: unloading a library whose constructors ran is not always safe.
                let why =
                    rv == CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
                    ? "it has no C_GetFunctionList, so it is not a PKCS#11 module"
                    : "C_GetFunctionList returned \(CKRNames.name(rv))"
                throw CertificateProviderError(.moduleNotLoadable, "\(path) is not usable as a PKCS#11 module: \(why)")
            }
            let module = PKCS11Module(path: path, functions: list)
            table[key] = module
            return module
        }
        do {
            _ = try module.ensureInitialized()
        } catch let failure as PKCS11Failure {
            throw CertificateProviderError(
                .moduleNotLoadable,
                "the PKCS#11 module \(path) did not initialise: \(failure)"
            )
        }
        return module
    }

    /// Calls `C_Initialize` unless this process already did (a forked child does it again).
    /// - Returns: the initialisation generation (changes when the module was re-initialised).
    @discardableResult
    func ensureInitialized() throws -> UInt64 {
        try state.withLock { state in
            let pid = getpid()
            if state.initializedPID == pid { return state.generation }
            var arguments = CK_C_INITIALIZE_ARGS()
            arguments.flags = CK_FLAGS(CKF_OS_LOCKING_OK)
            var rv = withUnsafeMutablePointer(to: &arguments) { pointer in
                self.rv { $0.C_Initialize?(UnsafeMutableRawPointer(pointer)) }
            }
            if rv == CK_RV(CKR_CRYPTOKI_ALREADY_INITIALIZED) && state.initializedPID != nil {
                // A forked child of a process that initialised it: start over, as PKCS#11 2.40 §6.7.7 asks.
                _ = self.rv { $0.C_Finalize?(nil) }
                rv = withUnsafeMutablePointer(to: &arguments) { pointer in
                    self.rv { $0.C_Initialize?(UnsafeMutableRawPointer(pointer)) }
                }
            }
            // ALREADY_INITIALIZED on the first call: another part of this process initialised the module.
            guard rv == CK_RV(CKR_OK) || rv == CK_RV(CKR_CRYPTOKI_ALREADY_INITIALIZED) else {
                throw PKCS11Failure(function: "C_Initialize", rv: rv)
            }
            state.initializedPID = pid
            state.generation += 1
            return state.generation
        }
    }

    /// The current initialisation generation (without initialising).
    var generation: UInt64 { state.withLock { $0.generation } }

    /// The value a module function returns; `CKR_FUNCTION_NOT_SUPPORTED` when the module left its
    /// pointer NULL (the specification asks for a stub, not every module has one).
    func rv(_ body: (CK_FUNCTION_LIST) -> CK_RV?) -> CK_RV {
        body(functions.pointee) ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
    }

    /// Calls a module function and throws ``PKCS11Failure`` unless it returns `CKR_OK`.
    func call(_ name: String, _ body: (CK_FUNCTION_LIST) -> CK_RV?) throws {
        try check(rv(body), name)
    }

    /// The key of a token in the login table: manufacturer, model, serial and label.
    static func tokenKey(_ token: TokenInfo) -> String {
        [token.manufacturer, token.model, token.serialNumber, token.label].joined(separator: "\u{0}")
    }

    /// Records one more open connection to `token`.
    static func retainToken(_ token: String) { logins.withLock { $0[token, default: TokenLogin()].connections += 1 } }

    /// Runs `body` with the login record of `token`, under the table's lock: the check of the
    /// token's login state, the `C_Login` and the record of how it was made happen as one step.
    static func withTokenLogin(_ token: String, _ body: (inout TokenLogin) throws -> Void) throws {
        try logins.withLock { table in
            var login = table[token] ?? TokenLogin()
            defer { table[token] = login }
            try body(&login)
        }
    }

    /// Records a closed connection and, when it was the last one to `token`, runs `logout` (under the
    /// same lock, so that no connection can start using the login in between) and forgets how the
    /// login was made.
    static func releaseToken(_ token: String, logout: () -> Void) {
        logins.withLock { table in
            let remaining = max(0, (table[token]?.connections ?? 1) - 1)
            if remaining == 0 {
                table[token] = nil
                logout()
            } else {
                table[token]?.connections = remaining
            }
        }
    }

    // MARK: Slots and tokens

    /// One slot with a token.
    struct Slot {
        let id: CK_SLOT_ID
        let description: String
        let token: TokenInfo
    }

    /// What `C_GetTokenInfo` says, as Swift values.
    struct TokenInfo {
        let label: String
        let manufacturer: String
        let model: String
        let serialNumber: String
        let flags: CK_FLAGS
    }

    /// The slots that hold a token.
    func slotsWithTokens() throws -> [Slot] {
        try ensureInitialized()
        var count: CK_ULONG = 0
        try call("C_GetSlotList") { $0.C_GetSlotList?(CK_BBOOL(CK_TRUE), nil, &count) }
        var ids = [CK_SLOT_ID](repeating: 0, count: Int(count))
        if count > 0 { try call("C_GetSlotList") { $0.C_GetSlotList?(CK_BBOOL(CK_TRUE), &ids, &count) } }
        return try ids.prefix(Int(count)).compactMap { id in
            var info = CK_SLOT_INFO()
            try call("C_GetSlotInfo") { $0.C_GetSlotInfo?(id, &info) }
            guard let token = try? tokenInfo(slot: id) else { return nil }
            return Slot(id: id, description: Self.text(info.slotDescription), token: token)
        }
    }

    /// The token in `slot`.
    func tokenInfo(slot: CK_SLOT_ID) throws -> TokenInfo {
        var info = CK_TOKEN_INFO()
        try call("C_GetTokenInfo") { $0.C_GetTokenInfo?(slot, &info) }
        return TokenInfo(
            label: Self.text(info.label),
            manufacturer: Self.text(info.manufacturerID),
            model: Self.text(info.model),
            serialNumber: Self.text(info.serialNumber),
            flags: info.flags
        )
    }

    /// A blank-padded PKCS#11 text field (a fixed-size C array imported as a tuple) as a trimmed string.
    static func text<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { raw in
            String(decoding: raw, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \u{0}"))
        }
    }
}
