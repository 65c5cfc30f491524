import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Each attack that made `CMSVerifier` answer VALID where `openssl cms -verify`
/// and ETSI validators answer no, built with the openssl command line, and the model that refuses it.
@Suite("Validation model: validation time, algorithms, key usage, attached content, ESS, every signer, offline")
struct ValidationModelTests {
    let fixture: Fixture
    init() throws { fixture = try Fixture(sharedBy: .signingSuites) }

    static let content = Array("Номер: 1; ПланированиеБюджета — validation\n".utf8)
    var anchors: [Certificate] { [fixture.pki.root.certificate] }

    static func utc(_ text: String) throws -> Date { try #require(ISO8601DateFormatter().date(from: text)) }

    // MARK: Finding 1

    @Test(
        "Finding 1: a certificate that expired in 2021 with a backdated signingTime of 2020-06-01 is signerExpired, as openssl says"
    )
    func backdatedSigningTime() async throws {
        let pki = try TestPKI(
            rootSubject: "CN=Backdating Root",
            validity: try Self.utc("2019-01-01T00:00:00Z")...Date().addingTimeInterval(365 * 86_400)
        )
        let expired = try pki.issueLeaf(
            subject: "CN=Expired In 2021",
            keyType: .p256,
            validity: try Self.utc("2019-06-01T00:00:00Z")...Self.utc("2021-06-01T00:00:00Z")
        )
        let claimed = try Self.utc("2020-06-01T00:00:00Z")
        let signature = try await CMSSigner.sign(content: Self.content, identity: expired, signingTime: claimed)

        let result = CMSVerifier.verify(
            signature: signature,
            content: Self.content,
            trustAnchors: [pki.root.certificate]
        )
        #expect(result.failure?.code == .signerExpired, "\(result)")
        #expect(result.signingTime == claimed, "the claim is still reported")
        #expect(result.failure?.reason.contains("claimed signing time proves nothing") == true)
        // The oracle agrees.
        let tools = try OpenSSLFixtures(pki: pki)
        let oracle = try tools.opensslVerifies(signature, content: Self.content)
        #expect(!oracle.succeeded)
        #expect(oracle.errorOutput.contains("certificate has expired"), "\(oracle.errorOutput)")
        // An audit at a time inside the validity (the CLI's --at) accepts it.
        let audit = CMSVerifier.verify(
            signature: signature,
            content: Self.content,
            trustAnchors: [pki.root.certificate],
            policy: ValidationPolicy(validationTime: try Self.utc("2020-06-02T00:00:00Z"))
        )
        #expect(audit.isValid, "\(audit)")
        #expect(audit.signers.first?.checkedAt == (try Self.utc("2020-06-02T00:00:00Z")))
    }

    // MARK: Finding 2

    @Test(
        "Finding 2: MD5 and SHA-1 message digests are weakAlgorithm, named; the permissive policy reads them",
        arguments: ["md5", "sha1"]
    )
    func weakDigests(digest: String) async throws {
        var tools = try OpenSSLFixtures(pki: fixture.pki)
        let signer = try tools.issue("Weak Digest", key: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        for cades in [false, true] {
            let signature = try tools.sign(
                Self.content,
                by: signer,
                extra: ["-md", digest] + (cades ? ["-cades"] : [])
            )
            let result = CMSVerifier.verify(signature: signature, content: Self.content, trustAnchors: anchors)
            #expect(result.failure?.code == .weakAlgorithm, "\(result)")
            #expect(result.failure?.reason.contains(digest.uppercased()) == true, "\(result)")
            #expect(result.signers.first?.digestAlgorithmName == digest)
            #expect(result.digestAlgorithm == nil)
            let archive = CMSVerifier.verify(
                signature: signature,
                content: Self.content,
                trustAnchors: anchors,
                policy: ValidationPolicy(algorithms: .permissive)
            )
            #expect(archive.isValid, "\(archive)")
        }
    }

    @Test("Finding 2: RSA under 2048 bits, EC under 256 bits and a SHA-1-signed certificate are weakAlgorithm")
    func weakKeys() async throws {
        var tools = try OpenSSLFixtures(pki: fixture.pki)
        let rsa1024 = try tools.issue("RSA 1024", key: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"])
        let p224 = try tools.issue("EC P-224", key: ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-224"])
        let sha1Certificate = try tools.issue("SHA-1 Certificate", certificateDigest: "sha1")
        for (signer, word) in [(rsa1024, "1024 bits"), (p224, "224 bits"), (sha1Certificate, "SHA1")] {
            let signature = try tools.sign(Self.content, by: signer)
            let result = CMSVerifier.verify(signature: signature, content: Self.content, trustAnchors: anchors)
            #expect(result.failure?.code == .weakAlgorithm, "\(signer.certificate.subject): \(result)")
            #expect(result.failure?.reason.contains(word) == true, "\(result)")
            #expect(
                CMSVerifier.verify(
                    signature: signature,
                    content: Self.content,
                    trustAnchors: anchors,
                    policy: ValidationPolicy(algorithms: .permissive)
                ).isValid
            )
        }
    }

    @Test("RSASSA-PSS signatures are judged by the hash in their parameters: SHA-256 accepted, SHA-1 refused")
    func pss() async throws {
        var tools = try OpenSSLFixtures(pki: fixture.pki)
        let signer = try tools.issue("PSS Signer", key: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        let good = try tools.sign(
            Self.content,
            by: signer,
            extra: ["-keyopt", "rsa_padding_mode:pss", "-md", "sha256"]
        )
        let result = CMSVerifier.verify(signature: good, content: Self.content, trustAnchors: anchors)
        #expect(result.isValid, "\(result)")
        #expect(result.signers.first?.signatureAlgorithmName == "rsassaPss")
        let weak = try tools.sign(Self.content, by: signer, extra: ["-keyopt", "rsa_padding_mode:pss", "-md", "sha1"])
        #expect(
            CMSVerifier.verify(signature: weak, content: Self.content, trustAnchors: anchors).failure?.code
                == .weakAlgorithm
        )
    }

    // MARK: Finding 3

    @Test(
        "Finding 3: a TLS server certificate (keyEncipherment, serverAuth) is certificateNotForSigning, as openssl says"
    )
    func keyUsage() async throws {
        var tools = try OpenSSLFixtures(pki: fixture.pki)
        let server = try tools.issue(
            "tls.example.org",
            key: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
            extensions: [
                "basicConstraints=critical,CA:FALSE", "keyUsage=critical,keyEncipherment",
                "extendedKeyUsage=serverAuth",
            ]
        )
        let signature = try tools.sign(Self.content, by: server)
        let result = CMSVerifier.verify(signature: signature, content: Self.content, trustAnchors: anchors)
        #expect(result.failure?.code == .certificateNotForSigning, "\(result)")
        let oracle = try tools.opensslVerifies(signature, content: Self.content)
        #expect(!oracle.succeeded)
        #expect(oracle.errorOutput.contains("unsuitable certificate purpose"), "\(oracle.errorOutput)")

        // keyUsage allows signing, extendedKeyUsage does not: still not for documents.
        let serverSigning = try tools.issue(
            "sign.tls.example.org",
            extensions: ["keyUsage=critical,digitalSignature", "extendedKeyUsage=serverAuth,clientAuth"]
        )
        let second = CMSVerifier.verify(
            signature: try tools.sign(Self.content, by: serverSigning),
            content: Self.content,
            trustAnchors: anchors
        )
        #expect(second.failure?.code == .certificateNotForSigning, "\(second)")
        #expect(second.failure?.reason.contains("serverAuth") == true)

        // documentSigning, anyExtendedKeyUsage and no extensions at all are fit for signing.
        for (name, extensions) in [
            ("Document Signer", ["keyUsage=critical,nonRepudiation", "extendedKeyUsage=1.3.6.1.5.5.7.3.36"]),
            ("Any Purpose", ["extendedKeyUsage=anyExtendedKeyUsage"]), ("No Extensions", ["subjectKeyIdentifier=hash"]),
        ] {
            let signer = try tools.issue(name, extensions: extensions)
            let accepted = CMSVerifier.verify(
                signature: try tools.sign(Self.content, by: signer),
                content: Self.content,
                trustAnchors: anchors
            )
            #expect(accepted.isValid, "\(name): \(accepted)")
        }
        // The rule can be switched off explicitly.
        #expect(
            CMSVerifier.verify(
                signature: signature,
                content: Self.content,
                trustAnchors: anchors,
                policy: ValidationPolicy(requiresSigningKeyUsage: false)
            ).isValid
        )
    }

    // MARK: Finding 4

    @Test("Finding 4: the embedded content is what is verified; content given beside it must be byte-identical")
    func attachedContent() async throws {
        let attached = try await CMSSigner.sign(content: Self.content, identity: fixture.rsa, detached: false)
        // The original given beside an attached signature whose embedded copy was changed.
        var tampered = attached
        let marker = Array("ПланированиеБюджета".utf8)
        let index = try #require(tampered.firstRange(of: marker)).lowerBound
        tampered[index] ^= 0x01
        let result = CMSVerifier.verify(signature: tampered, content: Self.content, trustAnchors: anchors)
        #expect(result.failure?.code == .contentChanged, "\(result)")
        #expect(!result.isValid)
        // Intact signature, other content beside it.
        var other = Self.content
        other[0] ^= 0x20
        #expect(
            CMSVerifier.verify(signature: attached, content: other, trustAnchors: anchors).failure?.code
                == .contentChanged
        )
        // The same through a file, and the identical content accepted both ways.
        let directory = try TemporaryDirectory(prefix: "signing-attached")
        let same = URL(fileURLWithPath: try directory.write("same.bin", Self.content))
        let different = URL(fileURLWithPath: try directory.write("different.bin", other))
        let longer = URL(fileURLWithPath: try directory.write("longer.bin", Self.content + [0]))
        #expect(try CMSVerifier.verify(signature: attached, contentFileAt: same, trustAnchors: anchors).isValid)
        #expect(
            try CMSVerifier.verify(signature: attached, contentFileAt: different, trustAnchors: anchors).failure?.code
                == .contentChanged
        )
        #expect(
            try CMSVerifier.verify(signature: attached, contentFileAt: longer, trustAnchors: anchors).failure?.code
                == .contentChanged
        )
        #expect(
            try CMSVerifier.verify(signature: tampered, contentFileAt: same, trustAnchors: anchors).failure?.code
                == .contentChanged
        )
        #expect(CMSVerifier.verify(signature: attached, content: Self.content, trustAnchors: anchors).isValid)
    }

    // MARK: Finding 5

    /// A CAdES signature whose signing-certificate-v2 lists `order` (signer, issuer), made by
    /// Python's asn1crypto and cryptography (a third party's encoder and signer).
    func essSignature(order: String, directory: TemporaryDirectory) throws -> [UInt8] {
        let key = try #require(fixture.rsa.key as? LocalSigningKey)
        let script = try directory.write("ess.py", text: Self.essScript)
        let made = try ExternalTool.run(
            "python3",
            [
                script, try directory.write("signer.pem", text: fixture.rsa.certificate.pemRepresentation),
                try directory.write("issuer.pem", text: fixture.pki.root.certificate.pemRepresentation),
                try directory.write("key.pem", text: try key.pemRepresentation(password: nil)),
                try directory.write("doc.bin", Self.content), directory.path("\(order).p7s"), order,
            ]
        )
        try #require(made.succeeded, "\(made.errorOutput)")
        return try directory.read("\(order).p7s")
    }

    @Test(
        "Finding 5: an ESS signing-certificate-v2 that also names the issuer is accepted, as openssl -cades does; a list led by another certificate is certificateSwapped"
    )
    func essListsIssuer() async throws {
        let directory = try TemporaryDirectory(prefix: "signing-ess")
        let signature = try essSignature(order: "signer,issuer", directory: directory)
        let result = CMSVerifier.verify(signature: signature, content: Self.content, trustAnchors: anchors)
        #expect(result.isValid, "\(result)")
        #expect(result.format == .cadesBES)
        // Without trust anchors (the issuer is then not looked for) too.
        #expect(CMSVerifier.verify(signature: signature, content: Self.content, trustAnchors: []).isValid)
        let oracle = try OpenSSLCLI.verify(
            signature: signature,
            content: Self.content,
            detached: true,
            root: fixture.pki.root.certificate,
            cades: true
        )
        #expect(oracle.succeeded, "\(oracle.errorOutput)")

        let issuerFirst = try essSignature(order: "issuer,signer", directory: directory)
        #expect(
            CMSVerifier.verify(signature: issuerFirst, content: Self.content, trustAnchors: anchors).failure?.code
                == .certificateSwapped
        )
    }

    static let essScript = #"""
        import sys, hashlib, datetime
        from asn1crypto import cms, x509, pem, tsp
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, ec

        def certificate(path):
            data = open(path, 'rb').read()
            if pem.detect(data):
                _, _, data = pem.unarmor(data)
            return x509.Certificate.load(data)

        signer, issuer = certificate(sys.argv[1]), certificate(sys.argv[2])
        key = serialization.load_pem_private_key(open(sys.argv[3], 'rb').read(), None)
        content = open(sys.argv[4], 'rb').read()
        named = {'signer': signer, 'issuer': issuer}
        ids = [tsp.ESSCertIDv2({'cert_hash': hashlib.sha256(named[n].dump()).digest()}) for n in sys.argv[6].split(',')]
        attributes = [
            cms.CMSAttribute({'type': 'content_type', 'values': ['data']}),
            cms.CMSAttribute({'type': 'message_digest', 'values': [hashlib.sha256(content).digest()]}),
            cms.CMSAttribute({'type': 'signing_time', 'values': [cms.Time({'utc_time': datetime.datetime.now(datetime.timezone.utc)})]}),
            cms.CMSAttribute({'type': 'signing_certificate_v2', 'values': [tsp.SigningCertificateV2({'certs': ids})]}),
        ]
        attributes.sort(key=lambda a: a.dump())  # DER orders a SET OF by encoding
        signed = cms.CMSAttributes(attributes)
        if isinstance(key, ec.EllipticCurvePrivateKey):
            value, algorithm = key.sign(signed.dump(), ec.ECDSA(hashes.SHA256())), 'sha256_ecdsa'
        else:
            value, algorithm = key.sign(signed.dump(), padding.PKCS1v15(), hashes.SHA256()), 'rsassa_pkcs1v15'
        info = cms.SignerInfo({
            'version': 'v1',
            'sid': cms.SignerIdentifier({'issuer_and_serial_number': cms.IssuerAndSerialNumber(
                {'issuer': signer.issuer, 'serial_number': signer.serial_number})}),
            'digest_algorithm': {'algorithm': 'sha256'},
            'signed_attrs': signed,
            'signature_algorithm': {'algorithm': algorithm},
            'signature': value,
        })
        data = cms.SignedData({
            'version': 'v1',
            'digest_algorithms': [{'algorithm': 'sha256'}],
            'encap_content_info': {'content_type': 'data'},
            'certificates': [signer, issuer],
            'signer_infos': [info],
        })
        open(sys.argv[5], 'wb').write(cms.ContentInfo({'content_type': 'signed_data', 'content': data}).dump())
        """#

    // MARK: Finding 6

    @Test(
        "Finding 6: every SignerInfo is verified, chain-checked and reported; valid only when all are (openssl cms -resign)"
    )
    func everySigner() async throws {
        var tools = try OpenSSLFixtures(pki: fixture.pki)
        // CMS keeps SignerInfos in a DER SET, ordered by encoding: a short ECDSA SignerInfo comes
        // before a long RSA one, so the signers added below as RSA are the second ones.
        let rsa = ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        let first = try tools.issue("First Signer")
        let second = try tools.issue("Second Signer", key: rsa)
        for attached in [false, true] {
            let one = try tools.sign(Self.content, by: first, extra: attached ? ["-nodetach"] : [])
            let both = try tools.resign(one, by: second)
            let content = attached ? nil : Self.content
            let result = CMSVerifier.verify(signature: both, content: content, trustAnchors: anchors)
            #expect(result.isValid, "\(result)")
            #expect(result.signers.map(\.signerCertificate) == [first.certificate, second.certificate])
            #expect(result.signers.allSatisfy { $0.isValid && $0.chainChecked })
            let secondResult = try #require(result.signers.first { $0.signerCertificate == second.certificate })
            #expect(secondResult.chain == [second.certificate, fixture.pki.root.certificate])
            #expect(
                result.signerCertificate == result.signers.first?.signerCertificate,
                "the top level describes the first signer"
            )
            #expect(result.chain == result.signers.first?.chain)
        }

        // A second signer the anchors do not vouch for.
        let otherPKI = try TestPKI(rootSubject: "CN=Other Root")
        var otherTools = try OpenSSLFixtures(pki: otherPKI)
        let stranger = try otherTools.issue("Stranger", key: rsa)
        let mixed = try tools.resign(try tools.sign(Self.content, by: first), by: stranger)
        let result = CMSVerifier.verify(signature: mixed, content: Self.content, trustAnchors: anchors)
        #expect(result.failure?.code == .untrustedSigner, "\(result)")
        #expect(result.failure?.reason.hasPrefix("signer 2 of 2 ('O=Evil Fixtures,CN=Stranger')") == true, "\(result)")
        #expect(result.signers.count == 2)
        // The first signer, the only one checked before, is fine: only checking every signer finds this.
        #expect(result.signers.first?.signerCertificate == first.certificate)
        #expect(result.signers.first?.isValid == true)
        #expect(result.signers.last?.signerCertificate == stranger.certificate)
        #expect(result.signers.last?.failure?.code == .untrustedSigner)

        // A second signer using a weak digest, and one whose certificate is not for signing.
        let weak = try tools.issue("Weak Second", key: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"])
        let weakPair = try tools.resign(try tools.sign(Self.content, by: first), by: weak)
        let weakResult = CMSVerifier.verify(signature: weakPair, content: Self.content, trustAnchors: anchors)
        #expect(weakResult.signers.map { $0.failure?.code } == [nil, .weakAlgorithm], "\(weakResult)")
        #expect(weakResult.failure?.code == .weakAlgorithm)
        let tls = try tools.issue(
            "tls.example.org",
            key: rsa,
            extensions: ["keyUsage=critical,keyEncipherment", "extendedKeyUsage=serverAuth"]
        )
        let withTLS = try tools.resign(try tools.sign(Self.content, by: first), by: tls)
        let tlsResult = CMSVerifier.verify(signature: withTLS, content: Self.content, trustAnchors: [])
        #expect(tlsResult.failure?.code == .certificateNotForSigning, "\(tlsResult)")
        #expect(tlsResult.signers.map { $0.failure?.code } == [nil, .certificateNotForSigning])
    }

    @Test("Asking for revocation never gives a silent VALID: no answer to be had is revocationUnknown")
    func revocationAskedWithoutAnswer() async throws {
        // The TestPKI leaf names no OCSP responder and no CRL distribution point, and no CRL is given.
        let signature = try await CMSSigner.sign(content: Self.content, identity: fixture.ec)
        var policy = ValidationPolicy()
        policy.checkRevocation = true
        let result = CMSVerifier.verify(
            signature: signature,
            content: Self.content,
            trustAnchors: anchors,
            policy: policy
        )
        #expect(result.failure?.code == .revocationUnknown, "\(result)")
        #expect(result.signers.first?.revocation?.state == .unknown)
        #expect(
            CMSVerifier.verify(signature: signature, content: Self.content, trustAnchors: anchors).signers.first?
                .revocation == nil
        )
    }

    // MARK: Offline

    @Test(
        "Verification is offline: certificates naming OCSP, CA issuers and CRL URLs on a loopback listener get no connection"
    )
    func offline() async throws {
        let listener = try LoopbackListener()
        let base = "http://127.0.0.1:\(listener.port)"
        var tools = try OpenSSLFixtures(pki: fixture.pki)
        let network = [
            "authorityInfoAccess=OCSP;URI:\(base)/ocsp,caIssuers;URI:\(base)/ca.crt",
            "crlDistributionPoints=URI:\(base)/ca.crl",
        ]
        let intermediate = try tools.issue(
            "Online Intermediate",
            key: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
            extensions: ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"] + network
        )
        let leaf = try tools.issue(
            "Online Leaf",
            extensions: ["keyUsage=critical,digitalSignature"] + network,
            issuer: intermediate
        )

        let complete = try tools.sign(Self.content, by: leaf, certfile: [intermediate])
        let valid = CMSVerifier.verify(signature: complete, content: Self.content, trustAnchors: anchors)
        #expect(valid.isValid, "\(valid)")
        #expect(valid.chain.count == 3)
        // Without the intermediate a fetching verifier would follow caIssuers; this one reports the gap.
        let noIntermediate = try tools.sign(Self.content, by: leaf)
        let untrusted = CMSVerifier.verify(signature: noIntermediate, content: Self.content, trustAnchors: anchors)
        #expect(untrusted.failure?.code == .untrustedSigner, "\(untrusted)")
        #expect(listener.acceptedConnections() == 0)

        // The listener does see connections (the check above can fail).
        try listener.connectOnce()
        #expect(listener.acceptedConnections() == 1)
    }
}
