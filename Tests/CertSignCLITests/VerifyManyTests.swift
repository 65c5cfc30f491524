import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign verify SIG…`: many signatures and PDFs in one call, each reported on
/// its own (a line, or a JSON result), the run going on past a bad file, exit 1 when one FAILED (2
/// when none failed and one is INDETERMINATE); the verdicts match `openssl cms -verify` file by file.
@Suite struct VerifyManyTests {
    /// Signs `documents` with the fixture's .p12 (`extra` adds options such as `--out-dir`).
    func sign(_ fixture: CLIFixture, _ documents: [String], _ extra: [String] = []) throws {
        let passwordFile = try fixture.directory.write("p12.pass", text: fixture.password)
        let signed = try fixture.run(
            ["sign"] + documents + ["--p12", fixture.p12Path, "--password-file", passwordFile] + extra
        )
        try #require(signed.status == 0, "\(signed.errorOutput)")
    }

    @Test("A mix of valid, tampered, attached, unreadable and PDF files: one line each in order, a count, exit 1")
    func mixedFiles() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let documents = try (0..<4).map { try fixture.document("документ-\($0).txt", "строка \($0)\n") }
        try sign(fixture, documents)
        // The third document is changed after signing.
        try Data("изменено\n".utf8).write(to: URL(fileURLWithPath: documents[2]))
        // An attached signature beside a same-named file that is not its content: the embedded
        // content is what counts, never the file beside it.
        let attachedContent = try fixture.document("attached.txt", "вложено\n")
        try sign(fixture, [attachedContent], ["--attached", "--out", attachedContent + ".p7s"])
        try Data("другой файл\n".utf8).write(to: URL(fileURLWithPath: attachedContent))
        let pdfSource = try fixture.directory.write("source.pdf", TestPDF.minimal())
        try sign(fixture, [pdfSource], ["--format", "pades"])
        let pdf = fixture.directory.path("source-signed.pdf")
        let missing = fixture.directory.path("missing.txt.p7s")
        let files =
            documents.map { $0 + ".p7s" } + [attachedContent + ".p7s", missing, pdf]

        // openssl's verdicts, file by file, for the CMS files that exist.
        let openssl = try documents.map { try fixture.opensslVerifies($0 + ".p7s", content: $0) }
        #expect(openssl == [true, true, false, true])
        #expect(try fixture.opensslVerifies(attachedContent + ".p7s", content: nil))

        let text = try fixture.run(["verify"] + files + ["--ca", fixture.rootPath])
        #expect(text.status == 1)
        let lines = text.output.split(separator: "\n").map(String.init)
        try #require(lines.count == files.count + 1, "\(text.output)")
        let verdicts = lines.prefix(files.count).map { String($0.prefix { $0 != ":" }) }
        #expect(verdicts == ["PASSED", "PASSED", "FAILED", "PASSED", "PASSED", "ERROR", "PASSED"], "\(text.output)")
        for (line, file) in zip(lines, files) { #expect(line.contains(file), "\(line) should name \(file)") }
        #expect(lines[2].hasPrefix("FAILED: HASH_FAILURE — ") && lines[2].contains("changed"), "\(lines[2])")
        #expect(lines.last == "5 of 7 signatures passed (2 failed, 0 indeterminate)")

        let json = try fixture.run(["--json", "verify"] + files + ["--ca", fixture.rootPath])
        #expect(json.status == 1)
        let document = try CLI.json(json)
        #expect(document["valid"] as? Int == 5)
        #expect(document["invalid"] as? Int == 2)
        #expect(document["passed"] as? Int == 5 && document["failed"] as? Int == 2)
        #expect(document["indeterminate"] as? Int == 0)
        let results = try #require(document["results"] as? [[String: Any]])
        #expect(results.map { $0["valid"] as? Bool } == [true, true, false, true, true, false, true])
        #expect(
            results[2]["indication"] as? String == "FAILED" && results[2]["subIndication"] as? String == "HASH_FAILURE"
        )
        #expect(results[6]["indication"] as? String == "PASSED" && results[6]["subIndication"] == nil)
        #expect(results[0]["content"] as? String == documents[0])
        #expect(results[4]["content"] == nil, "an attached signature is never checked over a file beside it")
        #expect((results[2]["failure"] as? [String: Any])?["code"] as? String == "contentChanged")
        #expect(results[5]["code"] as? String == "fileSystem")
        #expect(results[5]["signature"] as? String == missing)
        #expect(results[6]["document"] as? String == pdf)
        #expect((results[6]["signatures"] as? [[String: Any]])?.count == 1)
    }

    @Test("--content-dir finds the documents of signatures written elsewhere; --content takes one signature only")
    func contentDirectory() throws {
        let fixture = try CLIFixture()
        let documents = try (0..<3).map { try fixture.document("doc-\($0).txt", "content \($0)\n") }
        let signatures = fixture.directory.path("signatures")
        try sign(fixture, documents, ["--out-dir", signatures])
        let files = (0..<3).map { "\(signatures)/doc-\($0).txt.p7s" }

        // Without --content-dir the documents are not beside the signatures: each is INDETERMINATE
        // (SIGNED_DATA_NOT_FOUND), exit 2.
        let alone = try fixture.run(["--json", "verify"] + files + ["--ca", fixture.rootPath])
        #expect(alone.status == 2)
        #expect(try CLI.json(alone)["invalid"] as? Int == 3, "\(alone.output)")
        #expect(try CLI.json(alone)["indeterminate"] as? Int == 3, "\(alone.output)")
        let first = try #require((try CLI.json(alone)["results"] as? [[String: Any]])?.first)
        #expect(first["subIndication"] as? String == "SIGNED_DATA_NOT_FOUND", "\(first)")

        let found = try fixture.run(
            ["verify"] + files + ["--content-dir", fixture.directory.url.path, "--ca", fixture.rootPath]
        )
        #expect(found.status == 0, "\(found.output) \(found.errorOutput)")
        #expect(found.output.hasSuffix("3 of 3 signatures passed (0 failed, 0 indeterminate)\n"), "\(found.output)")
        for (file, document) in zip(files, documents) {
            #expect(try fixture.opensslVerifies(file, content: document))
        }

        let twoWithContent = try fixture.run(
            ["verify", files[0], files[1], "--content", documents[0], "--ca", fixture.rootPath]
        )
        #expect(twoWithContent.status == 64)
        #expect(twoWithContent.errorOutput.contains("--content-dir"), "\(twoWithContent.errorOutput)")
        let both = try fixture.run(
            [
                "verify", files[0], "--content", documents[0], "--content-dir", fixture.directory.url.path, "--ca",
                fixture.rootPath,
            ]
        )
        #expect(both.status == 64)
        // One signature with --content is reported in full, as always.
        let one = try fixture.run(["verify", files[0], "--content", documents[0], "--ca", fixture.rootPath])
        #expect(one.status == 0)
        #expect(one.output.hasPrefix("PASSED\n"), "\(one.output)")
    }
}
