import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign verify … --report FILE.xml`: an ETSI TS 119 102-2 validation report that pyHanko's own
/// TS 119 102-2 bindings parse, with one SignatureValidationReport per signature whose indication
/// and sub-indication are what `verify --json` said.
@Suite struct VerifyReportCommandTests {
    /// The indications `--json` gave, one per signature: a CMS file's result, each PDF signature.
    func jsonVerdicts(_ document: [String: Any]) throws -> [(String, String?)] {
        let results = try #require(document["results"] as? [[String: Any]])
        return try results.flatMap { result -> [(String, String?)] in
            guard let signatures = result["signatures"] as? [[String: Any]] else {
                return [(try #require(result["indication"] as? String), result["subIndication"] as? String)]
            }
            return try signatures.map {
                (try #require($0["indication"] as? String), $0["subIndication"] as? String)
            }
        }
    }

    @Test("Good, tampered and foreign-anchor CAdES and a twice-signed PDF: pyHanko reads every verdict back")
    func reportParsesWithPyHanko() throws {
        let fixture = try CLIFixture()
        let passwordFile = try fixture.directory.write("p12.pass", text: fixture.password)
        let good = try fixture.document("good.txt", "подписано\n")
        let tampered = try fixture.document("tampered.txt", "исходный текст\n")
        try fixture.signWithP12(good)
        try fixture.signWithP12(tampered)
        try Data("изменено\n".utf8).write(to: URL(fileURLWithPath: tampered))
        // A signer whose root is not among the anchors: INDETERMINATE, NO_CERTIFICATE_CHAIN_FOUND.
        let stranger = try CLIFixture()
        let foreign = try stranger.document("foreign.txt", "чужой\n")
        try stranger.signWithP12(foreign)
        let (_, contract) = try fixture.passwordFileAndContract()
        for field in ["Signature1", "Approval"] {
            let signed = try fixture.run([
                "sign", contract, "--format", "pades", "--p12", fixture.p12Path, "--password-file", passwordFile,
                "--field", field, "--in-place",
            ])
            try #require(signed.status == 0, "\(signed.errorOutput)")
        }
        let files = [good + ".p7s", tampered + ".p7s", foreign + ".p7s", contract]
        let reportPath = fixture.directory.path("report.xml")

        let verified = try fixture.run(
            ["--json", "verify"] + files + ["--ca", fixture.rootPath, "--report", reportPath]
        )
        #expect(verified.status == 1, "\(verified.output) \(verified.errorOutput)")
        let expected = try jsonVerdicts(try CLI.json(verified))
        #expect(expected.map(\.0) == ["PASSED", "FAILED", "INDETERMINATE", "PASSED", "PASSED"])
        #expect(expected[1].1 == "HASH_FAILURE" && expected[2].1 == "NO_CERTIFICATE_CHAIN_FOUND")

        let entries = try PyHankoReport.read(reportPath)
        try #require(entries.count == expected.count, "\(entries)")
        for (entry, verdict) in zip(entries, expected) {
            #expect(entry.indication == verdict.0 && entry.subIndication == verdict.1, "\(entry) vs \(verdict)")
            #expect(entry.digestMatchesSignatureValue == true, "\(entry)")
            #expect(entry.bestSignatureTime != nil)
        }
        #expect(entries.map(\.documentIdentifier) == [nil, nil, nil, "Signature1", "Approval"])
        let signer = Data(fixture.signer.certificate.derRepresentation)
        #expect(entries[0].signerCertificate == signer && entries[3].signerCertificate == signer)
        #expect(entries[2].signerCertificate == Data(stranger.signer.certificate.derRepresentation))

        // The text run writes the same report: the verdict lines stay on stdout.
        let text = try fixture.run(["verify"] + files + ["--ca", fixture.rootPath, "--report", reportPath])
        #expect(text.status == 1)
        #expect(text.output.hasPrefix("PASSED: "), "\(text.output)")
        #expect(try PyHankoReport.read(reportPath).map(\.indication) == expected.map(\.0))
    }

    @Test("One signature: the report holds its one verdict; --at is its validation time")
    func oneSignature() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("invoice.txt", "Счёт № 7\n")
        try fixture.signWithP12(document)
        let reportPath = fixture.directory.path("один отчёт.xml")
        let at = Date(timeIntervalSinceNow: 3600)
        let moment = at.formatted(Date.ISO8601FormatStyle())
        let verified = try fixture.run(
            ["verify", document + ".p7s", "--ca", fixture.rootPath, "--report", reportPath, "--at", moment]
        )
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
        #expect(verified.output.hasPrefix("PASSED\n"), "\(verified.output)")
        let entries = try PyHankoReport.read(reportPath)
        try #require(entries.count == 1)
        #expect(entries[0].indication == "PASSED" && entries[0].subIndication == nil)
        #expect(entries[0].validationTime == moment.replacingOccurrences(of: "Z", with: "+00:00"), "\(entries[0])")
    }

    @Test(
        "--report - is a usage error (stdout carries the verdicts); a path that cannot be written fails, leaving nothing"
    )
    func refusedPaths() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("doc.txt", "текст\n")
        try fixture.signWithP12(document)

        let toStdout = try fixture.run(["verify", document + ".p7s", "--ca", fixture.rootPath, "--report", "-"])
        #expect(toStdout.status == 64)
        #expect(toStdout.errorOutput.contains("--report"), "\(toStdout.errorOutput)")

        let missingDirectory = fixture.directory.path("нет-такой-папки/report.xml")
        let missing = try fixture.run(
            ["--json", "verify", document + ".p7s", "--ca", fixture.rootPath, "--report", missingDirectory]
        )
        #expect(missing.status == 1, "\(missing.output) \(missing.errorOutput)")
        let error = try #require(try CLI.json(missing)["error"] as? [String: Any])
        #expect(error["code"] as? String == "fileSystem", "\(error)")
        #expect((error["reason"] as? String)?.contains("--report") == true, "\(error)")
        #expect(!FileManager.default.fileExists(atPath: missingDirectory))

        // A directory in the report's place: the rename fails and no temporary file is left beside it.
        let directory = fixture.directory.path("occupied")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        _ = try fixture.directory.write("occupied/keep.txt", text: "x")
        let before = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.url.path).sorted()
        let onDirectory = try fixture.run(
            ["verify", document + ".p7s", "--ca", fixture.rootPath, "--report", directory]
        )
        #expect(onDirectory.status == 1, "\(onDirectory.output) \(onDirectory.errorOutput)")
        #expect(onDirectory.errorOutput.contains(directory), "\(onDirectory.errorOutput)")
        let after = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.url.path).sorted()
        #expect(after == before, "a temporary report was left behind: \(after)")
    }
}
