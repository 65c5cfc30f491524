import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign sign --level b-lt --crl FILE --ocsp-response FILE`: revocation data an offline signer
/// already holds (fetched beforehand from certomancer with curl and openssl) is embedded, nothing is
/// fetched, and the signature verifies offline.
@Suite(.serialized) struct LongTermOfflineSigningTests {
    /// The first `URI:` of a certificate's CRL distribution points, by openssl.
    static func crlURL(_ certificatePath: String) throws -> String {
        let text = try ExternalTool.run(
            "openssl",
            ["x509", "-in", certificatePath, "-noout", "-ext", "crlDistributionPoints"]
        ).requireSuccess().output
        let line = try #require(text.split(separator: "\n").first { $0.contains("URI:") })
        return String(line.split(separator: "URI:").last ?? "").trimmingCharacters(in: .whitespaces)
    }

    @Test func signBLTEmbedsTheGivenCRLsAndOCSPResponseAndFetchesNothing() throws {
        let setup = try LongTermCommandTests.Setup()
        defer { setup.pki.stop() }
        let directory = setup.fixture.directory
        // What the signer fetched earlier: the intermediate's and the root's CRLs, the signer's OCSP answer.
        let intermCRL = directory.path("interm.crl")
        let rootCRL = directory.path("root.crl")
        for (certificate, file) in [("signer-rsa", intermCRL), ("interm", rootCRL)] {
            try ExternalTool.run("curl", ["-sf", "-o", file, try Self.crlURL(setup.pki.certificatePath(certificate))])
                .requireSuccess()
        }
        let ocspURL = try ExternalTool.run(
            "openssl",
            ["x509", "-in", setup.pki.certificatePath("signer-rsa"), "-noout", "-ocsp_uri"]
        ).requireSuccess().output.trimmingCharacters(in: .whitespacesAndNewlines)
        let ocspResponse = directory.path("signer.ocsp.der")
        try ExternalTool.run(
            "openssl",
            [
                "ocsp", "-issuer", setup.pki.certificatePath("interm"), "-cert",
                setup.pki.certificatePath("signer-rsa"),
                "-url", ocspURL, "-respout", ocspResponse, "-noverify",
            ]
        ).requireSuccess()

        let ocspBefore = setup.pki.requests(containing: "/ocsp/").count
        let crlBefore = setup.pki.requests(containing: "/crls/").count
        let document = try setup.fixture.document("offline.txt", "signed with what was at hand\n")
        let signed = try setup.sign(
            [document],
            ["--level", "b-lt"] + setup.tsa + [
                "--ca", setup.pki.certificatePath("root"), "--crl", intermCRL, "--crl", rootCRL, "--ocsp-response",
                ocspResponse,
            ]
        )
        #expect(signed.succeeded, "\(signed.output)\(signed.errorOutput)")
        #expect((try CLI.json(signed)["results"] as? [[String: Any]])?.first?["format"] as? String == "cades-lt")
        #expect(setup.pki.requests(containing: "/ocsp/").count == ocspBefore, "an OCSP responder was asked")
        #expect(setup.pki.requests(containing: "/crls/").count == crlBefore, "a CRL was downloaded")
        // asn1crypto: the given OCSP answer and both CRLs are in the signature, byte for byte.
        let contents = try LongTermOracles.run(
            LongTermOracles.contents,
            [document + ".p7s", directory.path("offline.crls.pem")]
        ).output
        #expect(contents.contains("ocsp 1") && contents.contains("crls 2"), "\(contents)")
        #expect(contents.contains("ocsp-status successful good"), "\(contents)")
        let embedded = try ExternalTool.run(
            "openssl",
            ["crl", "-in", directory.path("offline.crls.pem"), "-noout", "-hash"]
        )
        #expect(embedded.succeeded, "\(embedded.errorOutput)")

        // Our verify, with certomancer gone: judged from what the signature carries.
        setup.pki.stop()
        let verified = try setup.fixture.run(
            [
                "--json", "verify", document + ".p7s", "--ca", setup.pki.certificatePath("root"), "--tsa-ca",
                setup.pki.certificatePath("root"), "--tsa-ca", setup.pki.certificatePath("interm"),
            ]
        )
        #expect(verified.succeeded, "\(verified.output)\(verified.errorOutput)")
        #expect(try CLI.json(verified)["format"] as? String == "cades-lt")
    }

    @Test func revocationFilesAreCheckedAndGoWithTheLongTermLevels() throws {
        let setup = try LongTermCommandTests.Setup()
        defer { setup.pki.stop() }
        let document = try setup.fixture.document("bad.txt", "bad input\n")
        let notOCSP = try setup.fixture.document("not-ocsp.der", "not an OCSP response\n")
        let refused = try setup.sign(
            [document],
            ["--level", "b-lt"] + setup.tsa + ["--ca", setup.pki.certificatePath("root"), "--ocsp-response", notOCSP]
        )
        #expect(refused.status == 1, "\(refused.errorOutput)")
        #expect(
            refused.errorOutput.contains("--ocsp-response \(notOCSP) is not a DER OCSP response"),
            "\(refused.errorOutput)"
        )
        let notCRL = try setup.fixture.document("not.crl", "not a CRL\n")
        let badCRL = try setup.sign(
            [document],
            ["--level", "b-lt"] + setup.tsa + ["--ca", setup.pki.certificatePath("root"), "--crl", notCRL]
        )
        #expect(badCRL.status == 1 && badCRL.errorOutput.contains("--crl \(notCRL)"), "\(badCRL.errorOutput)")
        let withoutLevel = try setup.sign([document], ["--crl", notCRL])
        #expect(withoutLevel.status == 64, "\(withoutLevel.errorOutput)")
        #expect(withoutLevel.errorOutput.contains("--crl and --ocsp-response go with --level b-lt or b-lta"))
        #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
    }
}
