public import CertificateProviders
public import HTTPClient

extension CertificateProviderError {
    /// The HTTP client's error in the package's terms: the same code name (`.network`, `.timeout`,
    /// `.untrustedServerCertificate`, …) and the same reason.
    public init(_ error: HTTPClientError) {
        self.init(Code(error.code.rawValue), error.reason)
    }

    /// Runs `body` (a request, a transport's set-up) and rethrows an `HTTPClientError` from it as a
    /// `CertificateProviderError`, so a provider's callers see one error type; other errors pass as they are.
    /// `body` runs in the caller's isolation (an actor's client calls it with its own state).
    public static func convertingHTTPErrors<T>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> T
    ) async throws -> T {
        do {
            return try await body()
        } catch let error as HTTPClientError {
            throw CertificateProviderError(error)
        }
    }

    /// The synchronous form of ``convertingHTTPErrors(isolation:_:)``.
    public static func convertingHTTPErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as HTTPClientError {
            throw CertificateProviderError(error)
        }
    }
}

extension TLSClientIdentity {
    /// The TLS client identity of `identity`: its certificate, chain and key.
    /// - Throws: `.invalidParameter` when the key is not held by this process (a token's, a
    ///   server's): TLS needs the private key itself.
    public init(_ identity: SigningIdentity) throws {
        guard let local = identity.key as? LocalSigningKey else {
            throw CertificateProviderError.invalidParameter(
                "the TLS client identity '\(identity.certificate.subject)' has a key this process does not hold "
                    + "(\(type(of: identity.key))); use a stored identity or a PKCS#12 file"
            )
        }
        self.init(
            certificate: identity.certificate.handle,
            chain: identity.chain.map(\.handle),
            key: local.handle,
            subject: identity.certificate.subject
        )
    }
}
