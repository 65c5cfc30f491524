public import CertificateProviders
public import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport

/// CSC API v2 asynchronous signing: `signatures/signHash` with `operationMode` `A` answers a
/// `responseID` at once, and `signatures/signPolling` tells whether the signatures are there yet
/// (the service may be waiting for the user to approve the operation on another device).
extension CSCClient {
    /// Where an asynchronous operation stands on the service.
    public enum PollResult: Sendable, Equatable {
        /// The service has no signatures yet (the user did not approve).
        case pending
        /// The signature values, one per hash, not yet checked (the caller verifies them).
        case signed([[UInt8]])
    }

    /// Starts an asynchronous `signHash` (`operationMode` `A`): the SAD is used now, the signatures
    /// come later through ``signPolling(responseID:count:)``.
    /// - Parameters:
    ///   - credentialID: the credential.
    ///   - sad: the SAD from `authorize`.
    ///   - hashes: the hashes to sign.
    ///   - hashAlgorithm: their algorithm.
    ///   - signAlgorithm: the signature algorithm OID.
    ///   - validity: how long the service keeps the operation (`validity_period`, sent in milliseconds).
    /// - Returns: the operation's `responseID`.
    /// - Throws: as ``signHash(credentialID:sad:hashes:hashAlgorithm:signAlgorithm:)``; `.network`
    ///   when the answer has no `responseID`.
    public func signHashAsynchronously(
        credentialID: String,
        sad: Secret,
        hashes: [[UInt8]],
        hashAlgorithm: DigestAlgorithm,
        signAlgorithm: String,
        validity: TimeInterval
    ) async throws -> String {
        let slot = SecretSlot(sad)
        var members = CSCClient.signHashMembers(credentialID, slot, hashes, hashAlgorithm, signAlgorithm)
        members["operationMode"] = "A"
        members["validity_period"] = .integer(Int(validity * 1000))
        let json = try await call("signatures/signHash", .object(members), secrets: [slot])
        let reader = try JSONObjectReader(json, context: "CSC signatures/signHash", errorCode: .network)
        let responseID = try reader.string("responseID")
        guard !responseID.isEmpty else {
            throw CertificateProviderError(.network, "CSC signatures/signHash: field 'responseID' is empty")
        }
        return responseID
    }

    /// Asks the service about an asynchronous operation (`signatures/signPolling`).
    /// - Parameters:
    ///   - responseID: the operation's ID.
    ///   - count: how many signatures it makes (the number of hashes sent).
    /// - Returns: ``PollResult/pending`` until the signatures are there.
    /// - Throws: `.approvalDeclined` when the user declined; `.approvalExpired` when the operation
    ///   expired first; `.serverRejected` for an operation the service does not know; as the type's
    ///   documentation says.
    public func signPolling(responseID: String, count: Int) async throws -> PollResult {
        let json = try await call("signatures/signPolling", ["responseID": .string(responseID)])
        guard json["signatures"] != nil else { return .pending }
        return .signed(try CSCClient.signatures(in: json, method: "signatures/signPolling", count: count))
    }
}
