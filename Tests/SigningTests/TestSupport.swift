import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// The test PKI every Signing suite shares (`Fixture(sharedBy: .signingSuites)`): an RSA root, an
/// RSA and an EC leaf.
typealias Fixture = RSAAndECSigners

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
