import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// `certsign complete PENDING --cms FILE`: a whole CMS made elsewhere (`openssl cms -sign -cades`,
/// pyHanko over a PDF's prepared digest) completes a pending signature once it is checked; a CMS of
/// another key or document, garbage, an edited pending file or a second completion exit 1, name what
/// is wrong and write nothing.
extension PendingCommandTests {
    /// `openssl cms -sign -cades` of `document` with the signer's certificate and key into `name`
    /// (detached unless `attached`; `cades: false` leaves out the ESS attribute).
    func opensslCMS(
        _ document: String,
        _ signer: Signer,
        into name: String,
        attached: Bool = false,
        cades: Bool = true
    ) throws -> String {
        let output = signer.fixture.directory.path(name)
        var arguments = [
            "cms", "-sign", "-binary", "-in", document, "-signer", signer.certificate, "-inkey", signer.key,
            "-outform", "DER", "-out", output, "-md", "sha256",
        ]
        if cades { arguments.append("-cades") }
        if attached { arguments.append("-nodetach") }
        try ExternalTool.run("openssl", arguments).requireSuccess()
        return output
    }

    @Test("prepare, openssl cms -sign -cades, complete --cms: CAdES openssl cms -verify accepts, recorded, B-T added")
    func cadesFromAnOpenSSLCMS() throws {
        let signer = try Signer(OpenSSLExternalSigner.all[0])
        let fixture = signer.fixture
        let (emulator, tsa, tsaCA) = try signer.startTimestampAuthority()
        defer { emulator.stop() }
        let document = try fixture.document("акт.txt", "Акт сверки № 7\n")
        let prepared = try signer.prepare(document, ["--level", "b-t", "--tsa", tsa, "--tsa-ca", tsaCA])
        let pendingFile = try #require(prepared["pendingFile"] as? String)
        let cms = try opensslCMS(document, signer, into: "акт.cms")

        let result = try signer.complete(pendingFile, ["--cms", cms])
        #expect(result["status"] as? String == "completed" && result["format"] as? String == "cades-t", "\(result)")
        #expect(!FileManager.default.fileExists(atPath: pendingFile))
        try signer.expectCompletedCAdES(document, result: result)
        let checked = try fixture.run([
            "--json", "verify", document + ".p7s", "--ca", fixture.rootPath, "--tsa-ca", tsaCA,
        ])
        #expect(checked.status == 0, "\(checked.output) \(checked.errorOutput)")
        #expect(checked.output.contains("cades-t"), "\(checked.output)")
    }

    @Test("an attached pending signature takes an attached CMS of the document; a detached one is refused")
    func attachedFromAnOpenSSLCMS() throws {
        let signer = try Signer(OpenSSLExternalSigner.all[2])
        let fixture = signer.fixture
        let document = try fixture.document("note.txt", "заметка\n")
        let pendingFile = try #require(try signer.prepare(document, ["--attached"])["pendingFile"] as? String)
        let detached = try opensslCMS(document, signer, into: "detached.cms")
        let refused = try fixture.run(["complete", pendingFile, "--cms", detached])
        #expect(refused.status == 1 && refused.errorOutput.contains("it is detached"), "\(refused.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))

        let attached = try opensslCMS(document, signer, into: "attached.cms", attached: true)
        let completed = try fixture.run(["complete", pendingFile, "--cms", attached])
        #expect(completed.status == 0, "\(completed.errorOutput)")
        let verified = try OpenSSLCMS.verify(
            signatureFile: document + ".p7s",
            caFile: fixture.rootPath,
            cades: true,
            anyPurpose: true
        )
        #expect(verified.succeeded, "\(verified.errorOutput)")
    }

    @Test(
        "another key, another document, no ESS attribute, garbage, an edited pending file, twice: exit 1, nothing written"
    )
    func badCMSAnswersAreRefused() throws {
        let signer = try Signer(OpenSSLExternalSigner.all[0])
        let fixture = signer.fixture
        let document = try fixture.document("plan.txt", "Бюджетный план 2026\n")
        let other = try fixture.document("other.txt", "другой документ\n")
        let pendingFile = try #require(try signer.prepare(document)["pendingFile"] as? String)
        let signature = document + ".p7s"

        func refused(
            _ pending: String,
            _ cms: String,
            _ words: String,
            _ location: SourceLocation = #_sourceLocation
        ) throws {
            try signer.expectRefused(
                [pending, "--cms", cms],
                naming: words,
                signature: signature,
                kept: [pendingFile],
                location
            )
        }
        let stranger = try Signer(OpenSSLExternalSigner.all[0])
        try refused(
            pendingFile,
            try opensslCMS(document, stranger, into: "stranger.cms"),
            "not by the selected certificate"
        )
        try refused(pendingFile, try opensslCMS(other, signer, into: "other.cms"), "signs another document")
        try refused(
            pendingFile,
            try opensslCMS(document, signer, into: "plain.cms", cades: false),
            "signing-certificate-v2"
        )
        try refused(
            pendingFile,
            try fixture.directory.write("junk.cms", text: "not a signature"),
            "is not a CMS signature"
        )

        let good = try opensslCMS(document, signer, into: "good.cms")
        try refused(try signer.alteredCopy(of: pendingFile), good, "was altered")

        let both = try fixture.run(["complete", pendingFile, "--cms", good, "--signature-value", good])
        #expect(both.status == 64 && both.errorOutput.contains("one of them"), "\(both.errorOutput)")
        #expect(try fixture.run(["complete", pendingFile, "--cms", good]).status == 0)
        let twice = try fixture.run(["complete", pendingFile, "--cms", good, "--force"])
        #expect(twice.status == 1 && twice.errorOutput.contains("does not exist"), "\(twice.errorOutput)")
    }

    @Test("prepare --format pades, pyHanko signs the prepared digest, complete --cms: a PDF pyHanko accepts")
    func padesFromAPyHankoCMS() throws {
        try #require(ExternalTool.isAvailable("python3"), "needs python3 with pyHanko")
        let signer = try Signer(OpenSSLExternalSigner.all[2])
        let fixture = signer.fixture
        let (_, contract) = try fixture.passwordFileAndContract()
        let original = try Data(contentsOf: URL(fileURLWithPath: contract))
        _ = try signer.prepare(contract, ["--format", "pades"])
        let pendingFile = contract + ".pending"
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: pendingFile)))
                as? [String: Any]
        )
        let digestText = try #require(object["contentDigest"] as? String)
        let digest = try #require(Data(base64Encoded: digestText))
        let signed = fixture.directory.path("contract-signed.pdf")

        // pyHanko over another digest: refused, nothing written, the PDF untouched.
        let wrong = try PyHankoSigner.signDigest(
            Array(repeating: 1, count: 32),
            key: signer.key,
            certificate: signer.certificate,
            in: fixture.directory
        )
        let refused = try fixture.run([
            "complete", pendingFile, "--cms", try fixture.directory.write("wrong.p7s", wrong),
        ])
        #expect(refused.status == 1 && refused.errorOutput.contains("signs another document"), "\(refused.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: signed))
        #expect(try Data(contentsOf: URL(fileURLWithPath: contract)) == original)

        let cms = try PyHankoSigner.signDigest(
            Array(digest),
            key: signer.key,
            certificate: signer.certificate,
            in: fixture.directory
        )
        let completed = try fixture.run(["complete", pendingFile, "--cms", try fixture.directory.write("cms.p7s", cms)])
        #expect(completed.status == 0, "\(completed.errorOutput)")
        let verdicts = try PyHankoValidator.validate(signed, root: fixture.pki.root.certificate, in: fixture.directory)
        #expect(verdicts.count == 1 && verdicts.allSatisfy { $0.contains("INTACT:TRUSTED") }, "\(verdicts)")
        let verified = try fixture.run(["verify", signed, "--ca", fixture.rootPath])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
    }
}
