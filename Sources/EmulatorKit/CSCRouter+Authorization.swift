import CertificateProviders
import Foundation
import JSON

/// CSC API v2 credential authorization that waits for the user: with
/// ``DSSEmulator/Configuration/authorizationApprovalValidity``, `credentials/authorize` for a
/// credential in `implicit` mode checks the request as usual, then answers 202 `{"handle"}` instead of
/// the SAD; the authorization waits for a person (``EmulatorApprovals``, API `csc-authorization`) for
/// that many seconds. `credentials/authorizeCheck` with `{"handle"}` answers:
/// - 202 `{"handle"}` while nobody decided;
/// - 200 `{"SAD", "expiresIn"}` once approved (the same SAD on every later check of the handle);
/// - 400 `access_denied` once declined, 400 `expired_request` once it expired while pending,
///   400 `invalid_request` for a handle this client does not own;
/// - once, what ``DSSEmulator/failNextPoll(of:with:)`` set for the authorization.
extension CSCRouter {
    /// The API name of the authorizations in ``EmulatorApprovals``.
    static let authorizationAPI = "csc-authorization"

    /// Records an authorization waiting for the user and answers its handle.
    func startAuthorization(
        _ user: EmulatorSeed.User,
        credentialID: String,
        count: Int,
        hashes: Set<String>?,
        validity: TimeInterval
    ) throws -> ServerResponse {
        let operation = try recordOperation {
            try approvals.start(
                api: CSCRouter.authorizationAPI,
                username: user.username,
                keyID: credentialID,
                hashes: hashes.map { $0.sorted() } ?? [],
                digestOID: "",
                signAlgorithm: "",
                validity: validity,
                numSignatures: count
            )
        }
        return Reply.json(202, ["handle": .string(operation.id)])
    }

    /// `credentials/authorizeCheck`.
    func authorizeCheck(_ body: JSONObjectReader, _ user: EmulatorSeed.User) throws -> ServerResponse {
        try CSCRouter.allowOnly(body, ["handle", "clientData"])
        let handle = try body.string("handle")
        switch try poll(handle, api: CSCRouter.authorizationAPI, of: user, parameter: "handle") {
        case .answer(let response):
            return response
        case .pending:
            return Reply.json(202, ["handle": .string(handle)])
        case .approved(let operation):
            guard let count = operation.numSignatures else {
                throw Failure(500, "server_error", "authorization \(handle) does not say how many signatures")
            }
            let record = try credential(operation.keyID, of: user)
            let issued = sads.issue(
                .init(
                    username: user.username,
                    credentialID: operation.keyID,
                    remaining: count,
                    hashes: CSCRouter.scal(of: record) == 2 ? Set(operation.hashes) : nil,
                    expiresAt: Date().addingTimeInterval(TimeInterval(CSCEmulatorCredentials.sadLifetime))
                ),
                forHandle: handle
            )
            let left = max(0, Int(issued.expiresAt.timeIntervalSinceNow.rounded(.down)))
            return Reply.json(200, ["SAD": .string(issued.sad), "expiresIn": .integer(left)])
        }
    }
}
