import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// Every message names the thing it is about: the file an option gave, the URL as given (scheme and
/// port kept), a document that is not a PDF.
@Suite(.enabled(if: CLI.isBuilt, "the certsign binary is not built"))
struct MessageSubjectTests {
    @Test("an empty --tsa-ca file and a text file as --ca are named with their option")
    func certificateFilesAreNamed() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("a.txt", "a\n")
        let empty = try fixture.document("empty.pem", "")
        let text = try fixture.document("notes.txt", "not a certificate\n")
        let signed = try fixture.run(
            [
                "sign", document, "--p12", fixture.p12Path, "--password-env", "P", "--tsa", "http://127.0.0.1:9/tsr",
                "--tsa-ca", empty,
            ],
            environment: ["P": fixture.password]
        )
        #expect(signed.status == 1)
        #expect(
            signed.errorOutput.contains("--tsa-ca \(empty): the certificate file is empty"),
            "\(signed.errorOutput)"
        )
        try fixture.signWithP12(document)
        let verified = try fixture.run(["verify", document + ".p7s", "--ca", text])
        #expect(verified.status == 1)
        #expect(verified.errorOutput.contains("--ca \(text): "), "\(verified.errorOutput)")
    }

    @Test("a TSA that refuses the connection: the error shows http://127.0.0.1:PORT/tsr")
    func urlsKeepSchemeAndPort() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("a.txt", "a\n")
        let port = try ReadmeExamplesTests.World.freePort()
        let result = try fixture.run(
            [
                "sign", document, "--p12", fixture.p12Path, "--password-env", "P", "--tsa",
                "http://127.0.0.1:\(port)/tsr",
            ],
            environment: ["P": fixture.password]
        )
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("POST http://127.0.0.1:\(port)/tsr"), "\(result.errorOutput)")
    }

    @Test("a text file signed with --format pades: 'is not a PDF', naming it, no qpdf internals")
    func nonPDFIsNamed() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("letter.txt", "Dear Sir,\n")
        let result = try fixture.run(
            ["sign", document, "--format", "pades", "--p12", fixture.p12Path, "--password-env", "P"],
            environment: ["P": fixture.password]
        )
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("'\(document)' is not a PDF"), "\(result.errorOutput)")
        #expect(!result.errorOutput.contains("trailer"), "\(result.errorOutput)")
    }
}
