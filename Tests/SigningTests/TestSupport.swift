import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// One test PKI shared by every Signing suite: an RSA root, an RSA and an EC leaf, made once per
/// test process (Swift Testing makes a suite value per test; the keys are not made again for each).
struct Fixture: Sendable {
    let pki: TestPKI
    let rsa: SigningIdentity
    let ec: SigningIdentity

    private init(making: Void) throws {
        pki = try TestPKI(rootSubject: "CN=Signing Test Root,O=swift-certificate-providers")
        rsa = try pki.issueLeaf(subject: "CN=Иванов Иван,O=ООО Ромашка", keyType: .rsa2048)
        ec = try pki.issueLeaf(subject: "CN=EC Signer,O=Test", keyType: .p256)
    }

    private static let shared = Result { try Fixture(making: ()) }

    /// The shared fixture (made on first use).
    init() throws { self = try Self.shared.get() }

    /// `identity` with its key wrapped so that it is not a LocalSigningKey.
    static func external(_ identity: SigningIdentity) throws -> SigningIdentity { try withExternalKey(identity) }
}

/// `openssl cms -verify` (TestSupport's `OpenSSLCMS`) against the fixture's root.
enum OpenSSLCLI {
    /// Verifies `signature` (DER) over `content`, detached or attached; for an attached signature it
    /// also expects the content openssl extracts to be `content`.
    static func verify(
        signature: [UInt8],
        content: [UInt8],
        detached: Bool,
        root: Certificate,
        cades: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ExternalTool.Result {
        let verification = try OpenSSLCMS.verify(
            signature,
            content: detached ? content : nil,
            trust: [root],
            cades: cades
        )
        if verification.succeeded, !detached {
            #expect(verification.content == content, "the attached content differs", sourceLocation: sourceLocation)
        }
        return verification.result
    }

    /// The text dump of a CMS structure (`openssl cms -cmsout -print`).
    static func print(_ signature: [UInt8]) throws -> String {
        let directory = try TemporaryDirectory(prefix: "signing-cli")
        let path = try directory.write("doc.p7s", signature)
        return try ExternalTool.run("openssl", ["cms", "-cmsout", "-print", "-inform", "DER", "-in", path]).output
    }
}
