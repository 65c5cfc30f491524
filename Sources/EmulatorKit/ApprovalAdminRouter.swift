import CertificateProviders
import Foundation
import JSON

/// The emulator's admin routes for operations that wait for a person, standing in for the phone or
/// portal where the person approves (`certsign emulator approve|decline ID` calls them):
///
/// - `GET /emulator/approvals`: `{"operations": [{"id", "api", "state", "keyID", "createdAt",
///   "expiresAt"}]}`, oldest first;
/// - `POST /emulator/approvals/{id}/approve`, `POST /emulator/approvals/{id}/decline`:
///   `{"id", "state"}`; 404 for an unknown ID, 409 for one that is no longer pending;
/// - `POST /emulator/approvals/{id}/unavailable`, `…/malformed`, `…/slow`: the operation's next poll
///   (`signPolling`, `authorizeCheck`) answers 503, a body that is not JSON, or late, once
///   (``DSSEmulator/PollFault``): `{"id", "fault"}`; 404 for an unknown ID.
///
/// They are served only while the emulator listens on a loopback address (403 otherwise): whoever
/// reaches them signs as the seed's users. Errors are `{"error", "error_description"}`.
struct ApprovalAdminRouter: EmulatorRouter {
    let approvals: EmulatorApprovals
    let configuration: DSSEmulator.Configuration

    static let prefix = "/emulator/approvals"

    func owns(_ path: String) -> Bool { path == Self.prefix || path.hasPrefix(Self.prefix + "/") }

    func handle(_ request: ServerRequest, fault: DSSEmulator.Fault?) -> ServerResponse {
        guard DSSEmulator.isLoopback(configuration.host) else {
            return error(403, code: "forbidden", "the approval routes are served on loopback addresses only")
        }
        if request.path == Self.prefix {
            guard request.method == "GET" else { return error(405, code: "invalid_request", "use GET") }
            let formatter = ISO8601DateFormatter()
            let list = approvals.all().map { operation -> JSONValue in
                [
                    "id": .string(operation.id), "api": .string(operation.api),
                    "state": .string(operation.state.rawValue), "keyID": .string(operation.keyID),
                    "createdAt": .string(formatter.string(from: operation.createdAt)),
                    "expiresAt": .string(formatter.string(from: operation.expiresAt)),
                ]
            }
            return Reply.json(200, ["operations": .array(list)])
        }
        let parts = request.path.dropFirst(Self.prefix.count + 1).split(separator: "/").map(String.init)
        let actions = ["approve", "decline"] + DSSEmulator.PollFault.allCases.map(\.rawValue)
        guard parts.count == 2, actions.contains(parts[1]) else {
            return error(
                404,
                code: "not_found",
                "no route for \(request.path) (…/approvals/ID/ and one of \(actions.joined(separator: ", ")))"
            )
        }
        guard request.method == "POST" else { return error(405, code: "invalid_request", "use POST") }
        do {
            if let fault = DSSEmulator.PollFault(rawValue: parts[1]) {
                try approvals.failNextPoll(of: parts[0], with: fault)
                return Reply.json(200, ["id": .string(parts[0]), "fault": .string(fault.rawValue)])
            }
            let operation = try approvals.decide(parts[0], approve: parts[1] == "approve")
            return Reply.json(200, ["id": .string(operation.id), "state": .string(operation.state.rawValue)])
        } catch let refusal as EmulatorApprovals.Refusal {
            return error(refusal.status, code: refusal.status == 404 ? "not_found" : "conflict", refusal.message)
        } catch {
            return self.error(500, code: "server_error", "the decision could not be recorded: \(error)")
        }
    }

    func error(_ status: Int, code: String, _ message: String) -> ServerResponse {
        Reply.json(status, ["error": .string(code), "error_description": .string(message)])
    }
}

extension DSSEmulator {
    /// Where a signing operation that waits for a person stands.
    public enum ApprovalState: String, Sendable {
        /// Nobody decided yet.
        case pending
        /// Approved: the client's next poll gets the signatures.
        case approved
        /// Declined: nothing is signed.
        case declined
        /// Its validity period passed while it was pending: nothing is signed.
        case expired
    }

    /// How the next poll of one operation fails, once (a fault of that operation alone, with or
    /// without ``Configuration/faultsEnabled``).
    public enum PollFault: String, Sendable, CaseIterable {
        /// HTTP 503 with `Retry-After: 1` (`temporarily_unavailable`): the service is briefly down.
        case unavailable
        /// HTTP 200 with a body that is not JSON: a broken service or proxy.
        case malformed
        /// The poll's ordinary answer, after ``slowPollSeconds``: a client with a shorter timeout
        /// gives up first.
        case slow

        /// How long a ``slow`` poll takes: far longer than a client's short timeout needs to be to
        /// outlast an ordinary poll on a loaded machine (a client with a 1 s timeout, against a 2 s
        /// poll, saw every poll time out under a whole test suite's load).
        public static let slowPollSeconds: TimeInterval = 10
    }

    /// Makes the next `signatures/signPolling` or `credentials/authorizeCheck` of an operation answer
    /// with `fault`, once; the poll after it answers normally.
    /// - Throws: `.notStored` for an unknown ID.
    public func failNextPoll(of operationID: String, with fault: PollFault) throws {
        do {
            try approvals.failNextPoll(of: operationID, with: fault)
        } catch let refusal as EmulatorApprovals.Refusal {
            throw CertificateProviderError(.notStored, refusal.message)
        }
    }

    /// Approves a pending operation (as the person would on their phone).
    /// - Throws: `.notStored` for an unknown ID; `.invalidParameter` for one no longer pending;
    ///   `.fileSystem` when the state file cannot be written.
    public func approve(operationID: String) throws { try decide(operationID, approve: true) }

    /// Declines a pending operation.
    /// - Throws: as ``approve(operationID:)``.
    public func decline(operationID: String) throws { try decide(operationID, approve: false) }

    /// The state of an operation, or nil for an unknown ID.
    public func approvalState(of operationID: String) -> ApprovalState? {
        approvals.operation(operationID).flatMap { ApprovalState(rawValue: $0.state.rawValue) }
    }

    /// The IDs of every operation, oldest first.
    public var approvalOperationIDs: [String] { approvals.all().map(\.id) }

    private func decide(_ id: String, approve: Bool) throws {
        do {
            _ = try approvals.decide(id, approve: approve)
        } catch let refusal as EmulatorApprovals.Refusal {
            throw CertificateProviderError(refusal.status == 404 ? .notStored : .invalidParameter, refusal.message)
        }
    }

    /// Whether `host` is a loopback IP literal (`127.0.0.0/8`, `::1`) or `localhost`.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return bare == "::1" || bare == "localhost" || bare.hasPrefix("127.")
    }
}
