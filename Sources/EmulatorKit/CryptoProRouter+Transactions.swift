import CertificateProviders
import Foundation
import JSON

/// CryptoPro DSS signing that needs the user's confirmation (in myDSS): a transaction.
///
/// - `POST /SignServer/rest/api/transactions` takes the body of `…/documents` (the PIN is checked
///   now) and answers the transaction's ID as a JSON string; nothing is signed yet.
/// - `GET /SignServer/rest/api/transactions/{id}` answers `{"Id", "State"}`, `State` one of
///   `Pending`, `Confirmed`, `Declined`, `Expired`; a confirmed one carries `"Signature"`, the base64
///   CMS `…/documents` would have answered. An ID the user does not own is 404.
///
/// A transaction expires after ``DSSEmulator/Configuration/confirmationValidity`` while pending; it is
/// confirmed or declined as the CSC operations are (``EmulatorApprovals``: the admin route,
/// `certsign emulator approve|decline ID`, `--auto-approve`).
extension CryptoProRouter {
    /// The API name transactions carry in ``EmulatorApprovals``.
    static let approvalAPI = "cryptopro"

    func startTransaction(_ request: ServerRequest, _ user: EmulatorSeed.User) -> ServerResponse {
        let parsed: SignRequest
        let record: EmulatorSeed.CertificateRecord
        switch accepted(request.body, user) {
        case .failure(let refusal): return refusal.response
        case .success(let (request, certificate, _)): (parsed, record) = (request, certificate)
        }
        // Kept without its PIN (checked above): the body is signed as it is once confirmed.
        var stored = (try? JSONValue(parsing: request.body)) ?? .object([:])
        if case .object(var members) = stored, case .object(var signature)? = members["Signature"] {
            signature["PinCode"] = nil
            members["Signature"] = .object(signature)
            stored = .object(members)
        }
        let body = (try? stored.jsonBytes()) ?? []
        do {
            let operation = try approvals.start(
                api: CryptoProRouter.approvalAPI,
                username: user.username,
                keyID: String(record.id),
                hashes: [Data(body).base64EncodedString()],
                digestOID: "",
                signAlgorithm: parsed.format.rawValue,
                validity: configuration.confirmationValidity
            )
            return Reply.json(200, .string(operation.id))
        } catch {
            return CryptoProRouter.error(500, "the transaction could not be recorded: \(error)")
        }
    }

    func transaction(_ id: String, _ user: EmulatorSeed.User) -> ServerResponse {
        guard let operation = approvals.operation(id), operation.api == CryptoProRouter.approvalAPI,
            operation.username == user.username
        else {
            return CryptoProRouter.error(404, "transaction \(id) was not found for this user")
        }
        let states: [EmulatorApprovals.State: String] = [
            .pending: "Pending", .approved: "Confirmed", .declined: "Declined", .expired: "Expired",
        ]
        var answer: [String: JSONValue] = ["Id": .string(id), "State": .string(states[operation.state] ?? "Pending")]
        if operation.state == .approved {
            let body = operation.hashes.first.flatMap { Data(base64Encoded: $0) }.map(Array.init) ?? []
            switch accepted(body, user, pinChecked: true) {
            case .failure(let refusal): return refusal.response
            case .success(let (parsed, record, digestAlgorithm)):
                let signed = signature(parsed, record: record, digestAlgorithm: digestAlgorithm)
                guard signed.status == 200, let value = try? JSONValue(parsing: signed.body) else { return signed }
                answer["Signature"] = value
            }
        }
        return Reply.json(200, .object(answer))
    }
}
