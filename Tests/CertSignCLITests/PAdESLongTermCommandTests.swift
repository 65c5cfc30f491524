import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign sign --format pades --level b-lt|b-lta`, `certsign extend FILE.pdf` and `certsign verify
/// FILE.pdf` from the DSS, against certomancer (TSA, OCSP responder, CRLs), judged by pyHanko offline.
@Suite(.serialized) struct PAdESLongTermCommandTests {
    typealias Setup = LongTermCommandTests.Setup

    /// `--ca root --tsa-ca root --tsa-ca interm`: what `verify` trusts.
    static func anchors(_ setup: Setup) -> [String] {
        [
            "--ca", setup.pki.certificatePath("root"), "--tsa-ca", setup.pki.certificatePath("root"), "--tsa-ca",
            setup.pki.certificatePath("interm"),
        ]
    }

    /// The `pdf` documents of `verify --json FILE.pdf`.
    static func placements(_ result: ExternalTool.Result) throws -> [[String: Any]] {
        ((try CLI.json(result)["signatures"] as? [[String: Any]]) ?? []).compactMap { $0["pdf"] as? [String: Any] }
    }

    /// The journal rows of `signatures list --json`.
    static func journalRows(_ setup: Setup) throws -> [[String: Any]] {
        let list = try setup.fixture.run(["--json", "signatures", "list"], environment: setup.environment)
        return ((try CLI.json(list)["signatures"] as? [[String: Any]]) ?? []).filter {
            $0["location"] as? String == "journal"
        }
    }

    @Test func signBLTWithVRIAndBLTAPassPyHankoAndVerifyOfflineFromTheDSS() throws {
        let setup = try Setup()
        defer { setup.pki.stop() }
        let directory = setup.fixture.directory
        let ltInput = try directory.write("lt.pdf", TestPDF.minimal())
        let lt = try setup.sign(
            [ltInput],
            ["--format", "pades", "--level", "b-lt", "--vri"] + setup.tsa + ["--ca", setup.pki.certificatePath("root")]
        )
        #expect(lt.succeeded, "\(lt.output)\(lt.errorOutput)")
        #expect((try CLI.json(lt)["results"] as? [[String: Any]])?.first?["level"] as? String == "B-LT")
        let root = try setup.pki.certificate("root")
        let judged = try PyHankoValidator.longTerm(directory.path("lt-signed.pdf"), root: root, in: directory)
        #expect(judged.first == "dss 4 2 1 1", "\(judged)")
        #expect(judged.contains("vri-match Signature1 True"), "\(judged)")
        #expect(judged.contains { $0.hasPrefix("signature Signature1: INTACT:TRUSTED") && $0.hasSuffix("True") })

        let ltaInput = try directory.write("lta.pdf", TestPDF.minimal())
        let lta = try setup.sign([ltaInput], ["--format", "pades", "--level", "b-lta"] + setup.tsa)
        #expect(lta.succeeded, "\(lta.output)\(lta.errorOutput)")
        let archived = try PyHankoValidator.longTerm(
            directory.path("lta-signed.pdf"),
            root: root,
            lta: true,
            in: directory
        )
        #expect(archived.contains { $0.hasPrefix("lta Signature1: AdESPassed.OK 20") }, "\(archived)")
        #expect(archived.contains { $0.hasPrefix("timestamp Signature2: INTACT:TRUSTED") && $0.hasSuffix("True") })

        let bbInput = try directory.write("bb.pdf", TestPDF.minimal())
        #expect(try setup.sign([bbInput], ["--format", "pades"]).succeeded)
        setup.pki.stop()
        // With certomancer gone: VALID from the DSS, level named in text and JSON.
        let text = try setup.fixture.run(["verify", directory.path("lta-signed.pdf")] + Self.anchors(setup))
        #expect(text.succeeded, "\(text.output)\(text.errorOutput)")
        #expect(text.output.contains("level: PAdES-B-LTA"), "\(text.output)")
        // The PAdES level alone: no CAdES format line beside it, and one verdict for the signature.
        #expect(!text.output.contains("format:") && !text.output.contains("VALID"), "\(text.output)")
        let first = text.output.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("field 'Signature1' (revision ") && first.hasSuffix("): PASSED"), "\(text.output)")
        #expect(text.output.contains("good (embedded"), "\(text.output)")
        let json = try setup.fixture.run(
            ["--json", "verify", directory.path("lt-signed.pdf"), "--check-revocation"] + Self.anchors(setup)
        )
        #expect(json.succeeded, "\(json.output)\(json.errorOutput)")
        #expect(try Self.placements(json).first?["level"] as? String == "PAdES-B-LT")
        // A B-B PDF has no DSS: with the responder gone, --check-revocation cannot decide: exit 2.
        let plain = try setup.fixture.run(
            ["--json", "verify", directory.path("bb-signed.pdf"), "--check-revocation"] + Self.anchors(setup)
        )
        #expect(plain.status == 2, "\(plain.output)")
        #expect(try CLI.json(plain)["subIndication"] as? String == "TRY_LATER", "\(plain.output)")
        #expect(try Self.placements(plain).first?["level"] as? String == "PAdES-B-B")
    }

    @Test func extendRaisesABTPDFInPlaceRenewsItAndRefusesWithoutAnswers() throws {
        let setup = try Setup()
        let directory = setup.fixture.directory
        let input = try directory.write("contract.pdf", TestPDF.minimal())
        // openssl's digest of the PDF as given: the journal row describes it, not the signed file.
        let digest = try ExternalTool.run("openssl", ["dgst", "-sha256", "-r", input]).output.prefix(64)
        let signed = try setup.sign([input], ["--format", "pades", "--in-place"] + setup.tsa)
        #expect(signed.succeeded, "\(signed.output)\(signed.errorOutput)")
        let id = (try CLI.json(signed)["results"] as? [[String: Any]])?.first?["id"] as? String
        var journal = try Self.journalRows(setup)
        #expect(journal.count == 1 && journal.first?["id"] as? String == id, "\(journal)")
        #expect(journal.first?["format"] as? String == "pades-t", "\(journal)")
        #expect(journal.first?["document"] as? String == "contract.pdf", "\(journal)")
        #expect(journal.first?["documentDigest"] as? String == String(digest), "\(journal) \(digest)")
        #expect(journal.first?["detached"] as? Bool == false, "\(journal)")
        let extended = try setup.fixture.run(["--json", "extend", input, "--level", "b-lta"] + setup.tsa)
        #expect(extended.succeeded, "\(extended.output)\(extended.errorOutput)")
        let row = (try CLI.json(extended)["results"] as? [[String: Any]])?.first
        #expect(row?["level"] as? String == "B-LTA" && row?["format"] as? String == "pades", "\(extended.output)")
        #expect(row?["journalRowsUpdated"] as? Int == 1, "\(extended.output)")
        journal = try Self.journalRows(setup)
        #expect(journal.count == 1 && journal.first?["format"] as? String == "pades-lta", "\(journal)")
        // Renewal: a further DSS revision and document timestamp; B-LT of a B-LTA file is refused.
        let renewed = try setup.fixture.run(["extend", input, "--level", "b-lta"] + setup.tsa)
        #expect(renewed.succeeded, "\(renewed.errorOutput)")
        let lower = try setup.fixture.run(["extend", input, "--level", "b-lt"] + setup.tsa)
        #expect(lower.status == 1 && lower.errorOutput.contains("B-LTA already"), "\(lower.errorOutput)")
        let judged = try PyHankoValidator.longTerm(
            input,
            root: try setup.pki.certificate("root"),
            lta: true,
            in: directory
        )
        #expect(judged.filter { $0.hasPrefix("timestamp ") && $0.hasSuffix("True") }.count == 2, "\(judged)")
        #expect(judged.contains { $0.hasPrefix("lta Signature1: AdESPassed.OK 20") }, "\(judged)")
        // No revocation answer: exit 1 naming the certificate, the file untouched.
        let other = try directory.write("other.pdf", TestPDF.minimal())
        #expect(try setup.sign([other], ["--format", "pades", "--in-place"] + setup.tsa).succeeded)
        let before = try directory.read("other.pdf")
        setup.pki.stop()
        let refused = try setup.fixture.run(["extend", other, "--level", "b-lt"] + setup.tsa)
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("LT Signer RSA"), "\(refused.errorOutput)")
        #expect(try directory.read("other.pdf") == before)
    }

    @Test func verifyAtADateAfterEveryCertificateOfTheBTPathExpiredUsesTheTimestampChain() throws {
        let setup = try Setup()
        defer { setup.pki.stop() }
        let directory = setup.fixture.directory
        let bt = try directory.write("audit.pdf", TestPDF.minimal())
        #expect(try setup.sign([bt], ["--format", "pades", "--in-place"] + setup.tsa).succeeded)
        let lta = directory.path("audit-lta.pdf")
        try FileManager.default.copyItem(atPath: bt, toPath: lta)
        // The archive timestamp from tsa-archive, whose certificate outlives the signer's and tsa's.
        let archive = [
            "--tsa", setup.pki.archiveTimestampURL.absoluteString, "--tsa-ca", setup.pki.certificatePath("root"),
            "--tsa-ca", setup.pki.certificatePath("interm"),
        ]
        let extended = try setup.fixture.run(["extend", lta, "--level", "b-lta"] + archive)
        #expect(extended.succeeded, "\(extended.output)\(extended.errorOutput)")
        setup.pki.stop()
        let at = ["--at", "2085-06-01T00:00:00Z"]
        let past = try setup.fixture.run(["verify", lta] + at + Self.anchors(setup))
        #expect(past.succeeded, "\(past.output)\(past.errorOutput)")
        #expect(past.output.contains("past validation: verified at"), "\(past.output)")
        let json = try setup.fixture.run(["--json", "verify", lta] + at + Self.anchors(setup))
        #expect(try Self.placements(json).first?["pastValidationTime"] is String, "\(json.output)")
        // B-T alone: its TSA expired too and nothing proves the timestamp's time: INDETERMINATE.
        let alone = try setup.fixture.run(["verify", bt] + at + Self.anchors(setup))
        #expect(alone.status == 2, "\(alone.output)")
        #expect(
            alone.output.hasPrefix("field 'Signature1' (revision 2 of 2): INDETERMINATE: OUT_OF_BOUNDS_NO_POE — "),
            "\(alone.output)"
        )
        #expect(!alone.output.contains("past validation"), "\(alone.output)")
    }

    @Test func verifyAtADateAfterExpiryValidatesACAdESLTASignatureInThePast() throws {
        let setup = try Setup()
        defer { setup.pki.stop() }
        let document = try setup.fixture.document("archived.txt", "kept for decades\n")
        #expect(try setup.sign([document], setup.tsa).succeeded)
        let bt = setup.fixture.directory.path("archived-bt.p7s")
        try FileManager.default.copyItem(atPath: document + ".p7s", toPath: bt)
        let archive = [
            "--tsa", setup.pki.archiveTimestampURL.absoluteString, "--tsa-ca", setup.pki.certificatePath("root"),
            "--tsa-ca", setup.pki.certificatePath("interm"),
        ]
        let extended = try setup.fixture.run(["extend", document + ".p7s", "--level", "b-lta"] + archive)
        #expect(extended.succeeded, "\(extended.output)\(extended.errorOutput)")
        setup.pki.stop()
        let at = ["--at", "2085-06-01T00:00:00Z"]
        let past = try setup.fixture.run(["--json", "verify", document + ".p7s"] + at + Self.anchors(setup))
        #expect(past.succeeded, "\(past.output)\(past.errorOutput)")
        #expect(try CLI.json(past)["pastValidationTime"] is String, "\(past.output)")
        let text = try setup.fixture.run(["verify", document + ".p7s"] + at + Self.anchors(setup))
        #expect(text.output.contains("past validation: verified at"), "\(text.output)")
        let alone = try setup.fixture.run(["verify", bt, "--content", document] + at + Self.anchors(setup))
        #expect(alone.status == 2, "\(alone.output)")
        #expect(alone.output.hasPrefix("INDETERMINATE: OUT_OF_BOUNDS_NO_POE — "), "\(alone.output)")
    }
}
