import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

/// RFC 5652's rules for signed attributes, on signatures whose value verifies over what they hold:
/// a contentType naming another type than the content's, and a second messageDigest, are
/// malformed signatures of their own (not "altered"), with pyHanko's verdict beside ours.
@Suite("CMS signed attributes: contentType equals eContentType, one messageDigest")
struct CMSSignedAttributesTests {
    static let content = Array("A document whose signature's attributes break RFC 5652\n".utf8)
    var fixtures: OpenSSLFixtures
    let rsa: OpenSSLFixtures.Issued

    init() throws {
        fixtures = try OpenSSLFixtures(pki: try TestPKI(rootSubject: "CN=Attributes Root"))
        rsa = try fixtures.issue("attributes-rsa", key: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
    }

    func build(_ mode: String) throws -> [UInt8] {
        try CMSInteropFixtures.build(
            mode,
            certificatePath: rsa.certificatePath,
            keyPath: rsa.keyPath,
            content: Self.content,
            in: fixtures.directory
        )
    }

    func ours(_ signature: [UInt8]) -> VerificationResult {
        CMSVerifier.verify(signature: signature, content: Self.content, trustAnchors: [fixtures.pki.root.certificate])
    }

    @Test("the control (one contentType id-data, one messageDigest) verifies")
    func control() throws {
        let result = ours(try build("matched-rsa"))
        #expect(result.isValid, "\(result)")
    }

    @Test("a contentType attribute naming TSTInfo over id-data content is malformed (RFC 5652 §11.1)")
    func contentTypeMismatch() throws {
        let signature = try build("content-type-mismatch")
        let result = ours(signature)
        #expect(result.failure?.code == .malformed, "\(result)")
        #expect(result.failure?.reason.contains("contentType") == true, "\(result)")
        #expect(result.failure?.reason.contains("1.2.840.113549.1.9.16.1.4") == true, "\(result)")
        let verdict = try CMSInteropFixtures.pyhankoVerdict(
            signature,
            content: Self.content,
            root: fixtures.pki.root.certificate,
            in: fixtures.directory
        )
        // pyHanko refuses it too (a FORMAT_FAILURE).
        #expect(verdict.hasPrefix("error") && verdict.contains("Content type"), "\(verdict)")
    }

    @Test("a second messageDigest attribute is malformed, not an altered signature")
    func duplicateMessageDigest() throws {
        let signature = try build("duplicate-digest")
        let result = ours(signature)
        #expect(result.failure?.code == .malformed, "\(result)")
        #expect(result.failure?.reason.contains("2 messageDigest attributes") == true, "\(result)")
        #expect(result.failure?.reason.contains("altered") == false, "\(result)")
        let verdict = try CMSInteropFixtures.pyhankoVerdict(
            signature,
            content: Self.content,
            root: fixtures.pki.root.certificate,
            in: fixtures.directory
        )
        // pyHanko refuses it too ("multiple message digest attributes").
        #expect(verdict.hasPrefix("error") && verdict.contains("multiple message digest"), "\(verdict)")
    }
}
