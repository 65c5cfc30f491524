import CertificateProviders
import CertificateProvidersTesting
import Foundation
import SignatureJournal
import Signing
import TestSupport
import Testing

/// CMS and CAdES-BES with GOST R 34.10-2012 keys: the digest follows the key, `openssl cms -engine
/// gost -verify` accepts what we make, we accept what it makes, and chains with GOST CAs verify.
@Suite(.enabled(if: GOSTEngine.isAvailable && ExternalTool.isAvailable("openssl"), "needs libengine-gost-openssl"))
struct GOSTSigningTests {
    /// A GOST-512 root, a GOST-256 intermediate, and GOST-256 and -512 leaves under it.
    struct GOSTFixture: Sendable {
        let pki: TestPKI
        let intermediate: TestPKI.Authority
        let leaf256: SigningIdentity
        let leaf512: SigningIdentity
        private init(making: Void) throws {
            pki = try TestPKI(rootSubject: "CN=Корневой УЦ ГОСТ,O=certsign", keyType: .gost512)
            intermediate = try pki.issueIntermediate(
                subject: "CN=Промежуточный УЦ ГОСТ",
                keyType: .gost256(parameterSet: "TCA")
            )
            leaf256 = try pki.issueLeaf(subject: "CN=Иванов 256,O=ООО Ромашка", keyType: .gost256, issuer: intermediate)
            leaf512 = try pki.issueLeaf(
                subject: "CN=Иванов 512,O=ООО Ромашка",
                keyType: .gost512(parameterSet: "C"),
                issuer: intermediate
            )
        }
        func identity(bits: Int) -> SigningIdentity { bits == 256 ? leaf256 : leaf512 }

        private static let shared = Result { try GOSTFixture(making: ()) }
        /// The fixture every test of the suite shares (keys made once per process).
        init() throws { self = try Self.shared.get() }
    }

    let fixture: GOSTFixture
    init() throws { fixture = try GOSTFixture() }

    static let content = Array("Акт сверки № 42".utf8)

    /// `openssl cms -engine gost -verify` against the GOST root.
    static func opensslVerify(
        _ signature: [UInt8],
        content: [UInt8]?,
        root: Certificate,
        cades: Bool
    ) throws -> ExternalTool.Result {
        let directory = try TemporaryDirectory(prefix: "gost-signing")
        var arguments = [
            "cms", "-engine", "gost", "-verify", "-binary", "-inform", "DER", "-in",
            try directory.write("s.p7s", signature),
            "-CAfile", try directory.write("root.pem", text: root.pemRepresentation), "-purpose", "any", "-out",
            "/dev/null",
        ]
        if let content { arguments += ["-content", try directory.write("doc.bin", content)] }
        if cades { arguments.append("-cades") }
        return try ExternalTool.run("openssl", arguments)
    }

    static func print(_ signature: [UInt8]) throws -> String {
        let directory = try TemporaryDirectory(prefix: "gost-signing")
        return try ExternalTool.run(
            "openssl",
            [
                "cms", "-engine", "gost", "-cmsout", "-print", "-inform", "DER",
                "-in", try directory.write("s.p7s", signature),
            ]
        ).output
    }

    @Test(arguments: [256, 512])
    func theDigestFollowsTheKeyAndOpenSSLVerifies(bits: Int) async throws {
        let identity = fixture.identity(bits: bits)
        let root = fixture.pki.root.certificate
        let digestOID = bits == 256 ? "1.2.643.7.1.1.2.2" : "1.2.643.7.1.1.2.3"
        for (format, detached) in [(SignatureFormat.cadesBES, true), (.cadesBES, false), (.cms, true)] {
            let signature = try await CMSSigner.sign(
                content: Self.content,
                identity: identity,
                format: format,
                detached: detached
            )
            let checked = try Self.opensslVerify(
                signature,
                content: detached ? Self.content : nil,
                root: root,
                cades: format == .cadesBES
            )
            #expect(checked.succeeded, "\(format) detached=\(detached): \(checked.errorOutput)")
            let dump = try Self.print(signature)
            #expect(dump.contains(digestOID), "the digest algorithm is Streebog-\(bits)")
            if format == .cadesBES {
                // ESS signing-certificate-v2 hashes the certificate with the same digest.
                let ess = try #require(dump.range(of: "signingCertificateV2"), "no ESS signing-certificate-v2")
                let attribute = dump[ess.upperBound...].prefix(600)
                #expect(attribute.contains("GOST R 34.11-2012 with \(bits) bit hash"), "\(attribute)")
            }
            let ours = CMSVerifier.verify(
                signature: signature,
                content: detached ? Self.content : nil,
                trustAnchors: [root]
            )
            #expect(ours.isValid, "\(ours)")
            #expect(ours.digestAlgorithm == (bits == 256 ? .streebog256 : .streebog512))
            #expect(ours.chain.count == 3)
            let changed = CMSVerifier.verify(signature: signature, content: Self.content + [0x21], trustAnchors: [root])
            #expect(changed.failure?.code == .contentChanged)
        }
    }

    @Test(arguments: [256, 512])
    func aKeyOpenSSLDoesNotHoldSignsTheSameWay(bits: Int) async throws {
        // The external-key path: the key returns a raw GOST signature that goes into the SignerInfo.
        let identity = try Fixture.external(fixture.identity(bits: bits))
        let signature = try await CMSSigner.sign(content: Self.content, identity: identity)
        let checked = try Self.opensslVerify(
            signature,
            content: Self.content,
            root: fixture.pki.root.certificate,
            cades: true
        )
        #expect(checked.succeeded, "\(checked.errorOutput)")
        await #expect(throws: CertificateProviderError(.unsupportedAlgorithm, "")) {
            try await CMSSigner.sign(content: Self.content, identity: identity, digestAlgorithm: .sha256)
        }
    }

    @Test func theCoordinatorSignsFilesWithTheKeysDigest() async throws {
        let directory = try TemporaryDirectory(prefix: "gost-coordinator")
        var registry = ProviderRegistry()
        let provider = InMemoryCertificateProvider(id: .pkcs12, identity: fixture.leaf512)
        try registry.register(.pkcs12, description: "in-memory") { provider }
        let coordinator = SigningCoordinator(
            registry: registry,
            journal: try SignatureJournal(url: directory.url.appendingPathComponent("j.sqlite"))
        )
        let file = URL(fileURLWithPath: try directory.write("doc.bin", Self.content))
        let result = try await coordinator.sign(document: .file(file), provider: .pkcs12)
        #expect(result.record.digestAlgorithm == .streebog512)
        #expect(result.record.documentDigest == DigestAlgorithm.streebog512.hash(Self.content))
        let verified = try await coordinator.verify(
            signature: result.signature,
            content: .file(file),
            trust: [fixture.pki.root.certificate]
        )
        #expect(verified.isValid, "\(verified)")
        // A caller may still ask for a digest; one that does not fit a GOST key is refused.
        await #expect(throws: CertificateProviderError(.unsupportedAlgorithm, "")) {
            try await coordinator.sign(
                document: .file(file),
                provider: .pkcs12,
                options: SigningOptions(digestAlgorithm: .sha512)
            )
        }
    }

    @Test func openSSLMadeGOSTSignaturesVerify() throws {
        let directory = try TemporaryDirectory(prefix: "gost-openssl-cms")
        let identity = fixture.leaf256
        let key = try #require(identity.key as? LocalSigningKey)
        let keyPath = try directory.write("key.pem", text: try key.pemRepresentation(password: nil))
        let certificate = try directory.write("cert.pem", text: identity.certificate.pemRepresentation)
        let chain = try directory.write("chain.pem", text: identity.chain.map(\.pemRepresentation).joined())
        let document = try directory.write("doc.bin", Self.content)
        for (name, extra) in [("cms", ["-noattr"]), ("cades", ["-cades"])] {
            let out = directory.path("\(name).p7s")
            let made = try ExternalTool.run(
                "openssl",
                [
                    "cms", "-engine", "gost", "-sign", "-binary", "-in", document, "-signer", certificate,
                    "-inkey", keyPath, "-certfile", chain, "-outform", "DER", "-out", out,
                ] + extra
            )
            #expect(made.succeeded, "\(made.errorOutput)")
            let signature = try directory.read("\(name).p7s")
            let result = CMSVerifier.verify(
                signature: signature,
                content: Self.content,
                trustAnchors: [fixture.pki.root.certificate]
            )
            #expect(result.isValid, "\(name): \(result)")
            #expect(result.digestAlgorithm == .streebog256)
            #expect(result.format == (name == "cades" ? .cadesBES : .cms))
            #expect(result.signerCertificate?.publicKeyAlgorithm.family == "GOST R 34.10-2012 256")
            var tampered = signature
            tampered[tampered.count - 5] ^= 0x01  // inside the signature value, the last field
            #expect(
                !CMSVerifier.verify(
                    signature: tampered,
                    content: Self.content,
                    trustAnchors: [fixture.pki.root.certificate]
                ).isValid
            )
            // Another GOST root is not trusted.
            let stranger = try TestPKI(rootSubject: "CN=Чужой УЦ", keyType: .gost256)
            #expect(
                CMSVerifier.verify(
                    signature: signature,
                    content: Self.content,
                    trustAnchors: [stranger.root.certificate]
                ).failure?.code == .untrustedSigner
            )
        }
    }
}
