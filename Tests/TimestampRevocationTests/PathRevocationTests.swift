import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

/// A root, an intermediate and a signer under it, as PEM files beside the CRLs `openssl ca` makes
/// for the root and the intermediate.
struct ThreeLevelPKI {
    let directory: TemporaryDirectory
    let pki: TestPKI
    let intermediate: TestPKI.Authority
    let signer: SigningIdentity
    let root: OpenSSLCRLIssuer
    let issuing: OpenSSLCRLIssuer
    let signerPath: String
    let document = Array("Договор поставки № 27\n".utf8)

    init() throws {
        directory = try TemporaryDirectory(prefix: "path-revocation")
        pki = try TestPKI(rootSubject: "CN=Path Root,O=swift-certificate-providers")
        intermediate = try pki.issueIntermediate(subject: "CN=Path Intermediate,O=swift-certificate-providers")
        signer = try pki.issueLeaf(subject: "CN=Path Signer", issuer: intermediate)
        root = try OpenSSLCRLIssuer(pki.root, name: "root", in: directory)
        issuing = try OpenSSLCRLIssuer(intermediate, name: "intermediate", in: directory)
        signerPath = try directory.write("signer.pem", text: signer.certificate.pemRepresentation)
    }

    /// Our verdict with the CRL files `crls` (paths).
    func verify(crls: [String]) async throws -> VerificationResult {
        var policy = ValidationPolicy()
        policy.crls = try crls.map { Array(try Data(contentsOf: URL(fileURLWithPath: $0))) }
        let signature = try await CMSSigner.sign(content: document, identity: signer)
        return CMSVerifier.verify(
            signature: signature,
            content: document,
            trustAnchors: [pki.root.certificate],
            policy: policy
        )
    }

    /// `openssl verify -crl_check_all -extended_crl -use_deltas` of the signer with the same CRLs.
    func openSSLVerdict(crls: [String]) throws -> String {
        let result = try ExternalTool.run(
            "openssl",
            [
                "verify", "-crl_check_all", "-extended_crl", "-use_deltas", "-CAfile", root.certificatePath,
                "-untrusted",
                issuing.certificatePath,
            ]
                + crls.flatMap { ["-CRLfile", $0] } + [signerPath]
        )
        return result.output + result.errorOutput
    }
}

@Suite("Revocation of the whole path (CRLs made by openssl ca, judged beside openssl verify -crl_check_all)")
struct PathRevocationTests {
    func states(_ result: VerificationResult) -> [RevocationStatus.State] {
        result.signers.first?.revocation?.certificates.map(\.status.state) ?? []
    }

    /// Ours and `openssl verify` on the same CRLs: ours `.revocationUnknown` with the per-certificate
    /// `expected` states (signer first) and a reason containing `reason`; openssl saying `openSSL`.
    func expectUnknown(
        _ fixture: ThreeLevelPKI,
        crls: [String],
        states expected: [RevocationStatus.State],
        reason: String,
        openSSL: String
    ) async throws {
        let result = try await fixture.verify(crls: crls)
        #expect(result.failure?.code == .revocationUnknown, "\(String(describing: result.failure))")
        #expect(result.failure?.reason.contains(reason) == true, "\(String(describing: result.failure))")
        #expect(states(result) == expected)
        let verdict = try fixture.openSSLVerdict(crls: crls)
        #expect(verdict.contains(openSSL), "\(verdict)")
    }

    @Test("the root's CRL revoking the intermediate makes the signature INVALID, naming the intermediate")
    func revokedIntermediate() async throws {
        let fixture = try ThreeLevelPKI()
        let revokedAt = Date().addingTimeInterval(-3600).rounded
        let rootCRL = try fixture.root.makeCRL(
            "root-revoking.crl",
            revoked: [(fixture.intermediate.certificate, revokedAt)]
        )
        let intermediateCRL = try fixture.issuing.makeCRL("intermediate.crl")
        let revoked = try await fixture.verify(crls: [rootCRL, intermediateCRL])
        #expect(revoked.failure?.code == .signerRevoked, "\(String(describing: revoked.failure))")
        #expect(revoked.failure?.reason.contains("CN=Path Intermediate") == true)
        #expect(revoked.signers.first?.revocation?.revocationTime == revokedAt)
        #expect(revoked.signers.first?.revocation?.certificates.map(\.role) == [.signer, .signerCA])
        #expect(states(revoked) == [.good, .revoked])
        #expect(try fixture.openSSLVerdict(crls: [rootCRL, intermediateCRL]).contains("certificate revoked"))

        // The same path with a clean root CRL: VALID, both certificates good; openssl agrees.
        let cleanRoot = try fixture.root.makeCRL("root.crl")
        let good = try await fixture.verify(crls: [cleanRoot, intermediateCRL])
        #expect(good.isValid, "\(String(describing: good.failure))")
        #expect(states(good) == [.good, .good])
        #expect(try fixture.openSSLVerdict(crls: [cleanRoot, intermediateCRL]).contains("signer.pem: OK"))

        // Only the root's CRL: the signer has no answer, so revocation is unknown (never VALID).
        try await expectUnknown(
            fixture,
            crls: [cleanRoot],
            states: [.unknown, .good],
            reason: "CN=Path Signer",
            openSSL: "unable to get certificate CRL"
        )
    }

    @Test(
        "a CRL is used only within its issuing distribution point's scope (onlyContainsCACerts, onlyContainsUserCerts, onlySomeReasons)"
    )
    func issuingDistributionPointScope() async throws {
        let fixture = try ThreeLevelPKI()
        let rootCRL = try fixture.root.makeCRL("root.crl")
        let caOnly = try fixture.issuing.makeCRL(
            "intermediate-ca-only.crl",
            extensions: ["issuingDistributionPoint = critical, @idp"],
            sections: "[ idp ]\nonlyCA = TRUE"
        )
        try await expectUnknown(
            fixture,
            crls: [rootCRL, caOnly],
            states: [.unknown, .good],
            reason: "different CRL scope",
            openSSL: "different CRL scope"
        )

        // A root CRL for end-entity certificates only says nothing about the intermediate.
        let userOnly = try fixture.root.makeCRL(
            "root-user-only.crl",
            extensions: ["issuingDistributionPoint = critical, @idp"],
            sections: "[ idp ]\nonlyuser = TRUE"
        )
        let intermediateCRL = try fixture.issuing.makeCRL("intermediate.crl")
        try await expectUnknown(
            fixture,
            crls: [userOnly, intermediateCRL],
            states: [.good, .unknown],
            reason: "CN=Path Intermediate",
            openSSL: "different CRL scope"
        )

        // A CRL for some reasons only does not cover the others: no complete answer.
        let someReasons = try fixture.issuing.makeCRL(
            "intermediate-key-compromise.crl",
            extensions: ["issuingDistributionPoint = critical, @idp"],
            sections: "[ idp ]\nonlysomereasons = keyCompromise"
        )
        try await expectUnknown(
            fixture,
            crls: [rootCRL, someReasons],
            states: [.unknown, .good],
            reason: "unable to get certificate CRL",
            openSSL: "unable to get certificate CRL"
        )
    }

    @Test(
        "a delta CRL counts only beside its base: base + delta revoking the signer is INVALID, the delta alone unknown"
    )
    func deltaCRL() async throws {
        let fixture = try ThreeLevelPKI()
        let rootCRL = try fixture.root.makeCRL("root.crl")
        let base = try fixture.issuing.makeCRL(
            "base.crl",
            number: 1,
            extensions: ["freshestCRL = URI:http://127.0.0.1:1/delta.crl"]
        )
        let revokedAt = Date().addingTimeInterval(-600).rounded
        let delta = try fixture.issuing.makeCRL(
            "delta.crl",
            revoked: [(fixture.signer.certificate, revokedAt)],
            number: 2,
            extensions: ["deltaCRL = critical, ASN1:INTEGER:1"]
        )
        let both = try await fixture.verify(crls: [rootCRL, base, delta])
        #expect(both.failure?.code == .signerRevoked, "\(String(describing: both.failure))")
        #expect(states(both) == [.revoked, .good])
        #expect(try fixture.openSSLVerdict(crls: [rootCRL, base, delta]).contains("certificate revoked"))

        try await expectUnknown(
            fixture,
            crls: [rootCRL, delta],
            states: [.unknown, .good],
            reason: "delta CRL counts only beside its base",
            openSSL: "unable to get certificate CRL"
        )

        let baseOnly = try await fixture.verify(crls: [rootCRL, base])
        #expect(baseOnly.isValid, "\(String(describing: baseOnly.failure))")
        #expect(try fixture.openSSLVerdict(crls: [rootCRL, base]).contains("signer.pem: OK"))
    }

    @Test("a CRL with a critical extension nobody knows (in the CRL or an entry) is unusable: unknown, as openssl says")
    func unknownCriticalExtension() async throws {
        let fixture = try ThreeLevelPKI()
        let rootCRL = try fixture.root.makeCRL("root.crl")
        let strange = try fixture.issuing.makeCRL(
            "strange.crl",
            extensions: ["1.3.6.1.4.1.55555.1 = critical, ASN1:UTF8String:unknown"]
        )
        try await expectUnknown(
            fixture,
            crls: [rootCRL, strange],
            states: [.unknown, .good],
            reason: "unhandled critical CRL extension",
            openSSL: "unhandled critical CRL extension"
        )

        // The same for an unknown critical extension of one entry (another certificate's), made
        // with Python cryptography's CertificateRevocationListBuilder: the whole CRL is unusable.
        let entryCRL = fixture.directory.path("strange-entry.crl")
        let made = try ExternalTool.run(
            "python3",
            [
                "-c", Self.crlWithCriticalEntryExtension, fixture.issuing.certificatePath, fixture.issuing.keyPath,
                entryCRL,
            ]
        )
        try #require(made.succeeded, "\(made.errorOutput)")
        try await expectUnknown(
            fixture,
            crls: [rootCRL, entryCRL],
            states: [.unknown, .good],
            reason: "unhandled critical CRL extension",
            openSSL: "unhandled critical CRL extension"
        )
    }

    /// Writes argv[3]: a PEM CRL signed by the CA of argv[1] / argv[2] listing serial 4242 with a
    /// critical entry extension of a private OID.
    static let crlWithCriticalEntryExtension = """
        import sys, datetime
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        ca = x509.load_pem_x509_certificate(open(sys.argv[1], 'rb').read())
        key = serialization.load_pem_private_key(open(sys.argv[2], 'rb').read(), None)
        now = datetime.datetime.now(datetime.timezone.utc)
        entry = (x509.RevokedCertificateBuilder().serial_number(4242).revocation_date(now - datetime.timedelta(hours=1))
                 .add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier('1.3.6.1.4.1.55555.2'), b'\\x05\\x00'), critical=True)
                 .build())
        crl = (x509.CertificateRevocationListBuilder().issuer_name(ca.subject).last_update(now - datetime.timedelta(minutes=5))
               .next_update(now + datetime.timedelta(days=1)).add_revoked_certificate(entry).sign(key, hashes.SHA256()))
        open(sys.argv[3], 'wb').write(crl.public_bytes(serialization.Encoding.PEM))
        """

    @Test("certsign verify --crl reports every certificate of the path in text and JSON; a revoked CA exits 2")
    func commandLine() async throws {
        let fixture = try ThreeLevelPKI()
        let certsign = try #require(ExternalTool.builtProduct("certsign"))
        let signature = try await CMSSigner.sign(content: fixture.document, identity: fixture.signer)
        let document = try fixture.directory.write("contract.txt", fixture.document)
        let signaturePath = try fixture.directory.write("contract.txt.p7s", signature)
        let rootCRL = try fixture.root.makeCRL(
            "root-revoking.crl",
            revoked: [(fixture.intermediate.certificate, Date().addingTimeInterval(-3600))]
        )
        let intermediateCRL = try fixture.issuing.makeCRL("intermediate.crl")
        let arguments = [
            "verify", signaturePath, "--content", document, "--ca", fixture.root.certificatePath, "--crl", rootCRL,
            "--crl", intermediateCRL,
        ]
        let json = try ExternalTool.run(
            certsign,
            ["--json"] + arguments,
            environment: ["CERTSIGN_HOME": fixture.directory.url.path]
        )
        // A revoked CA and no proof the signature existed before: INDETERMINATE (REVOKED_CA_NO_POE), exit 2.
        #expect(json.status == 2, "\(json.output)\(json.errorOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])
        #expect((object["failure"] as? [String: Any])?["code"] as? String == "signerRevoked")
        #expect(object["indication"] as? String == "INDETERMINATE")
        #expect(object["subIndication"] as? String == "REVOKED_CA_NO_POE")
        let revocation = try #require(
            ((object["signers"] as? [[String: Any]])?.first?["revocation"]) as? [String: Any]
        )
        #expect(revocation["status"] as? String == "revoked")
        let certificates = try #require(revocation["certificates"] as? [[String: Any]])
        #expect(certificates.map { $0["role"] as? String } == ["signer", "signerCA"])
        #expect(certificates.map { $0["status"] as? String } == ["good", "revoked"])
        #expect(certificates.last?["subject"] as? String == fixture.intermediate.certificate.subject)
        #expect(certificates.last?["revocationTime"] != nil)

        let text = try ExternalTool.run(certsign, arguments, environment: ["CERTSIGN_HOME": fixture.directory.url.path])
        #expect(text.status == 2)
        #expect(text.output.hasPrefix("INDETERMINATE: REVOKED_CA_NO_POE — "), "\(text.output)")
        #expect(text.output.contains("revocation:   revoked"), "\(text.output)")
        #expect(
            text.output.contains("signerCA: \(fixture.intermediate.certificate.subject): revoked"),
            "\(text.output)"
        )
        #expect(text.output.contains("signer: CN=Path Signer: good"), "\(text.output)")

        let badAge = try ExternalTool.run(certsign, arguments + ["--revocation-max-age", "soon"])
        #expect(badAge.status == 64, "\(badAge.errorOutput)")
        #expect(badAge.errorOutput.contains("--revocation-max-age"))
    }
}
