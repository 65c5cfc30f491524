import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

@Suite("certsign verify FILE.pdf with a document timestamp")
struct PDFDocumentTimestampCommandTests {
    @Test("A pyHanko DocTimeStamp after a certsign signature: kind and time in text and JSON; an untrusted one exits 2")
    func documentTimestamp() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let emulator = try DSSEmulator(configuration: .init(requestLogLimit: 0))
        _ = try emulator.start()
        defer { emulator.stop() }
        let tsaCA = try fixture.directory.write("tsa-ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
        let contract = try fixture.directory.write("contract.pdf", TestPDF.minimal())
        try fixture.signWithP12(contract, ["--format", "pades"])
        let stamped = fixture.directory.path("stamped.pdf")
        try PyHankoTimestamper.addDocumentTimestamp(
            fixture.directory.path("contract-signed.pdf"),
            output: stamped,
            tsaURL: try #require(emulator.timestampURL),
            field: "Archive"
        )

        let verified = try fixture.run(["--json", "verify", stamped, "--ca", fixture.rootPath, "--tsa-ca", tsaCA])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
        let signatures = try #require(try CLI.json(verified)["signatures"] as? [[String: Any]])
        let pdf = signatures.compactMap { $0["pdf"] as? [String: Any] }
        #expect(pdf.map { $0["kind"] as? String } == ["signature", "documentTimestamp"])
        #expect(pdf.map { $0["field"] as? String } == ["Signature1", "Archive"])
        let time = try #require(pdf.last?["documentTimestamp"] as? String)
        #expect(pdf.last?["provenTime"] as? String == time)
        #expect(pdf.first?["documentTimestamp"] == nil)
        #expect(signatures.last?["valid"] as? Bool == true)

        let text = try fixture.run(["verify", stamped, "--ca", fixture.rootPath, "--tsa-ca", tsaCA])
        #expect(text.status == 0)
        #expect(text.output.contains("field 'Archive' (revision 3 of 3): PASSED\n"), "\(text.output)")
        #expect(text.output.contains("proven time (document timestamp) \(time)"), "\(text.output)")
        // The signature is B-T through the document timestamp after it, and its line says so: no
        // "no proven time" beside its B-T level, no CMS format beside it.
        #expect(text.output.hasPrefix("field 'Signature1' (revision 2 of 3): PASSED\n"), "\(text.output)")
        #expect(
            text.output.contains(
                "level: PAdES-B-T; claimed time (/M) "
            ) && text.output.contains("; its time is proven by a later document timestamp"),
            "\(text.output)"
        )
        #expect(!text.output.contains("no proven time") && !text.output.contains("format:"), "\(text.output)")

        // Without the TSA's anchor the token's chain is not trusted: INDETERMINATE, exit 2.
        let untrusted = try fixture.run(["verify", stamped, "--ca", fixture.rootPath])
        #expect(untrusted.status == 2, "\(untrusted.output)")
        #expect(
            untrusted.output.contains(
                "field 'Archive' (revision 3 of 3): INDETERMINATE: NO_CERTIFICATE_CHAIN_FOUND — the document timestamp is not valid"
            ),
            "\(untrusted.output)"
        )
    }

    @Test(
        "certsign timestamp FILE.pdf adds our DocTimeStamp in place; verify says PASSED; a failing TSA changes nothing"
    )
    func timestampCommandOnAPDF() throws {
        let fixture = try CLIFixture(keyType: .p256)
        let emulator = try DSSEmulator(configuration: .init(requestLogLimit: 0))
        _ = try emulator.start()
        defer { emulator.stop() }
        let tsaURL = try #require(emulator.timestampURL)
        let tsaCA = try fixture.directory.write("tsa-ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
        let contract = try fixture.directory.write("contract.pdf", TestPDF.minimal())
        try fixture.signWithP12(contract, ["--format", "pades"])
        let pdf = fixture.directory.path("contract-signed.pdf")
        let before = try Data(contentsOf: URL(fileURLWithPath: pdf))

        // A TSA that is not there (port 1: nothing listens): exit 1, the file untouched.
        let failed = try fixture.run(["timestamp", pdf, "--tsa", "http://127.0.0.1:1/tsa"])
        #expect(failed.status == 1, "\(failed.output) \(failed.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: pdf)) == before)

        let stamped = try fixture.run(["--json", "timestamp", pdf, "--tsa", tsaURL.absoluteString, "--tsa-ca", tsaCA])
        #expect(stamped.status == 0, "\(stamped.output) \(stamped.errorOutput)")
        let results = try #require(try CLI.json(stamped)["results"] as? [[String: Any]])
        #expect(results.first?["status"] as? String == "timestamped")
        #expect(results.first?["field"] as? String == "Signature2")
        let after = try Data(contentsOf: URL(fileURLWithPath: pdf))
        #expect(after.count > before.count && after.prefix(before.count) == before, "an incremental update")
        let qpdf = try ExternalTool.run("qpdf", ["--check", pdf])
        #expect(qpdf.status == 0, "\(qpdf.output)")

        let verified = try fixture.run(["--json", "verify", pdf, "--ca", fixture.rootPath, "--tsa-ca", tsaCA])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
        let signatures = try #require(try CLI.json(verified)["signatures"] as? [[String: Any]])
        let kinds = signatures.compactMap { ($0["pdf"] as? [String: Any])?["kind"] as? String }
        #expect(kinds == ["signature", "documentTimestamp"])
        #expect(signatures.allSatisfy { $0["valid"] as? Bool == true }, "\(signatures)")
    }
}
