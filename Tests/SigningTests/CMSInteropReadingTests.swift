import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

/// Signatures other signers write (BER, zero-padded, EdDSA, mixed hashes), each judged by us beside
/// `openssl cms -verify` and pyHanko. Where openssl accepts what we refuse, the test says why.
@Suite("CMS interop: BER, padding, EdDSA and mixed hashes, beside openssl and pyHanko")
struct CMSInteropReadingTests {
    static let content = Array("Interop: a document signed by someone else's tool\n".utf8)
    var fixtures: OpenSSLFixtures
    let ec: OpenSSLFixtures.Issued
    let rsa: OpenSSLFixtures.Issued

    init() throws {
        fixtures = try OpenSSLFixtures(pki: try TestPKI(rootSubject: "CN=Interop Root"))
        ec = try fixtures.issue("interop-ec")
        rsa = try fixtures.issue("interop-rsa", key: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
    }

    var root: Certificate { fixtures.pki.root.certificate }
    var directory: TemporaryDirectory { fixtures.directory }

    func ours(_ signature: [UInt8], content: [UInt8]? = Self.content) -> VerificationResult {
        CMSVerifier.verify(signature: signature, content: content, trustAnchors: [root])
    }

    func pyhanko(_ signature: [UInt8], content: [UInt8]? = Self.content) throws -> String {
        try CMSInteropFixtures.pyhankoVerdict(signature, content: content, root: root, in: directory)
    }

    func build(_ mode: String, by signer: OpenSSLFixtures.Issued) throws -> [UInt8] {
        try CMSInteropFixtures.build(
            mode,
            certificatePath: signer.certificatePath,
            keyPath: signer.keyPath,
            content: Self.content,
            in: directory
        )
    }

    @Test("openssl cms -sign -stream writes indefinite-length BER: it verifies in all three")
    func berFromOpenSSLStream() throws {
        let signature = try fixtures.sign(Self.content, by: ec, extra: ["-stream", "-nodetach"])
        #expect(Array(signature.prefix(2)) == [0x30, 0x80], "not indefinite-length BER")
        let result = ours(signature, content: nil)
        #expect(result.isValid, "\(result)")
        #expect(result.embeddedContent == Self.content)
        #expect(try fixtures.opensslVerifies(signature, content: nil).succeeded)
        #expect(try pyhanko(signature, content: nil) == "VALID")
    }

    @Test("BER everywhere but the certificates (signed attributes too) verifies; reordered attributes do not")
    func berSignedAttributes() throws {
        let detached = try CMSInteropFixtures.reencodeBER(try fixtures.sign(Self.content, by: ec), in: directory)
        let attached = try CMSInteropFixtures.reencodeBER(
            try fixtures.sign(Self.content, by: rsa, extra: ["-nodetach"]),
            in: directory
        )
        for (signature, content) in [(detached, Self.content), (attached, nil)] {
            #expect(Array(signature.prefix(2)) == [0x30, 0x80])
            let result = ours(signature, content: content)
            #expect(result.isValid, "\(result)")
            #expect(try fixtures.opensslVerifies(signature, content: content).succeeded)
            #expect(try pyhanko(signature, content: content) == "VALID")
        }
        #expect(ours(attached, content: nil).embeddedContent == Self.content)

        // The signed attributes are hashed as received, in DER form (definite lengths): reversing
        // them is not what the signer signed. OpenSSL (CMS_Attributes_Verify) and pyHanko hash the
        // received order too, so all three refuse.
        let reordered = try CMSInteropFixtures.reencodeBER(
            try fixtures.sign(Self.content, by: ec),
            reorderAttributes: true,
            in: directory
        )
        #expect(ours(reordered).failure?.code == .signatureInvalid, "\(ours(reordered))")
        #expect(try !fixtures.opensslVerifies(reordered, content: Self.content).succeeded)
        #expect(try pyhanko(reordered) != "VALID")
    }

    @Test("Zero padding after the ContentInfo is allowed (PDF /Contents); other trailing bytes are refused")
    func trailingBytes() throws {
        let der = try fixtures.sign(Self.content, by: ec)
        let ber = try CMSInteropFixtures.reencodeBER(der, in: directory)
        for padded in [der + [UInt8](repeating: 0, count: 4096), ber + [0, 0, 0]] {
            let result = ours(padded)
            #expect(result.isValid, "\(result)")
            #expect(try fixtures.opensslVerifies(padded, content: Self.content).succeeded)
            #expect(try pyhanko(padded) == "VALID")
        }
        // openssl's decoder stops at the end of the ContentInfo and ignores what follows, and pyHanko
        // (asn1crypto, strict=False) does too; we refuse: bytes outside the signature are not signed
        // and the file is not what it claims to be.
        for junk in [der + Array("junk".utf8), der + [0, 0, 1], ber + [0x30, 0x00]] {
            let result = ours(junk)
            #expect(result.failure?.code == .malformed, "\(result)")
            #expect(result.failure?.reason.contains("zero padding") == true, "\(result)")
            #expect(try fixtures.opensslVerifies(junk, content: Self.content).succeeded)
            #expect(try pyhanko(junk) == "VALID")
        }
    }

    @Test("Ed25519 and Ed448 (RFC 8419: pure EdDSA over the DER signed attributes; SHAKE256 for Ed448) verify")
    mutating func edDSA() throws {
        let ed25519 = try fixtures.issue("interop-ed25519", key: ["-algorithm", "ED25519"])
        let ed448 = try fixtures.issue("interop-ed448", key: ["-algorithm", "ED448"])
        for (signer, mode) in [(ed25519, "ed25519"), (ed448, "ed448"), (ed448, "ed448-shake256")] {
            let signature = try build(mode, by: signer)
            let result = ours(signature)
            #expect(result.isValid, "\(mode): \(result)")
            #expect(result.chainChecked)
            #expect(result.signerCertificate == signer.certificate)
            #expect(result.format == .cadesBES)

            // OpenSSL 3.0's CMS code hands the digest to EdDSA, which refuses it.
            let openssl = try fixtures.opensslVerifies(signature, content: Self.content)
            #expect(!openssl.succeeded)
            #expect(openssl.errorOutput.contains("invalid digest"), "\(openssl.errorOutput)")

            var altered = signature
            altered[altered.count - 1] ^= 0x01  // the signature value is the last element
            #expect(ours(altered).failure?.code == .signatureInvalid, "\(mode): \(ours(altered))")
            #expect(try pyhanko(altered) != "VALID")
            #expect(ours(signature, content: Self.content + [0x0A]).failure?.code == .contentChanged)
        }
        // Without signed attributes the value signs the content itself, which this verifier does not
        // check: unsupportedAlgorithm, never "altered" or "changed". Neither openssl nor pyHanko (it
        // takes the value for one over the content's digest) verifies it either.
        let direct = try build("ed25519-content", by: ed25519)
        #expect(ours(direct).failure?.code == .unsupportedAlgorithm, "\(ours(direct))")
        #expect(try !fixtures.opensslVerifies(direct, content: Self.content).succeeded)
        #expect(try pyhanko(direct) == "intact=False valid=False trusted=False")
        #expect(try pyhanko(try build("ed25519", by: ed25519)) == "VALID")
        #expect(try pyhanko(try build("ed448-shake256", by: ed448)) == "VALID")
        // pyHanko accepts Ed448 only with SHAKE256 (what RFC 8419 prescribes for it): with SHA-512 the
        // signature is intact and valid, but its algorithm policy refuses the pair (not trusted). Our
        // policy allows any digest it does not refuse, SHA-512 included.
        let ed448SHA512 = try pyhanko(try build("ed448", by: ed448))
        #expect(ed448SHA512 == "intact=True valid=True trusted=False", "\(ed448SHA512)")
    }

    @Test("A signature algorithm hashing with another digest than digestAlgorithm is algorithmMismatch")
    func mixedHashes() throws {
        let control = try build("matched-rsa", by: rsa)
        #expect(ours(control).isValid, "\(ours(control))")
        #expect(try fixtures.opensslVerifies(control, content: Self.content).succeeded)
        #expect(try pyhanko(control) == "VALID")

        for (mode, signer, opensslAccepts) in [
            ("mixed-rsa", rsa, true), ("mixed-ecdsa", ec, true), ("mixed-pss", rsa, false),
        ] {
            let signature = try build(mode, by: signer)
            let result = ours(signature)
            #expect(result.failure?.code == .algorithmMismatch, "\(mode): \(result)")
            #expect(result.failure?.reason.contains("SHA512") == true, "\(mode): \(result)")
            #expect(result.failure?.reason.contains("SHA256") == true, "\(mode): \(result)")
            #expect(try pyhanko(signature) != "VALID", "\(mode)")
            // OpenSSL hashes with digestAlgorithm and ignores the hash a PKCS#1 v1.5 or ECDSA
            // algorithm names, so it accepts those; for PSS it compares them ("digest does not match").
            #expect(
                try fixtures.opensslVerifies(signature, content: Self.content).succeeded == opensslAccepts,
                "\(mode)"
            )
        }
    }

    @Test("A signature algorithm OpenSSL does not know is unsupportedAlgorithm, not altered")
    func unknownSignatureAlgorithm() throws {
        let signature = try build("unknown-algorithm", by: rsa)
        let result = ours(signature)
        #expect(result.failure?.code == .unsupportedAlgorithm, "\(result)")
        #expect(result.failure?.reason.contains("1.2.3.4.5") == true, "\(result)")
        #expect(try !fixtures.opensslVerifies(signature, content: Self.content).succeeded)
        #expect(try pyhanko(signature) != "VALID")
    }
}
