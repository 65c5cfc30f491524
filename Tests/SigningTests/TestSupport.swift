import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Testing

/// A real key that is not a `LocalSigningKey`: it forwards to one, as a remote or HSM key would
/// forward to its server, so the coordinator must take the "external signature" path.
struct ForwardingSigningKey: SigningKey {
    let inner: LocalSigningKey
    var publicKeyAlgorithm: PublicKeyAlgorithm { inner.publicKeyAlgorithm }
    var keySize: Int { inner.keySize }
    var publicKeyDERRepresentation: [UInt8] { inner.publicKeyDERRepresentation }
    func signature(
        forDigest digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [UInt8] {
        try await inner.signature(forDigest: digest, digestAlgorithm: digestAlgorithm, scheme: scheme)
    }
}

/// One test PKI shared by a suite: an RSA root, an RSA and an EC leaf.
struct Fixture: Sendable {
    let pki: TestPKI
    let rsa: SigningIdentity
    let ec: SigningIdentity

    init() throws {
        pki = try TestPKI(rootSubject: "CN=Signing Test Root,O=swift-certificate-providers")
        rsa = try pki.issueLeaf(subject: "CN=Иванов Иван,O=ООО Ромашка", keyType: .rsa2048)
        ec = try pki.issueLeaf(subject: "CN=EC Signer,O=Test", keyType: .p256)
    }

    /// `identity` with its key wrapped so that it is not a LocalSigningKey.
    static func external(_ identity: SigningIdentity) throws -> SigningIdentity {
        let local = try #require(identity.key as? LocalSigningKey)
        return SigningIdentity(
            certificate: identity.certificate,
            chain: identity.chain,
            key: ForwardingSigningKey(inner: local)
        )
    }
}

/// `openssl cms -verify` on files written to a temporary directory.
enum OpenSSLCLI {
    /// Verifies `signature` (DER) over `content`; returns the tool's result.
    static func verify(
        signature: [UInt8],
        content: [UInt8]?,
        root: Certificate,
        cades: Bool
    ) throws -> ExternalTool.Result {
        let directory = try TemporaryDirectory(prefix: "signing-cli")
        let signaturePath = try directory.write("doc.p7s", signature)
        let rootPath = try directory.write("root.pem", text: root.pemRepresentation)
        var arguments = [
            "cms", "-verify", "-binary", "-inform", "DER", "-in", signaturePath, "-CAfile", rootPath,
            "-out", directory.path("out.bin"),
        ]
        if let content { arguments += ["-content", try directory.write("doc.bin", content)] }
        if cades { arguments.append("-cades") }
        let result = try ExternalTool.run("openssl", arguments)
        if result.succeeded, content == nil {
            // Attached: the tool writes the embedded content out.
            _ = try directory.read("out.bin")
        }
        return result
    }

    /// The text dump of a CMS structure (`openssl cms -cmsout -print`).
    static func print(_ signature: [UInt8]) throws -> String {
        let directory = try TemporaryDirectory(prefix: "signing-cli")
        let path = try directory.write("doc.p7s", signature)
        return try ExternalTool.run("openssl", ["cms", "-cmsout", "-print", "-inform", "DER", "-in", path]).output
    }
}
