import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

/// Who may sign a CRL: the certificate's issuer, or, for an indirect CRL, the cRLIssuer its CRL
/// distribution point names; judged beside `openssl verify -crl_check_all -extended_crl`.
@Suite("CRL issuers: the issuer's key, or an indirect CRL's named cRLIssuer")
struct IndirectCRLTests {
    /// Prints the hex DER of a CRLDistributionPoints extension value naming argv[1] (a URI) with
    /// the cRLIssuer of the certificate argv[2].
    static let distributionPoint = """
        import sys
        from cryptography import x509
        issuer = x509.load_pem_x509_certificate(open(sys.argv[2], 'rb').read())
        point = x509.DistributionPoint(full_name=[x509.UniformResourceIdentifier(sys.argv[1])], relative_name=None,
                                       reasons=None, crl_issuer=[x509.DirectoryName(issuer.subject)])
        print(x509.CRLDistributionPoints([point]).public_bytes().hex())
        """

    /// Writes argv[5]: an indirect CRL (critical issuingDistributionPoint indirectCRL) signed by
    /// the CA of argv[1] / argv[2], listing serial argv[4] (hex) of the CA certificate argv[3]
    /// (certificateIssuer entry extension).
    static let indirectCRL = """
        import sys, datetime
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        signer = x509.load_pem_x509_certificate(open(sys.argv[1], 'rb').read())
        key = serialization.load_pem_private_key(open(sys.argv[2], 'rb').read(), None)
        ca = x509.load_pem_x509_certificate(open(sys.argv[3], 'rb').read())
        now = datetime.datetime.now(datetime.timezone.utc)
        entry = (x509.RevokedCertificateBuilder().serial_number(int(sys.argv[4], 16))
                 .revocation_date(now - datetime.timedelta(hours=1))
                 .add_extension(x509.CertificateIssuer([x509.DirectoryName(ca.subject)]), critical=True).build())
        point = x509.IssuingDistributionPoint(full_name=None, relative_name=None, only_contains_user_certs=False,
                                              only_contains_ca_certs=False, only_some_reasons=None, indirect_crl=True,
                                              only_contains_attribute_certs=False)
        crl = (x509.CertificateRevocationListBuilder().issuer_name(signer.subject)
               .last_update(now - datetime.timedelta(minutes=5)).next_update(now + datetime.timedelta(days=1))
               .add_extension(point, critical=True).add_extension(x509.CRLNumber(1), critical=False)
               .add_revoked_certificate(entry).sign(key, hashes.SHA256()))
        open(sys.argv[5], 'wb').write(crl.public_bytes(serialization.Encoding.PEM))
        """

    @Test("an indirect CRL from the cRLIssuer the signer's distribution point names revokes it; openssl agrees")
    func indirectCRL() async throws {
        let fixture = try ThreeLevelPKI()
        let crlIssuer = try fixture.pki.issueLeaf(
            subject: "CN=Path CRL Issuer,O=swift-certificate-providers",
            extensions: [("basicConstraints", "critical,CA:FALSE"), ("keyUsage", "critical,cRLSign")]
        )
        let crlIssuerFiles = try writePEM(crlIssuer, in: fixture.directory, name: "crl-issuer")
        let point = try ExternalTool.run(
            "python3",
            ["-c", Self.distributionPoint, "http://127.0.0.1:1/indirect.crl", crlIssuerFiles.certificate]
        )
        try #require(point.succeeded, "\(point.errorOutput)")
        let hex = point.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let signer = try fixture.pki.issueLeaf(
            subject: "CN=Indirect Signer",
            issuer: fixture.intermediate,
            extensions: [
                ("keyUsage", "critical,digitalSignature,nonRepudiation"), ("crlDistributionPoints", "DER:\(hex)"),
            ]
        )
        let signerPath = try fixture.directory.write("indirect-signer.pem", text: signer.certificate.pemRepresentation)
        let indirect = fixture.directory.path("indirect.crl")
        let made = try ExternalTool.run(
            "python3",
            [
                "-c", Self.indirectCRL, crlIssuerFiles.certificate, crlIssuerFiles.key,
                fixture.issuing.certificatePath, signer.certificate.serialNumber, indirect,
            ]
        )
        try #require(made.succeeded, "\(made.errorOutput)")
        let rootCRL = try fixture.root.makeCRL("root.crl")
        // The CRL issuer's certificate travels in the signature, beside the chain.
        let identity = SigningIdentity(
            certificate: signer.certificate,
            chain: signer.chain + [crlIssuer.certificate],
            key: signer.key
        )
        var policy = ValidationPolicy()
        policy.crls = try [rootCRL, indirect].map { Array(try Data(contentsOf: URL(fileURLWithPath: $0))) }
        let signature = try await CMSSigner.sign(content: fixture.document, identity: identity)
        let result = CMSVerifier.verify(
            signature: signature,
            content: fixture.document,
            trustAnchors: [fixture.pki.root.certificate],
            policy: policy
        )
        #expect(result.failure?.code == .signerRevoked, "\(String(describing: result.failure))")
        #expect(result.signers.first?.revocation?.certificates.map(\.status.state) == [.revoked, .good])
        let openssl = try ExternalTool.run(
            "openssl",
            [
                "verify", "-crl_check_all", "-extended_crl", "-CAfile", fixture.root.certificatePath, "-untrusted",
                fixture.issuing.certificatePath, "-untrusted", crlIssuerFiles.certificate, "-CRLfile", rootCRL,
                "-CRLfile", indirect, signerPath,
            ]
        )
        #expect((openssl.output + openssl.errorOutput).contains("certificate revoked"), "\(openssl.errorOutput)")

        // A signer whose certificate names no distribution point with that cRLIssuer is out of the
        // CRL's scope, even listed in it: no answer, as openssl says.
        let unnamed = fixture.directory.path("indirect-unnamed.crl")
        let listed = try ExternalTool.run(
            "python3",
            [
                "-c", Self.indirectCRL, crlIssuerFiles.certificate, crlIssuerFiles.key,
                fixture.issuing.certificatePath, fixture.signer.certificate.serialNumber, unnamed,
            ]
        )
        try #require(listed.succeeded, "\(listed.errorOutput)")
        let plain = SigningIdentity(
            certificate: fixture.signer.certificate,
            chain: fixture.signer.chain + [crlIssuer.certificate],
            key: fixture.signer.key
        )
        policy.crls = try [rootCRL, unnamed].map { Array(try Data(contentsOf: URL(fileURLWithPath: $0))) }
        let outOfReach = CMSVerifier.verify(
            signature: try await CMSSigner.sign(content: fixture.document, identity: plain),
            content: fixture.document,
            trustAnchors: [fixture.pki.root.certificate],
            policy: policy
        )
        // Listed, but by a CRL out of its scope: not used, even to revoke.
        #expect(outOfReach.failure?.code == .revocationUnknown, "\(String(describing: outOfReach.failure))")
        #expect(outOfReach.failure?.reason.contains("different CRL scope") == true)
        let refused = try ExternalTool.run(
            "openssl",
            [
                "verify", "-crl_check_all", "-extended_crl", "-CAfile", fixture.root.certificatePath, "-untrusted",
                fixture.issuing.certificatePath, "-untrusted", crlIssuerFiles.certificate, "-CRLfile", rootCRL,
                "-CRLfile", unnamed, fixture.signerPath,
            ]
        )
        #expect(
            (refused.output + refused.errorOutput).contains("different CRL scope"),
            "\(refused.errorOutput)"
        )
    }

    @Test("a CRL in the issuer's name signed by another key is not used: unknown; openssl refuses it too")
    func forgedIssuer() async throws {
        let fixture = try ThreeLevelPKI()
        let impostor = try TestPKI(rootSubject: "CN=Path Intermediate,O=swift-certificate-providers")
        let forged = try OpenSSLCRLIssuer(impostor.root, name: "impostor", in: fixture.directory)
        let rootCRL = try fixture.root.makeCRL("root.crl")
        let fake = try forged.makeCRL("forged.crl")
        let result = try await fixture.verify(crls: [rootCRL, fake])
        #expect(result.failure?.code == .revocationUnknown, "\(String(describing: result.failure))")
        #expect(result.signers.first?.revocation?.certificates.map(\.status.state) == [.unknown, .good])
        let openssl = try fixture.openSSLVerdict(crls: [rootCRL, fake])
        #expect(!openssl.contains("signer.pem: OK"), "\(openssl)")
        let reason = result.signers.first?.revocation?.certificates.first?.status.source ?? ""
        #expect(reason.contains("CRL signature failure"), "\(reason)")
        #expect(openssl.contains("CRL signature failure"), "\(openssl)")
    }
}
