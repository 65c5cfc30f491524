internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders

/// How the emulator turns a cell value into a CAdES-BES signature. Kept behind a protocol so the
/// package's `Signing` module (`CMSSigner`) can take over with a one-line change.
protocol EmulatorSigner: Sendable {
    /// An attached CAdES-BES SignedData (DER ContentInfo) over `content`, signed by `identity`.
    func signCAdES(content: [UInt8], identity: SigningIdentity) throws -> [UInt8]
}

/// CAdES-BES through OpenSSL's own `CMS_sign` with `CMS_CADES` (signing-certificate-v2), SHA-256,
/// content attached, signer certificate and chain included.
struct OpenSSLCAdESSigner: EmulatorSigner {
    func signCAdES(content: [UInt8], identity: SigningIdentity) throws -> [UInt8] {
        guard let key = identity.key as? LocalSigningKey else {
            throw CertificateProviderError.unsupportedOperation("the emulator signs only with keys it holds")
        }
        OpenSSLErrorQueue.clear()
        return try MemoryBIO.withReadBIO(content) { input in
            try withX509Stack(identity.chain) { chain in
                let flags = UInt32(CMS_BINARY | CMS_CADES)
                guard let cms = CMS_sign(identity.certificate.handle.pointer, key.handle.pointer, chain, input, flags) else {
                    throw OpenSSLErrorQueue.error(.cryptoFailure, "CMS_sign failed")
                }
                defer { CMS_ContentInfo_free(cms) }
                var output: UnsafeMutablePointer<UInt8>?
                let length = i2d_CMS_ContentInfo(cms, &output)
                guard length > 0, let output else { throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the CMS") }
                defer { COpenSSLShims_OPENSSL_free(output) }
                return Array(UnsafeBufferPointer(start: output, count: Int(length)))
            }
        }
    }
}
