import CertificateProviders
import CryptoProDSSProvider
import Signing

extension Commands {
    /// Runs one signing `attempt`; when the server's answer shows that the provider's kept
    /// certificate list is stale (the signature is by another certificate than the selected one:
    /// `.serverSignatureMismatch`; the server does not know the certificate: `.serverRejected`), the
    /// provider lists its certificates again, and when that changed the selection the coordinator
    /// forgets the old identity and `attempt` runs once more. Only CryptoPro DSS keeps a list between
    /// commands; for other providers, and when the list did not change, the error stands.
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
        } catch let failure as CertificateProviderError
            where failure.code == .serverSignatureMismatch || failure.code == .serverRejected
        {
            guard let provider = try? await coordinator.provider(providerID) as? CryptoProDSSProvider else {
                throw failure
            }
            let refresh: CryptoProDSSProvider.CertificateRefresh
            do {
                refresh = try await provider.refreshSelectedCertificate()
            } catch let refreshError as CertificateProviderError where refreshError.code == .invalidParameter {
                throw refreshError
            } catch {
                throw failure
            }
            guard refresh.changed else { throw failure }
            let (before, now) = (refresh.previous, refresh.current)
            let what =
                before.subject == now.subject
                ? "the server re-issued the certificate '\(now.subject)'"
                : "the server's certificate \(refresh.certificateID) is now '\(now.subject)', not '\(before.subject)'"
            context.console.err(
                "certsign: \(what) (SHA-256 \(before.sha256FingerprintHex) before, \(now.sha256FingerprintHex) now); "
                    + "the kept certificate list was refreshed, signing again"
            )
            await coordinator.forgetIdentity(of: providerID)
            return try await attempt()
        }
    }
}

extension Commands {
    /// Whether a batch's result failed the way ``healingStaleCertificate(coordinator:providerID:context:_:)``
    /// heals, so the document is signed again on its own.
    static func isStaleCertificate<T>(_ result: Result<T, CertificateProviderError>) -> Bool {
        guard case .failure(let error) = result else { return false }
        return error.code == .serverSignatureMismatch || error.code == .serverRejected
    }
}
