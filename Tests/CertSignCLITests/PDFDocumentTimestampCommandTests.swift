import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

@Suite("certsign verify FILE.pdf with a document timestamp")
struct PDFDocumentTimestampCommandTests {
    @Test("A pyHanko DocTimeStamp after a certsign signature: kind and time in text and JSON; a tampered one exits 1")
    func documentTimestamp() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let emulator = try DSSEmulator(configuration: .init(requestLogLimit: 0))
        _ = try emulator.start()
        defer { emulator.stop() }
        let tsaCA = try fixture.directory.write("tsa-ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
        let contract = try fixture.directory.write("contract.pdf", TestPDF.minimal())
        let signed = try fixture.run(
            ["sign", contract, "--format", "pades", "--p12", fixture.p12Path, "--password-env", "P12PASS"],
            environment: ["P12PASS": fixture.password]
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
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
        #expect(text.output.contains("VALID: document timestamp"), "\(text.output)")
        #expect(text.output.contains("proven time (document timestamp) \(time)"), "\(text.output)")

        // Without the TSA's anchor the token's chain is not trusted: INVALID, exit 1.
        let untrusted = try fixture.run(["verify", stamped, "--ca", fixture.rootPath])
        #expect(untrusted.status == 1, "\(untrusted.output)")
        #expect(untrusted.output.contains("INVALID: the document timestamp is not valid"), "\(untrusted.output)")
    }
}
