import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign sign` tells files apart by what they are, not by how they are spelled (it no
/// longer resolves every path name by name): two spellings of one document, an output folder
/// reached through a symbolic link, a signature that is a link to a document.
@Suite struct SignOutputIdentityTests {
    @Test("two spellings of one document would both be signed into one file: refused")
    func twoSpellings() throws {
        let fixture = try CLIFixture()
        let key = ["--p12", fixture.p12Path, "--password-env", "P"]
        let document = try fixture.document("doc.txt", "документ\n")
        try FileManager.default.createDirectory(
            atPath: fixture.directory.path("sub"),
            withIntermediateDirectories: true
        )
        let other = fixture.directory.url.path + "/sub/../doc.txt"
        let result = try fixture.run(["sign", document, other] + key, environment: ["P": fixture.password])
        #expect(result.status == 64)
        #expect(result.errorOutput.contains("would both be signed"), "\(result.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
    }

    @Test("an --out-dir reached through a symbolic link that holds a document's signature name: refused")
    func outputFolderThroughLink() throws {
        let fixture = try CLIFixture()
        let key = ["--p12", fixture.p12Path, "--password-env", "P"]
        try FileManager.default.createDirectory(
            atPath: fixture.directory.path("docs"),
            withIntermediateDirectories: true
        )
        let document = try fixture.document("docs/x.txt", "x\n")
        let alsoDocument = try fixture.document("docs/x.txt.p7s", "a document named like a signature\n")
        let link = fixture.directory.path("link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: fixture.directory.path("docs"))
        let result = try fixture.run(
            ["sign", document, alsoDocument, "--out-dir", link] + key,
            environment: ["P": fixture.password]
        )
        #expect(result.status == 64)
        #expect(result.errorOutput.contains("would replace the document"), "\(result.errorOutput)")
        #expect(try fixture.directory.read("docs/x.txt.p7s") == Array("a document named like a signature\n".utf8))

        // Without the clash, the same folder through the link is fine and the signatures verify.
        let single = try fixture.run(
            ["sign", document, "--out-dir", fixture.directory.path("out")] + key,
            environment: ["P": fixture.password]
        )
        #expect(single.status == 0, "\(single.errorOutput)")
        #expect(try fixture.opensslVerifies(fixture.directory.path("out/x.txt.p7s"), content: document))
    }

    @Test("a signature path that is a symbolic link to a document being signed: refused, document kept")
    func signatureLinkToDocument() throws {
        let fixture = try CLIFixture()
        let key = ["--p12", fixture.p12Path, "--password-env", "P"]
        let first = try fixture.document("first.txt", "first\n")
        let second = try fixture.document("second.txt", "second\n")
        // first.txt.p7s is a link to second.txt, which is signed in the same run.
        try FileManager.default.createSymbolicLink(atPath: first + ".p7s", withDestinationPath: second)
        let result = try fixture.run(["sign", first, second] + key, environment: ["P": fixture.password])
        #expect(result.status == 64)
        #expect(result.errorOutput.contains("would replace the document"), "\(result.errorOutput)")
        #expect(try fixture.directory.read("second.txt") == Array("second\n".utf8))
    }
}
