import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `prepare` and `complete` of many documents at once: the pending files and the signatures are made
/// durable a group at a time (one flush per file system, one journal transaction), and a document
/// that fails still fails alone: nothing written for it, its pending file kept, the others done.
@Suite(.enabled(if: ExternalTool.isAvailable("openssl"), "needs the openssl command"))
struct PendingBatchCommandTests {
    @Test("12 documents: one refused pending file and one wrong value fail alone; 10 signatures openssl verifies")
    func manyDocumentsFailAlone() throws {
        let signer = try PendingCommandTests.Signer(OpenSSLExternalSigner.all[0])
        let fixture = signer.fixture
        let names = (1...12).map { String(format: "счёт-%02d.txt", $0) }
        let documents = try names.map { try fixture.document($0, "Счёт \($0)\n") }
        let pendingDirectory = fixture.directory.path("pending")
        let valuesDirectory = fixture.directory.path("values")
        let signedDirectory = fixture.directory.path("signed")
        for directory in [pendingDirectory, valuesDirectory] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        // A pending file of the third document exists already: prepare must not replace it.
        let occupied = pendingDirectory + "/" + names[2] + ".pending"
        try Data("kept\n".utf8).write(to: URL(fileURLWithPath: occupied))

        let prepared = try fixture.run(
            ["--json", "prepare"] + documents + ["--certificate", signer.certificate, "--out-dir", pendingDirectory]
        )
        #expect(prepared.status == 1, "\(prepared.errorOutput)")
        let results = try #require(try CLI.json(prepared)["results"] as? [[String: Any]])
        #expect(results.map { $0["status"] as? String } == (0..<12).map { $0 == 2 ? "failed" : "prepared" })
        #expect(results[2]["code"] as? String == "alreadyExists")
        #expect(try String(contentsOfFile: occupied, encoding: .utf8) == "kept\n")
        #expect(prepared.errorOutput.contains(names[2]))
        for (index, result) in results.enumerated() where index != 2 {
            let file = try #require(result["pendingFile"] as? String)
            #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
            // The fifth document gets the value of the sixth: right key, wrong digest.
            let source = index == 4 ? results[5] : result
            let value = try signer.sign(source, into: "values/" + names[index] + ".sig")
            #expect(FileManager.default.fileExists(atPath: value))
        }
        try FileManager.default.removeItem(atPath: occupied)

        let pendingFiles = names.enumerated().filter { $0.offset != 2 }.map {
            pendingDirectory + "/" + $0.element + ".pending"
        }
        let completed = try fixture.run(
            ["--json", "complete"] + pendingFiles + [
                "--signature-value-dir", valuesDirectory, "--out-dir", signedDirectory,
            ]
        )
        #expect(completed.status == 1, "\(completed.errorOutput)")
        let outcomes = try #require(try CLI.json(completed)["results"] as? [[String: Any]])
        #expect(outcomes.count == 11)
        let failed = outcomes.filter { $0["status"] as? String == "failed" }
        #expect(failed.count == 1 && failed.first?["code"] as? String == "signatureValueInvalid", "\(failed)")
        #expect(completed.errorOutput.contains(names[4]))
        #expect(FileManager.default.fileExists(atPath: pendingDirectory + "/" + names[4] + ".pending"))
        #expect(!FileManager.default.fileExists(atPath: signedDirectory + "/" + names[4] + ".p7s"))

        let written = try FileManager.default.contentsOfDirectory(atPath: signedDirectory).sorted()
        let expected = names.enumerated().filter { ![2, 4].contains($0.offset) }.map { $0.element + ".p7s" }.sorted()
        #expect(written == expected, "no hidden temporary file stays beside the signatures")
        for name in expected {
            let document = fixture.directory.path(String(name.dropLast(4)))
            let verified = try OpenSSLCMS.verify(
                signatureFile: signedDirectory + "/" + name,
                contentFile: document,
                caFile: fixture.rootPath,
                cades: true,
                anyPurpose: true
            )
            #expect(verified.succeeded, "\(name): \(verified.errorOutput)")
        }
        let listed = try fixture.run(["--json", "signatures", "list"])
        let rows = try #require(try CLI.json(listed)["signatures"] as? [[String: Any]])
        let ids = Set(outcomes.compactMap { $0["id"] as? String })
        #expect(ids.count == 10 && ids.isSubset(of: Set(rows.compactMap { $0["id"] as? String })), "\(listed.output)")
    }
}
