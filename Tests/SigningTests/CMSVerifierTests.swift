import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

@Suite("CMSVerifier: what it accepts, and each reason it rejects")
struct CMSVerifierTests {
    let fixture: Fixture
    init() throws { fixture = try Fixture(sharedBy: .signingSuites) }

    static let content = Array("Номер: 1; ПланированиеБюджета\n".utf8) + [UInt8](repeating: 0xA5, count: 4096)
    var anchors: [Certificate] { [fixture.pki.root.certificate] }

    @Test("Our signatures verify with signer, signing time, digest, format and chain")
    func accepts() async throws {
        let time = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down) - 60)
        for identity in [fixture.rsa, fixture.ec] {
            for (format, detached, digest) in [
                (SignatureFormat.cadesBES, true, DigestAlgorithm.sha256), (.cms, false, .sha384),
                (.cadesBES, false, .sha512),
            ] {
                let signature = try await CMSSigner.sign(
                    content: Self.content,
                    identity: identity,
                    format: format,
                    detached: detached,
                    digestAlgorithm: digest,
                    signingTime: time
                )
                let result = CMSVerifier.verify(
                    signature: signature,
                    content: detached ? Self.content : nil,
                    trustAnchors: anchors
                )
                #expect(result.isValid, "\(result)")
                #expect(result.signerCertificate == identity.certificate)
                #expect(result.signingTime == time)
                #expect(result.digestAlgorithm == digest)
                #expect(result.format == format)
                #expect(result.isDetached == detached)
                #expect(result.chainChecked)
                #expect(result.chain == [identity.certificate, fixture.pki.root.certificate])
                #expect(result.embeddedContent == (detached ? nil : Self.content))
            }
        }
    }

    @Test("Without trust anchors only the signature is checked, and the result says so")
    func noAnchors() async throws {
        let signature = try await CMSSigner.sign(content: Self.content, identity: fixture.ec)
        let result = CMSVerifier.verify(signature: signature, content: Self.content, trustAnchors: [])
        #expect(result.isValid)
        #expect(!result.chainChecked)
        #expect(result.chain.first == fixture.ec.certificate)
        #expect(
            result.description.hasPrefix(
                "INDETERMINATE: NO_CERTIFICATE_CHAIN_FOUND — the signer's chain was not checked"
            ),
            "\(result.description)"
        )
    }

    @Test("Signatures made by openssl cms -sign verify", arguments: ["detached", "attached", "cades-sha384", "keyid"])
    func opensslSignatures(variant: String) async throws {
        let directory = try TemporaryDirectory(prefix: "signing-openssl")
        let identity = fixture.rsa
        let key = try #require(identity.key as? LocalSigningKey)
        let document = try directory.write("doc.bin", Self.content)
        let signerPath = try directory.write("signer.pem", text: identity.certificate.pemRepresentation)
        let keyPath = try directory.write("key.pem", text: try key.pemRepresentation(password: nil))
        let chainPath = try directory.write("chain.pem", text: fixture.pki.root.certificate.pemRepresentation)
        var arguments = [
            "cms", "-sign", "-binary", "-in", document, "-signer", signerPath, "-inkey", keyPath, "-certfile",
            chainPath,
            "-outform", "DER", "-out", directory.path("doc.p7s"),
        ]
        switch variant {
        case "attached": arguments.append("-nodetach")
        case "cades-sha384": arguments += ["-cades", "-md", "sha384"]
        case "keyid": arguments.append("-keyid")
        default: break
        }
        let made = try ExternalTool.run("openssl", arguments)
        try #require(made.succeeded, "\(made.errorOutput)")
        let signature = try directory.read("doc.p7s")
        let result = CMSVerifier.verify(
            signature: signature,
            content: variant == "attached" ? nil : Self.content,
            trustAnchors: anchors
        )
        #expect(result.isValid, "\(result)")
        #expect(result.signerCertificate == identity.certificate)
        #expect(result.signingTime != nil)
        #expect(result.format == (variant == "cades-sha384" ? .cadesBES : .cms))
        #expect(result.digestAlgorithm == (variant == "cades-sha384" ? .sha384 : .sha256))
        // PEM form too.
        let pem = try ExternalTool.run(
            "openssl",
            ["cms", "-cmsout", "-inform", "DER", "-in", directory.path("doc.p7s"), "-outform", "PEM"]
        )
        let fromPEM = CMSVerifier.verify(
            signature: Array(pem.standardOutput),
            content: variant == "attached" ? nil : Self.content,
            trustAnchors: anchors
        )
        #expect(fromPEM.isValid, "\(fromPEM)")
    }

    @Test("Changed content is rejected as contentChanged")
    func contentChanged() async throws {
        for detached in [true, false] {
            let signature = try await CMSSigner.sign(content: Self.content, identity: fixture.rsa, detached: detached)
            var changed = Self.content
            changed[10] ^= 1
            let result = CMSVerifier.verify(signature: signature, content: changed, trustAnchors: anchors)
            #expect(result.failure?.code == .contentChanged, "\(result)")
            #expect(result.signerCertificate == fixture.rsa.certificate)
        }
        // The embedded content of an attached signature altered in place.
        var attached = try await CMSSigner.sign(content: Self.content, identity: fixture.rsa, detached: false)
        let marker = Array("ПланированиеБюджета".utf8)
        let index = try #require(attached.firstRange(of: marker)).lowerBound
        attached[index] ^= 0x01
        #expect(
            CMSVerifier.verify(signature: attached, content: nil, trustAnchors: anchors).failure?.code
                == .contentChanged
        )
    }

    @Test("A detached signature without content is contentMissing")
    func contentMissing() async throws {
        let signature = try await CMSSigner.sign(content: Self.content, identity: fixture.rsa)
        #expect(
            CMSVerifier.verify(signature: signature, content: nil, trustAnchors: anchors).failure?.code
                == .contentMissing
        )
    }

    @Test("A wrong trust anchor is untrustedSigner")
    func wrongAnchor() async throws {
        let other = try TestPKI(rootSubject: "CN=Other Root")
        let signature = try await CMSSigner.sign(content: Self.content, identity: fixture.ec)
        let result = CMSVerifier.verify(
            signature: signature,
            content: Self.content,
            trustAnchors: [other.root.certificate]
        )
        #expect(result.failure?.code == .untrustedSigner, "\(result)")
        #expect(!result.chainChecked)
        #expect(result.signerCertificate == fixture.ec.certificate)
    }

    @Test(
        "A signer expired at the validation time is signerExpired, whatever signingTime claims; an audit at a past time accepts it"
    )
    func expired() async throws {
        let now = Date()
        let pki = try TestPKI(
            rootSubject: "CN=Old Root",
            validity: now.addingTimeInterval(-365 * 86_400)...now.addingTimeInterval(365 * 86_400)
        )
        let anchors = [pki.root.certificate]
        let past = now.addingTimeInterval(-30 * 86_400)...now.addingTimeInterval(-86_400)
        let expired = try pki.issueLeaf(subject: "CN=Expired Signer", keyType: .p256, validity: past)
        let late = try await CMSSigner.sign(content: Self.content, identity: expired, signingTime: now)
        let rejected = CMSVerifier.verify(signature: late, content: Self.content, trustAnchors: anchors)
        #expect(rejected.failure?.code == .signerExpired, "\(rejected)")
        // Without anchors the validity period is still checked.
        #expect(
            CMSVerifier.verify(signature: late, content: Self.content, trustAnchors: []).failure?.code == .signerExpired
        )
        // A signingTime inside the validity is only a claim: still expired now (finding 1).
        let claimed = now.addingTimeInterval(-10 * 86_400)
        let inTime = try await CMSSigner.sign(content: Self.content, identity: expired, signingTime: claimed)
        let stillRejected = CMSVerifier.verify(signature: inTime, content: Self.content, trustAnchors: anchors)
        #expect(stillRejected.failure?.code == .signerExpired, "\(stillRejected)")
        #expect(stillRejected.signingTime == Date(timeIntervalSince1970: claimed.timeIntervalSince1970.rounded(.down)))
        // An audit at a time the certificate was valid accepts it, and says when it checked.
        let auditTime = now.addingTimeInterval(-5 * 86_400)
        let audited = CMSVerifier.verify(
            signature: inTime,
            content: Self.content,
            trustAnchors: anchors,
            policy: ValidationPolicy(validationTime: auditTime)
        )
        #expect(audited.isValid, "\(audited)")
        #expect(audited.validationTime == auditTime)
        #expect(audited.signers.first?.checkedAt == auditTime)
    }

    @Test("Truncated and garbage files are malformed")
    func malformed() async throws {
        let signature = try await CMSSigner.sign(content: Self.content, identity: fixture.rsa)
        for bad in [
            Array(signature.prefix(signature.count / 2)), Array(signature.dropLast()),
            [UInt8](repeating: 0x42, count: 300),
            // Zero padding after the signature is allowed (CMSInteropReadingTests); other bytes are not.
            [], Array("-----BEGIN CMS-----\nAAAA\n-----END CMS-----\n".utf8), signature + [0, 1],
        ] {
            let result = CMSVerifier.verify(signature: bad, content: Self.content, trustAnchors: anchors)
            #expect(result.failure?.code == .malformed, "\(bad.count) bytes: \(result)")
            #expect(result.signerCertificate == nil)
        }
    }

    @Test("An altered signature value is signatureInvalid")
    func signatureAltered() async throws {
        var signature = try await CMSSigner.sign(content: Self.content, identity: fixture.rsa, format: .cms)
        // The RSA signature value is the last 256 bytes of the DER.
        signature[signature.count - 10] ^= 0x55
        let result = CMSVerifier.verify(signature: signature, content: Self.content, trustAnchors: anchors)
        #expect(result.failure?.code == .signatureInvalid, "\(result)")
    }

    @Test("A certificate swapped into a CAdES signature is certificateSwapped")
    func swapped() async throws {
        // Two certificates for one key, same issuer, same length: the attacker's replacement keeps the
        // signature value valid, only ESS signing-certificate-v2 tells them apart.
        let key = try LocalSigningKey(generating: .p256)
        let original = try fixture.pki.issueCertificate(subject: "CN=Swap Victim", publicKey: key)
        let replacement = try fixture.pki.issueCertificate(subject: "CN=Swap Victim", publicKey: key)
        try #require(original.derRepresentation.count == replacement.derRepresentation.count)
        let identity = SigningIdentity(certificate: original, chain: [fixture.pki.root.certificate], key: key)
        var signature = try await CMSSigner.sign(content: Self.content, identity: identity, format: .cadesBES)
        let certificateRange = try #require(signature.firstRange(of: original.derRepresentation))
        signature.replaceSubrange(certificateRange, with: replacement.derRepresentation)
        // The SignerInfo's issuerAndSerialNumber comes before the signed attributes.
        let serial = Self.serialBytes(original)
        let newSerial = Self.serialBytes(replacement)
        let serialRange = try #require(signature.firstRange(of: serial))
        signature.replaceSubrange(serialRange, with: newSerial)

        let result = CMSVerifier.verify(signature: signature, content: Self.content, trustAnchors: anchors)
        #expect(result.failure?.code == .certificateSwapped, "\(result)")
        #expect(result.signerCertificate == replacement)
        // openssl agrees.
        let tool = try OpenSSLCLI.verify(
            signature: signature,
            content: Self.content,
            detached: true,
            root: fixture.pki.root.certificate,
            cades: true
        )
        #expect(!tool.succeeded)
    }

    @Test("A signature without the signer's certificate is signerCertificateMissing")
    func signerMissing() async throws {
        let directory = try TemporaryDirectory(prefix: "signing-nocerts")
        let key = try #require(fixture.ec.key as? LocalSigningKey)
        let document = try directory.write("doc.bin", Self.content)
        let made = try ExternalTool.run(
            "openssl",
            [
                "cms", "-sign", "-binary", "-nocerts", "-in", document,
                "-signer", try directory.write("s.pem", text: fixture.ec.certificate.pemRepresentation),
                "-inkey", try directory.write("k.pem", text: try key.pemRepresentation(password: nil)),
                "-outform", "DER", "-out", directory.path("doc.p7s"),
            ]
        )
        try #require(made.succeeded, "\(made.errorOutput)")
        let result = CMSVerifier.verify(
            signature: try directory.read("doc.p7s"),
            content: Self.content,
            trustAnchors: anchors
        )
        #expect(result.failure?.code == .signerCertificateMissing, "\(result)")
    }

    @Test("Files verify by streaming; a changed file is contentChanged")
    func fileContent() async throws {
        let directory = try TemporaryDirectory(prefix: "signing-verify-file")
        let path = try directory.write("doc.bin", Self.content)
        let signature = try await CMSSigner.sign(content: Self.content, identity: fixture.ec)
        #expect(
            try CMSVerifier.verify(
                signature: signature,
                contentFileAt: URL(fileURLWithPath: path),
                trustAnchors: anchors
            ).isValid
        )
        try directory.write("doc.bin", Self.content + [1])
        #expect(
            try CMSVerifier.verify(
                signature: signature,
                contentFileAt: URL(fileURLWithPath: path),
                trustAnchors: anchors
            ).failure?.code == .contentChanged
        )
        #expect(throws: CertificateProviderError(.fileSystem, "")) {
            _ = try CMSVerifier.verify(
                signature: signature,
                contentFileAt: URL(fileURLWithPath: directory.path("missing")),
                trustAnchors: anchors
            )
        }
    }

    static func serialBytes(_ certificate: Certificate) -> [UInt8] {
        var hex = certificate.serialNumber
        if hex.count % 2 == 1 { hex = "0" + hex }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
