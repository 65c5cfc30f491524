import CertificateProviders
import Signing

extension Commands {
    /// Runs one signing `attempt` through the coordinator; when the server's answer shows that the
    /// provider's kept certificate list is stale (see ``refreshedIdentity(after:provider:used:context:)``),
    /// the coordinator forgets the old identity and `attempt` runs once more.
    /// - Throws: what the attempt throws (the second attempt's error when it ran twice); the refresh's
    ///   `.invalidParameter` when the selected certificate is no longer the user's.
    static func healingStaleCertificate<T: Sendable>(
        coordinator: SigningCoordinator,
        providerID: ProviderID,
        context: CommandContext,
        _ attempt: () async throws -> T
    ) async throws -> T {
        do {
            return try await attempt()
        } catch let failure as CertificateProviderError where isStaleCertificate(failure) {
            guard let provider = try? await coordinator.provider(providerID) else { throw failure }
            _ = try await refreshedIdentity(after: failure, provider: provider, used: nil, context: context)
            await coordinator.forgetIdentity(of: providerID)
            return try await attempt()
        }
    }

    /// Runs one signing `attempt` with `identity` of a provider whose server builds the signature
    /// (PAdES through CryptoPro DSS); when the answer shows the kept certificate list is stale, runs it
    /// once more with the identity the refreshed list selects.
    /// - Throws: as ``healingStaleCertificate(coordinator:providerID:context:_:)``.
    static func healingStaleCertificate<T: Sendable>(
        server: any DocumentSigning,
        identity: SigningIdentity,
        context: CommandContext,
        _ attempt: (SigningIdentity) async throws -> T
    ) async throws -> T {
        do {
            return try await attempt(identity)
        } catch let failure as CertificateProviderError where isStaleCertificate(failure) {
            let used = identity.certificate
            return try await attempt(
                try await refreshedIdentity(after: failure, provider: server, used: used, context: context)
            )
        }
    }

    /// After a signing `failure` that may come from a stale certificate list (the signature is by
    /// another certificate than the selected one: `.serverSignatureMismatch`; the server does not know
    /// the certificate: `.serverRejected`), lists the provider's certificates again; when the selection
    /// changed (from `used`, or from what the provider had selected when `used` is nil), says so on
    /// stderr and returns the new identity. Only providers that keep a list between commands
    /// (`CertificateListRefreshing`) refresh; for others, and when the selection did not change,
    /// `failure` is thrown.
    /// - Throws: `failure`; the refresh's `.invalidParameter` when the selected certificate is no
    ///   longer the user's.
    static func refreshedIdentity(
        after failure: CertificateProviderError,
        provider: any CertificateProvider,
        used: Certificate?,
        context: CommandContext
    ) async throws -> SigningIdentity {
        guard let refreshing = provider as? any CertificateListRefreshing else { throw failure }
        let refresh: CertificateRefresh
        do {
            refresh = try await refreshing.refreshSelectedCertificate()
        } catch let refreshError as CertificateProviderError where refreshError.code == .invalidParameter {
            throw refreshError
        } catch {
            throw failure
        }
        let before = used ?? refresh.previous
        let now = refresh.current
        guard before != now, let identity = try? refreshing.storedCertificate(), identity.certificate == now else {
            throw failure
        }
        let what =
            before.subject == now.subject
            ? "the server re-issued the certificate '\(now.subject)'"
            : "the server's certificate \(refresh.certificateID) is now '\(now.subject)', not '\(before.subject)'"
        context.console.err(
            "certsign: \(what) (SHA-256 \(before.sha256FingerprintHex) before, \(now.sha256FingerprintHex) now); "
                + "the kept certificate list was refreshed, signing again"
        )
        return identity
    }

    /// Whether a signing error may come from a stale certificate list.
    static func isStaleCertificate(_ error: CertificateProviderError) -> Bool {
        error.code == .serverSignatureMismatch || error.code == .serverRejected
    }

    /// Whether a batch's result failed the way ``healingStaleCertificate(coordinator:providerID:context:_:)``
    /// heals, so the document is signed again on its own.
    static func isStaleCertificate<T>(_ result: Result<T, CertificateProviderError>) -> Bool {
        guard case .failure(let error) = result else { return false }
        return isStaleCertificate(error)
    }
}
