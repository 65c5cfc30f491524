import CertificateProviders
import Foundation
import Synchronization

/// The emulator's state behind one lock: the seed's users and keys, issued tokens, and stored
/// signatures. Route handlers for every remote API share one store, so they see the same users,
/// keys and signatures. The seed changes only when the emulator gives its users' keys certificates
/// that name its revocation URLs (``replaceUsers(_:)``). With a state file, every change of the
/// signatures is written to it before the change is visible.
final class EmulatorStore: Sendable {
    /// An issued access or refresh token.
    struct Token: Sendable {
        var username: String
        var environment: String
        var project: String
        var device: String
        var expiresAt: Date

        /// A session of `user` on `device` (its expiry set when the tokens are issued).
        init(user: EmulatorSeed.User, device: String) {
            self.init(username: user.username, environment: user.environment, project: user.project, device: device)
        }

        init(username: String, environment: String, project: String, device: String, expiresAt: Date = Date()) {
            self.username = username
            self.environment = environment
            self.project = project
            self.device = device
            self.expiresAt = expiresAt
        }
    }

    /// The result of looking up an access token.
    enum TokenLookup: Sendable {
        case valid(Token)
        case expired
        case unknown
    }

    /// One stored signature.
    struct StoredSignature: Sendable {
        var id: Int
        var owner: String
        var cell: EmulatorSeed.ResourceCell
        var certificateID: Int
        var createdAt: Date
        var cms: [UInt8]
    }

    private struct State {
        var accessTokens: [String: Token] = [:]
        var refreshTokens: [String: Token] = [:]
        var signatures: [Int: StoredSignature] = [:]
        var nextSignatureID: Int
    }

    private let seedState: Mutex<EmulatorSeed>
    private let state: Mutex<State>
    /// Where signatures are kept across runs; nil keeps them in memory only.
    let stateFile: EmulatorStateFile?

    /// A store serving `seed`, holding `signatures` (from an earlier run) and writing changes to `stateFile`.
    init(
        seed: EmulatorSeed,
        signatures: [StoredSignature] = [],
        nextSignatureID: Int? = nil,
        stateFile: EmulatorStateFile? = nil
    ) {
        seedState = Mutex(seed)
        self.stateFile = stateFile
        var initial = State(nextSignatureID: nextSignatureID ?? seed.firstSignatureID)
        for signature in signatures { initial.signatures[signature.id] = signature }
        state = Mutex(initial)
    }

    /// The seed served now.
    var seed: EmulatorSeed { seedState.withLock { $0 } }

    /// Replaces the users (their keys with new certificates).
    func replaceUsers(_ users: [EmulatorSeed.User]) {
        seedState.withLock { $0.users = users }
    }

    func user(named name: String) -> EmulatorSeed.User? {
        seed.users.first { $0.username == name }
    }

    func cell(resource: String, table: String, column: String, row: Int) -> EmulatorSeed.ResourceCell? {
        seed.cells.first { $0.resource == resource && $0.table == table && $0.column == column && $0.row == row }
    }

    /// Issues a fresh access + refresh token pair.
    func issueTokens(
        for session: Token,
        accessLifetime: TimeInterval,
        refreshLifetime: TimeInterval
    ) -> (access: String, refresh: String) {
        let access = EmulatorStore.randomToken()
        let refresh = EmulatorStore.randomToken()
        var accessToken = session
        var refreshToken = session
        accessToken.expiresAt = Date().addingTimeInterval(accessLifetime)
        refreshToken.expiresAt = Date().addingTimeInterval(refreshLifetime)
        state.withLock {
            $0.accessTokens[access] = accessToken
            $0.refreshTokens[refresh] = refreshToken
        }
        return (access, refresh)
    }

    /// Consumes a refresh token (single use) and returns the session it belonged to, or nil.
    func redeemRefreshToken(_ token: String) -> Token? {
        state.withLock { state -> Token? in
            guard let session = state.refreshTokens.removeValue(forKey: token), session.expiresAt > Date() else {
                return nil
            }
            return session
        }
    }

    func lookUpAccessToken(_ token: String) -> TokenLookup {
        state.withLock { state -> TokenLookup in
            guard let session = state.accessTokens[token] else { return .unknown }
            return session.expiresAt > Date() ? .valid(session) : .expired
        }
    }

    /// Marks one access token expired.
    func expireAccessToken(_ token: String) {
        state.withLock { $0.accessTokens[token]?.expiresAt = .distantPast }
    }

    /// Marks every access token expired (refresh tokens keep working).
    func expireAccessTokens() {
        state.withLock { state in
            for key in state.accessTokens.keys { state.accessTokens[key]?.expiresAt = .distantPast }
        }
    }

    /// Forgets every access and refresh token (clients must log in again).
    func revokeAllTokens() {
        state.withLock { state in
            for key in state.accessTokens.keys { state.accessTokens[key]?.expiresAt = .distantPast }
            state.refreshTokens.removeAll()
        }
    }

    /// Stores a signature and returns its id.
    /// - Throws: `.fileSystem` when the state file cannot be written (nothing is stored then).
    func addSignature(owner: String, cell: EmulatorSeed.ResourceCell, certificateID: Int, cms: [UInt8]) throws -> Int {
        try state.withLock { state -> Int in
            var changed = state
            let id = changed.nextSignatureID
            changed.nextSignatureID += 1
            changed.signatures[id] = StoredSignature(
                id: id,
                owner: owner,
                cell: cell,
                certificateID: certificateID,
                createdAt: Date(),
                cms: cms
            )
            try save(changed)
            state = changed
            return id
        }
    }

    /// Writes the signatures of `changed` to the state file, if there is one.
    private func save(_ changed: State) throws {
        try stateFile?.update { $0.setSignatures(Array(changed.signatures.values), nextID: changed.nextSignatureID) }
    }

    func signatures(of owner: String) -> [StoredSignature] {
        state.withLock { state in state.signatures.values.filter { $0.owner == owner }.sorted { $0.id < $1.id } }
    }

    /// Removes `id` when `owner` owns it; false otherwise (missing and foreign look the same).
    /// - Throws: `.fileSystem` when the state file cannot be written (nothing is removed then).
    func removeSignature(id: Int, owner: String) throws -> Bool {
        try state.withLock { state -> Bool in
            guard state.signatures[id]?.owner == owner else { return false }
            var changed = state
            changed.signatures[id] = nil
            try save(changed)
            state = changed
            return true
        }
    }

    func allSignatureIDs() -> [Int] {
        state.withLock { $0.signatures.keys.sorted() }
    }

    private static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
