import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign sign --level` and `certsign extend` against certomancer (TSA, OCSP responder, CRLs),
/// judged by asn1crypto and openssl.
@Suite(.serialized) struct LongTermCommandTests {
    /// A CLI fixture's store and directory with certomancer's signer-rsa as the `.pfx` to sign with.
    struct Setup {
        let fixture: CLIFixture
        let pki: CertomancerPKI
        let environment = ["P12PASS": CertomancerPKI.pkcs12Password]

        init() throws {
            fixture = try CLIFixture()
            pki = try CertomancerPKI()
        }

        /// `sign DOCUMENT… --p12 signer-rsa.pfx` with `arguments` after it.
        func sign(_ documents: [String], _ arguments: [String]) throws -> ExternalTool.Result {
            try fixture.run(
                ["--json", "sign"] + documents + ["--p12", pki.pkcs12Path("signer-rsa"), "--password-env", "P12PASS"]
                    + arguments,
                environment: environment
            )
        }

        /// `--tsa URL --tsa-ca root --tsa-ca interm` (certomancer's tokens carry only the TSA's certificate).
        var tsa: [String] {
            [
                "--tsa", pki.timestampURL.absoluteString, "--tsa-ca", pki.certificatePath("root"), "--tsa-ca",
                pki.certificatePath("interm"),
            ]
        }
    }

    @Test func signLevelBLTAndBLTAMakeLongTermCAdES() throws {
        let setup = try Setup()
        defer { setup.pki.stop() }
        let document = try setup.fixture.document("lt.txt", "a long-term document\n")
        let lt = try setup.sign(
            [document],
            ["--level", "b-lt"] + setup.tsa + ["--ca", setup.pki.certificatePath("root")]
        )
        #expect(lt.succeeded, "\(lt.output)\(lt.errorOutput)")
        #expect((try CLI.json(lt)["results"] as? [[String: Any]])?.first?["format"] as? String == "cades-lt")
        let contents = try LongTermOracles.run(
            LongTermOracles.contents,
            [document + ".p7s", setup.fixture.directory.path("lt.crls.pem")]
        ).output
        #expect(contents.contains("ocsp 2") && contents.contains("crls 1"), "\(contents)")

        let other = try setup.fixture.document("lta.txt", "an archived document\n")
        let lta = try setup.sign([other], ["--level", "b-lta"] + setup.tsa)
        #expect(lta.succeeded, "\(lta.output)\(lta.errorOutput)")
        #expect((try CLI.json(lta)["results"] as? [[String: Any]])?.first?["format"] as? String == "cades-lta")
        let archive = try LongTermOracles.run(LongTermOracles.archiveTimestamp, [other + ".p7s", other]).output
        #expect(archive.contains("index-match True") && archive.contains("imprint-match True"), "\(archive)")
    }

    /// Without `--tsa-ca`, `sign` and `extend` at the long-term levels trust the TSA under the `--ca`
    /// anchors (besides the system store), as `verify` does; `timestamp`, which takes no `--ca`,
    /// still trusts the system store alone.
    @Test func theLongTermLevelsTrustTheTSAUnderTheCAAnchors() throws {
        let setup = try Setup()
        defer { setup.pki.stop() }
        let tsa = ["--tsa", setup.pki.timestampURL.absoluteString]
        let anchors = ["--ca", setup.pki.certificatePath("root"), "--ca", setup.pki.certificatePath("interm")]
        let signed = try setup.fixture.document("ca-anchored.txt", "the TSA under --ca\n")
        let lt = try setup.sign([signed], ["--level", "b-lt"] + tsa + anchors)
        #expect(lt.succeeded, "\(lt.output)\(lt.errorOutput)")
        #expect((try CLI.json(lt)["results"] as? [[String: Any]])?.first?["format"] as? String == "cades-lt")

        let extended = try setup.fixture.document("ca-extended.txt", "raised later\n")
        #expect(try setup.sign([extended], []).succeeded)
        let lta = try setup.fixture.run(["--json", "extend", extended + ".p7s", "--level", "b-lta"] + tsa + anchors)
        #expect(lta.succeeded, "\(lta.output)\(lta.errorOutput)")

        let stamped = try setup.fixture.document("system-store.txt", "the system store alone\n")
        #expect(try setup.sign([stamped], []).succeeded)
        let refused = try setup.fixture.run(["--json", "timestamp", stamped + ".p7s"] + tsa)
        #expect(!refused.succeeded)
        #expect(refused.output.contains("timestampInvalid"), "\(refused.output)\(refused.errorOutput)")
    }

    @Test func levelsThatCannotBeMadeAreRefusedClearly() throws {
        let setup = try Setup()
        defer { setup.pki.stop() }
        let document = try setup.fixture.document("refused.txt", "refused\n")
        let withoutTSA = try setup.sign([document], ["--level", "b-lt"])
        #expect(withoutTSA.status == 64)
        #expect(
            withoutTSA.errorOutput.contains("--level b-lt needs a time-stamping authority"),
            "\(withoutTSA.errorOutput)"
        )
        // PAdES long-term levels (PAdESLongTermCommandTests) need a TSA as well.
        let pdf = try setup.fixture.directory.write("contract.pdf", TestPDF.minimal())
        let pades = try setup.sign([pdf], ["--format", "pades", "--level", "b-lta"])
        #expect(pades.status == 64, "\(pades.errorOutput)")
        #expect(pades.errorOutput.contains("needs a time-stamping authority"), "\(pades.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: setup.fixture.directory.path("contract-signed.pdf")))
    }

    @Test func extendRaisesManyFilesWithOneRequestPerDistinctCertificateAndRenews() throws {
        let setup = try Setup()
        defer { setup.pki.stop() }
        let documents = try (1...3).map { try setup.fixture.document("doc\($0).txt", "document \($0)\n") }
        let signed = try setup.sign(documents, setup.tsa)
        #expect(signed.succeeded, "\(signed.errorOutput)")
        let ocspBefore = setup.pki.requests(containing: "/ocsp/").count
        let crlBefore = setup.pki.requests(containing: "/crls/").count
        let extended = try setup.fixture.run(
            ["--json", "extend"] + documents.map { $0 + ".p7s" } + ["--level", "b-lta"] + setup.tsa
                + ["--ca", setup.pki.certificatePath("root")]
        )
        #expect(extended.succeeded, "\(extended.output)\(extended.errorOutput)")
        let json = try CLI.json(extended)
        #expect(json["extended"] as? Int == 3)
        // The signer's and the TSA's certificates by OCSP, the intermediate's by the root's CRL:
        // once each for the three files.
        #expect(setup.pki.requests(containing: "/ocsp/").count - ocspBefore == 2)
        #expect(setup.pki.requests(containing: "/crls/").count - crlBefore == 1)
        #expect(json["revocationRequests"] as? Int == 3)
        let rows = (json["results"] as? [[String: Any]]) ?? []
        #expect(rows.allSatisfy { $0["format"] as? String == "cades-lta" && $0["journalRowsUpdated"] as? Int == 1 })
        for document in documents {
            let check = try LongTermOracles.run(LongTermOracles.archiveTimestamp, [document + ".p7s", document]).output
            #expect(check.contains("imprint-match True") && check.contains("index-match True"), "\(check)")
        }
        // Renewal: a second archive timestamp over the first one's validation data.
        let renewed = try setup.fixture.run(["extend", documents[0] + ".p7s", "--level", "b-lta"] + setup.tsa)
        #expect(renewed.succeeded, "\(renewed.errorOutput)")
        let second = try LongTermOracles.run(LongTermOracles.archiveTimestamp, [documents[0] + ".p7s", documents[0]])
            .output
        #expect(second.contains("archive-timestamps 2") && second.contains("imprint-match True"), "\(second)")
    }

    @Test func extendWithoutRevocationAnswersWritesNothingAndNamesTheCertificate() throws {
        let setup = try Setup()
        let document = try setup.fixture.document("offline.txt", "offline\n")
        let signed = try setup.sign([document], setup.tsa)
        #expect(signed.succeeded, "\(signed.errorOutput)")
        let before = try setup.fixture.directory.read("offline.txt.p7s")
        setup.pki.stop()
        let extended = try setup.fixture.run(["extend", document + ".p7s", "--level", "b-lt"] + setup.tsa)
        #expect(extended.status == 1)
        #expect(extended.errorOutput.contains("LT Signer RSA"), "\(extended.errorOutput)")
        #expect(try setup.fixture.directory.read("offline.txt.p7s") == before)
        // A detached signature whose document is not the signed one is refused before any request.
        let wrong = try setup.fixture.document("wrong.txt", "not the signed document\n")
        let mismatch = try setup.fixture.run(
            ["extend", document + ".p7s", "--content", wrong, "--level", "b-lt"] + setup.tsa
        )
        #expect(mismatch.status == 1)
        #expect(mismatch.errorOutput.contains("is not the document the signature signed"), "\(mismatch.errorOutput)")
    }
}

/// `certsign verify` of long-term signatures from their embedded data, with certomancer gone.
@Suite(.serialized) struct LongTermVerifyTests {
    @Test func bLTAndBLTAVerifyOfflineFromEmbeddedDataAndBBDoesNot() throws {
        let setup = try LongTermCommandTests.Setup()
        let lt = try setup.fixture.document("offline-lt.txt", "verified offline\n")
        let lta = try setup.fixture.document("offline-lta.txt", "archived offline\n")
        let bb = try setup.fixture.document("offline-bb.txt", "plain\n")
        #expect(try setup.sign([lt], ["--level", "b-lt"] + setup.tsa).succeeded)
        #expect(try setup.sign([lta], ["--level", "b-lta"] + setup.tsa).succeeded)
        #expect(try setup.sign([bb], []).succeeded)
        setup.pki.stop()
        let anchors = [
            "--ca", setup.pki.certificatePath("root"), "--tsa-ca", setup.pki.certificatePath("root"), "--tsa-ca",
            setup.pki.certificatePath("interm"),
        ]
        let text = try setup.fixture.run(["verify", lt + ".p7s"] + anchors)
        #expect(text.succeeded, "\(text.output)\(text.errorOutput)")
        #expect(text.output.contains("revocation:   good (embedded OCSP and CRL answers"), "\(text.output)")
        #expect(text.output.contains("format:       CAdES-LT, detached"), "\(text.output)")
        // --check-revocation asks the network only for what the signature does not answer: nothing.
        let checked = try setup.fixture.run(["--json", "verify", lt + ".p7s", "--check-revocation"] + anchors)
        #expect(checked.succeeded, "\(checked.output)\(checked.errorOutput)")
        #expect(try CLI.json(checked)["format"] as? String == "cades-lt")
        let archived = try setup.fixture.run(["--json", "verify", lta + ".p7s"] + anchors)
        #expect(archived.succeeded, "\(archived.output)\(archived.errorOutput)")
        #expect(try CLI.json(archived)["format"] as? String == "cades-lta")
        // A B-B signature has nothing embedded: with the responder gone, revocation is unknown:
        // INDETERMINATE (TRY_LATER), exit 2.
        let plain = try setup.fixture.run(["--json", "verify", bb + ".p7s", "--check-revocation"] + anchors)
        #expect(plain.status == 2, "\(plain.output)")
        #expect(try CLI.json(plain)["subIndication"] as? String == "TRY_LATER", "\(plain.output)")
        #expect((try CLI.json(plain)["failure"] as? [String: Any])?["code"] as? String == "revocationUnknown")
    }
}
