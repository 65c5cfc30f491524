public import CertificateProviders
import Foundation
import JSON
import RemoteProviderSupport

/// CSC API v2 credential authorization that ends with the user: a service that asks the user itself
/// (a credential in `implicit` mode approved on a phone) answers `credentials/authorize` with HTTP 202
/// `{"handle"}`, and `credentials/authorizeCheck` with that handle answers 202 again while the user
/// has not decided, the SAD once approved, `access_denied` once declined and `expired_request` once
/// the service gave up waiting. Any client of the same OAuth client can ask about a handle (after a
/// restart, too): the service knows it by its value.
extension CSCClient {
    /// What `credentials/authorize` or `credentials/authorizeCheck` answered.
    public enum AuthorizationResult: Sendable, CustomStringConvertible {
        /// The SAD.
        case authorized(CSCAuthorization)
        /// The user has not approved yet: ask again with ``authorizeCheck(handle:)``.
        case pending(handle: String)

        /// The state and the handle; never the SAD.
        public var description: String {
            switch self {
            case .authorized(let authorization): return "authorized(\(authorization))"
            case .pending(let handle): return "pending(\(handle))"
            }
        }
    }

    /// The methods whose errors say that the user declined or did not decide in time.
    static let pollingMethods: Set<String> = ["signatures/signPolling", "credentials/authorizeCheck"]

    /// `credentials/authorize`, waiting for the user when the service asks them first: the SAD.
    /// - Parameters:
    ///   - credentialID: the credential.
    ///   - numSignatures: how many signatures the SAD allows.
    ///   - hashes: the hashes the SAD is bound to (SCAL 2; nil for SCAL 1).
    ///   - hashAlgorithm: the hashes' algorithm (sent as `hashAlgorithmOID` with `hashes`).
    ///   - pin: the PIN (`authData` `PIN`), when the credential asks for one.
    ///   - otp: the one-time password (`authData` `OTP`), when the credential asks for one.
    ///   - approvalTimeout: how long to wait for the user's approval (default 300 seconds).
    ///   - pollInterval: the pause between two `credentials/authorizeCheck` calls (default 1 second).
    /// - Throws: `.wrongPassword` for a refused PIN or OTP; `.approvalDeclined`, `.approvalExpired`
    ///   naming the handle; `.timeout` naming the handle when the user did not decide within
    ///   `approvalTimeout` (it still waits on the service: ``authorizeCheck(handle:)`` can ask again);
    ///   as the type's documentation says.
    public func authorize(
        credentialID: String,
        numSignatures: Int,
        hashes: [[UInt8]]? = nil,
        hashAlgorithm: DigestAlgorithm? = nil,
        pin: Secret? = nil,
        otp: Secret? = nil,
        approvalTimeout: Duration = .seconds(300),
        pollInterval: Duration = .seconds(1)
    ) async throws -> CSCAuthorization {
        let started = try await startAuthorization(
            credentialID: credentialID,
            numSignatures: numSignatures,
            hashes: hashes,
            hashAlgorithm: hashAlgorithm,
            pin: pin,
            otp: otp
        )
        return try await waitForAuthorization(started, timeout: approvalTimeout, pollInterval: pollInterval)
    }

    /// The SAD of `result`, asking `credentials/authorizeCheck` every `pollInterval` while it is pending.
    /// - Throws: as ``authorize(credentialID:numSignatures:hashes:hashAlgorithm:pin:otp:approvalTimeout:pollInterval:)``.
    nonisolated public func waitForAuthorization(
        _ result: AuthorizationResult,
        timeout: Duration,
        pollInterval: Duration = .seconds(1)
    ) async throws -> CSCAuthorization {
        let handle: String
        switch result {
        case .authorized(let authorization): return authorization
        case .pending(let pending): handle = pending
        }
        return try await ApprovalWait.until(
            operationID: handle,
            providerID: .csc,
            timeout: timeout,
            pollInterval: pollInterval
        ) {
            guard case .authorized(let authorization) = try await authorizeCheck(handle: handle) else { return nil }
            return authorization
        }
    }

    /// Asks about a pending authorization once (`credentials/authorizeCheck`).
    /// - Parameter handle: the handle `credentials/authorize` answered.
    /// - Returns: ``AuthorizationResult/pending(handle:)`` until the user approved, then the SAD.
    /// - Throws: `.approvalDeclined` when the user declined; `.approvalExpired` when the service gave
    ///   up waiting (both name the handle: nothing was authorized, authorize again); `.serverRejected`
    ///   for a handle the service does not know; `.network` for an answer with neither a SAD nor a
    ///   handle; as the type's documentation says.
    public func authorizeCheck(handle: String) async throws -> AuthorizationResult {
        do {
            let json = try await call("credentials/authorizeCheck", ["handle": .string(handle)])
            return try CSCClient.authorizationResult(json, method: "credentials/authorizeCheck")
        } catch let error as CertificateProviderError where error.code == .approvalDeclined {
            throw CertificateProviderError(
                .approvalDeclined,
                "CSC authorization \(handle) was declined by the user: nothing was signed (\(error.reason))"
            )
        } catch let error as CertificateProviderError where error.code == .approvalExpired {
            throw CertificateProviderError(
                .approvalExpired,
                "CSC authorization \(handle) expired before the user approved it: nothing was signed; sign again "
                    + "(\(error.reason))"
            )
        }
    }

    /// The SAD, or the handle of a pending authorization, in an answer of `method`.
    /// - Throws: `.network` naming the field when the answer has neither.
    static func authorizationResult(_ json: JSONValue, method: String) throws -> AuthorizationResult {
        let reader = try JSONObjectReader(json, context: "CSC \(method)", errorCode: .network)
        if reader.value("SAD") == nil, let handle = try reader.optionalString("handle") {
            guard !handle.isEmpty else {
                throw CertificateProviderError(.network, "CSC \(method): field 'handle' is empty")
            }
            return .pending(handle: handle)
        }
        let sad = try reader.string("SAD")
        guard !sad.isEmpty else {
            throw CertificateProviderError(.network, "CSC \(method): field 'SAD' is empty")
        }
        return .authorized(CSCAuthorization(sad: Secret(sad), expiresIn: try reader.optionalInt("expiresIn")))
    }
}
