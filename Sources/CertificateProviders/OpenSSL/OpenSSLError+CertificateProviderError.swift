package import OpenSSLWrappers

// The OpenSSL wrappers know nothing of this module; their failures become this module's error here,
// where a call leaves them, with the code that tells the caller what to do.

extension CertificateProviderError {
    /// The error a wrapper's failure means to a caller: its kind as the code, its reason and
    /// OpenSSL's errors kept.
    package init(_ error: OpenSSLError) {
        let code: Code =
            switch error.kind {
            case .malformedInput: .malformedInput
            case .cryptoFailure: .cryptoFailure
            case .unsupportedAlgorithm: .unsupportedAlgorithm
            case .wrongPassword: .wrongPassword
            }
        self.init(code, error.reason, openSSLErrors: error.openSSLErrors)
    }

    /// Runs `body`, turning an `OpenSSLError` it throws into this module's error; other errors pass
    /// through unchanged.
    package static func convertingOpenSSLErrors<R>(_ body: () throws -> R) throws -> R {
        do { return try body() } catch let error as OpenSSLError { throw CertificateProviderError(error) }
    }
}

extension OpenSSLErrorQueue {
    /// An error with `code` and `reason` carrying the drained queue.
    package static func error(_ code: CertificateProviderError.Code, _ reason: String) -> CertificateProviderError {
        CertificateProviderError(code, reason, openSSLErrors: drain())
    }
}

extension PublicKeyAlgorithm {
    /// The algorithm of an OpenSSL key, with its curve or GOST parameter set.
    package init(_ keyType: EVPKeyHandle.KeyType) {
        switch keyType {
        case .rsa: self = .rsa
        case .ed25519: self = .ed25519
        case .gost(let bits, let parameterSet): self = .gostR34102012(bits: bits, parameterSet: parameterSet)
        case .ec(let group):
            switch group {
            case nil: self = PublicKeyAlgorithm("EC")
            case "prime256v1", "P-256": self = .ecP256
            case "secp384r1", "P-384": self = .ecP384
            case "secp521r1", "P-521": self = .ecP521
            case let other?: self = PublicKeyAlgorithm("EC \(other)")
            }
        case .other(let name): self = PublicKeyAlgorithm(name)
        }
    }
}

extension EVPKeyHandle {
    /// The key's algorithm, with its curve or GOST parameter set.
    package var algorithm: PublicKeyAlgorithm { PublicKeyAlgorithm(keyType) }
}
