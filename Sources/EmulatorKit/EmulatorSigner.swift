import CMS
import CertificateProviders

/// How the emulator turns a cell value into a CAdES-BES signature; behind a protocol so tests or a
/// later router can swap the format without touching the routes.
///
/// Signing is synchronous: it runs on libmicrohttpd's connection threads, which must never block
/// waiting for Swift concurrency's cooperative pool (a test or app that blocks that pool while the
/// emulator serves it would deadlock).
protocol EmulatorSigner: Sendable {
    /// An attached CAdES-BES SignedData (DER ContentInfo) over `content`, signed by `identity`.
    func signCAdES(content: [UInt8], identity: SigningIdentity) throws -> [UInt8]
}

/// The package's `Signing` module: CAdES-BES (signing-certificate-v2), the digest that fits the key
/// (SHA-256, Streebog for GOST keys), content attached, signer certificate and chain included. The
/// emulator's keys are local OpenSSL keys.
struct CMSEmulatorSigner: EmulatorSigner {
    func signCAdES(content: [UInt8], identity: SigningIdentity) throws -> [UInt8] {
        try CMSSigner.signSynchronously(content: content, identity: identity, format: .cadesBES, detached: false)
    }
}
