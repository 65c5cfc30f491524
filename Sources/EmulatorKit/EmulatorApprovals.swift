import CertificateProviders
import Foundation
import Synchronization

/// The emulator's operations that wait for a person (a CSC asynchronous `signHash`, a CSC credential
/// authorization answered by `credentials/authorizeCheck`): each
/// is pending until approved or declined (``DSSEmulator/approve(operationID:)``, the admin route,
/// `certsign emulator approve ID`), approved by itself after
/// ``DSSEmulator/Configuration/autoApproveAfter`` when that is set, and expired once its validity
/// period has passed while still pending. With a state directory the operations are kept in
/// `state.json`, so an approval survives a restart of the emulator.
final class EmulatorApprovals: Sendable {
    /// Where an operation stands.
    enum State: String, Codable, Sendable {
        case pending, approved, declined, expired
    }

    /// One operation: what it signs and with which key.
    struct Operation: Codable, Sendable, Equatable {
        var id: String
        /// The API that started it: `csc` (a signing operation), `csc-authorization` (a credential
        /// authorization).
        var api: String
        var username: String
        /// The key on the service (a CSC credential ID).
        var keyID: String
        /// The hashes to sign, base64.
        var hashes: [String]
        var digestOID: String
        /// The signature algorithm OID the client asked for.
        var signAlgorithm: String
        var createdAt: Date
        var expiresAt: Date
        /// When it approves itself (``DSSEmulator/Configuration/autoApproveAfter``), or nil.
        var autoApproveAt: Date?
        var state: State
        /// For a CSC authorization waiting for the user: how many signatures its SAD allows (nil for
        /// a signing operation).
        var numSignatures: Int?
    }

    /// Why an approval or a decline cannot be done.
    struct Refusal: Error {
        var status: Int
        var message: String
    }

    private let operations: Mutex<[String: Operation]>
    /// The fault each operation's next poll answers with (kept in memory only).
    private let pollFaults = Mutex<[String: DSSEmulator.PollFault]>([:])
    private let stateFile: EmulatorStateFile?
    private let autoApproveAfter: TimeInterval?

    init(stateFile: EmulatorStateFile?, autoApproveAfter: TimeInterval?) {
        self.stateFile = stateFile
        self.autoApproveAfter = autoApproveAfter
        let saved = stateFile?.current.approvals ?? []
        operations = Mutex(Dictionary(saved.map { ($0.id, $0) }, uniquingKeysWith: { $1 }))
    }

    /// Records a new pending operation and returns it (its ID is new and random).
    /// - Throws: `.fileSystem` when the state file cannot be written.
    func start(
        api: String,
        username: String,
        keyID: String,
        hashes: [String],
        digestOID: String,
        signAlgorithm: String,
        validity: TimeInterval,
        numSignatures: Int? = nil
    ) throws -> Operation {
        var generator = SystemRandomNumberGenerator()
        let id =
            "op-"
            + (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
            .joined()
        let now = Date()
        let operation = Operation(
            id: id,
            api: api,
            username: username,
            keyID: keyID,
            hashes: hashes,
            digestOID: digestOID,
            signAlgorithm: signAlgorithm,
            createdAt: now,
            expiresAt: now.addingTimeInterval(validity),
            autoApproveAt: autoApproveAfter.map { now.addingTimeInterval($0) },
            state: .pending,
            numSignatures: numSignatures
        )
        try change { $0[id] = operation }
        return operation
    }

    /// The operation as it stands now (an auto-approval or an expiry that is due applied), or nil.
    func operation(_ id: String) -> Operation? {
        try? change { _ in }
        return operations.withLock { $0[id] }
    }

    /// Every operation, oldest first, as it stands now.
    func all() -> [Operation] {
        try? change { _ in }
        return operations.withLock { Array($0.values) }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// Makes the next poll of operation `id` answer with `fault`, once.
    /// - Throws: ``Refusal`` (404) for an unknown ID.
    func failNextPoll(of id: String, with fault: DSSEmulator.PollFault) throws {
        guard operation(id) != nil else { throw Refusal(status: 404, message: "no operation \(id)") }
        pollFaults.withLock { $0[id] = fault }
    }

    /// The fault the poll of operation `id` answers with now, if one was set (it is used up).
    func takePollFault(of id: String) -> DSSEmulator.PollFault? {
        pollFaults.withLock { $0.removeValue(forKey: id) }
    }

    /// Approves or declines a pending operation.
    /// - Throws: ``Refusal`` (404 for an unknown ID, 409 for one that is no longer pending); the
    ///   state file's errors.
    func decide(_ id: String, approve: Bool) throws -> Operation {
        var decided: Operation?
        try change { operations in
            guard var operation = operations[id] else {
                throw Refusal(status: 404, message: "no operation \(id) (the emulator knows \(operations.count))")
            }
            guard operation.state == .pending else {
                throw Refusal(
                    status: 409,
                    message: "operation \(id) is \(operation.state.rawValue), not pending: it cannot be "
                        + (approve ? "approved" : "declined")
                )
            }
            operation.state = approve ? .approved : .declined
            operations[id] = operation
            decided = operation
        }
        guard let decided else { throw Refusal(status: 500, message: "operation \(id) was not decided") }
        return decided
    }

    /// Applies the auto-approvals and expiries that are due, then `body`; writes the state file when
    /// anything changed (the operations in memory change only when the write succeeded).
    private func change(_ body: (inout [String: Operation]) throws -> Void) throws {
        try operations.withLock { operations in
            var changed = operations
            let now = Date()
            for (id, operation) in changed where operation.state == .pending {
                if operation.expiresAt <= now {
                    changed[id]?.state = .expired
                } else if let approveAt = operation.autoApproveAt, approveAt <= now {
                    changed[id]?.state = .approved
                }
            }
            try body(&changed)
            guard changed != operations else { return }
            let list = changed.values.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
            try stateFile?.update { $0.approvals = list }
            operations = changed
        }
    }
}
