public import CertificateProviders
import Foundation
import HTTPClient
// The provider's public API stands on RemoteProviderSupport (its `remote` state, its initializers,
// the shared parameter keys), so importing the provider alone reaches all of it.
@_exported public import RemoteProviderSupport

/// A Cloud Signature Consortium API v2 service as a `CertificateProvider` (ID ``ProviderID/csc``,
/// `csc`): remote qualified signing the European way. The service signs hashes; the CMS / CAdES
/// container is built locally around the returned signature values (the coordinator's external-key
/// path), so its identity's key is a ``CSCSigningKey``.
///
/// Parameters: ``schema`` declares them (key, type, default, secret or not, meaning);
/// `certsign providers --params csc` prints them. The initializers, ``setParameters(_:)`` and
/// ``initialize(options:)`` validate through it, with the same messages.
///
/// ``initialize(options:)`` gets a token, finds the credential (`credentials/list` when
/// `credentialID` is absent), reads it (`credentials/info` with the chain) and returns an identity
/// whose certificate and chain come from the service. Signing authorizes and signs on the service
/// each time; ``CSCSigningKey`` explains batches and the check of every returned value. The
/// identity is kept in memory only: ``storedCertificate()`` returns it in the same process and nil
/// before; nothing is written to disk.
public final class CSCProvider: CertificateProvider {
    /// The parameters and the identity of the last ``initialize(options:)`` (in memory only), and the
    /// base every remote provider holds: its `parameters`, `setParameters(_:)` and stored identity
    /// answer from it (`RemoteProvider`).
    public let remote: RemoteProviderState<Void>

    /// Makes the provider around `remote` (the initializers call it).
    public init(remote: RemoteProviderState<Void>) { self.remote = remote }

    /// Connects, selects the credential and returns its identity (see the type's documentation).
    /// - Throws: `.invalidParameter` for missing or wrong parameters, or a credential the client does
    ///   not have (the reason lists the client's credentials); `.authenticationFailed` for a refused
    ///   client; `.unsupportedOperation` for a disabled key; `.network`, `.timeout`, the TLS codes.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        let merged = try remote.merged(options)
        let client = try makeClient(merged)
        var credentialID = try merged.string(ParameterKey.credentialID)
        if credentialID == nil {
            let ids = try await client.listCredentials().ids
            guard ids.count == 1 else {
                throw CertificateProviderError.invalidParameter(
                    ids.isEmpty
                        ? "the CSC client '\(try merged.requiredString(ParameterKey.clientID))' has no credentials"
                        : "the CSC client has \(ids.count) credentials (\(ids.joined(separator: ", "))); set "
                            + "parameter 'credentialID'"
                )
            }
            credentialID = ids[0]
        }
        guard let credentialID else {
            throw CertificateProviderError.invalidParameter("parameter 'credentialID' is required")
        }
        let credential: CSCCredential
        do {
            credential = try await client.credentialInfo(credentialID)
        } catch let error as CertificateProviderError where error.code == .serverRejected {
            let known = (try? await client.listCredentials().ids) ?? []
            throw CertificateProviderError.invalidParameter(
                "CSC credential '\(credentialID)' was refused (\(error.reason)); the client has: "
                    + "\(known.isEmpty ? "none" : known.joined(separator: ", "))"
            )
        }
        guard let certificate = credential.certificate else {
            throw CertificateProviderError(
                .network,
                "CSC credential \(credentialID): the service returned no certificate"
            )
        }
        guard credential.keyStatus.lowercased() == "enabled" else {
            throw CertificateProviderError.unsupportedOperation(
                "CSC credential \(credentialID): the key is \(credential.keyStatus)"
            )
        }
        let key = CSCSigningKey(
            credential: credential,
            certificate: certificate,
            client: client,
            pin: try merged.secret(ParameterKey.pin),
            otp: try merged.secret(ParameterKey.otp),
            asynchronous: try CSCProvider.asynchronousMode(merged),
            authorizationTimeout: try merged.integer(ParameterKey.approvalTimeout)
                ?? CSCAsynchronousMode().approvalTimeout
        )
        return remote.remember(
            SigningIdentity(certificate: certificate, chain: Array(credential.certificates.dropFirst()), key: key)
        )
    }

    /// The client's credentials with their certificates, keys and auth modes (`credentials/list` with
    /// `credentialInfo`; `credentials/info` for each one the service did not describe).
    /// - Throws: as ``initialize(options:)``.
    public func credentials() async throws -> [CSCCredential] {
        let parameters = self.parameters
        let client = try makeClient(parameters)
        let list = try await client.listCredentials(details: true)
        var result: [CSCCredential] = []
        for id in list.ids {
            if let described = list.credentials.first(where: { $0.id == id }) {
                result.append(described)
            } else {
                result.append(try await client.credentialInfo(id))
            }
        }
        return result
    }

    // MARK: Parameters

    /// The asynchronous mode the parameters ask for, or nil for synchronous signing.
    static func asynchronousMode(_ parameters: ProviderParameters) throws -> CSCAsynchronousMode? {
        guard try parameters.string(ParameterKey.operationMode) == "asynchronous" else { return nil }
        let defaults = CSCAsynchronousMode()
        return CSCAsynchronousMode(
            validityPeriod: try parameters.integer(ParameterKey.validityPeriod) ?? defaults.validityPeriod,
            approvalTimeout: try parameters.integer(ParameterKey.approvalTimeout) ?? defaults.approvalTimeout
        )
    }

    private func makeClient(_ parameters: ProviderParameters) throws -> CSCClient {
        guard try parameters.url(ParameterKey.url) != nil else {
            throw CertificateProviderError.invalidParameter("parameter 'url' is required")
        }
        guard let clientID = try parameters.string(ParameterKey.clientID), !clientID.isEmpty else {
            throw CertificateProviderError.invalidParameter("parameter 'clientID' is required")
        }
        let (url, policy) = try base.endpoint(
            [ParameterKey.url],
            in: parameters,
            missing: "parameter 'url' is required"
        )
        let configuration = CSCClient.Configuration(
            baseURL: url,
            clientID: clientID,
            clientSecret: try parameters.secret(ParameterKey.clientSecret),
            timeout: try RemoteProviderParameters.timeout(parameters),
            endpointPolicy: policy,
            clock: base.clock
        ).withAdditionalHeaders(base.additionalHeaders)
        return CSCClient(
            configuration: configuration,
            transport: try base.transport(for: parameters, endpointPolicy: policy)
        )
    }
}

extension CSCProvider: RemoteProvider {}
