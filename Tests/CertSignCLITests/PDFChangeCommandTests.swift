import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@Suite("certsign verify FILE.pdf: a change the policy does not allow exits 1; --allow-changes makes it a warning")
struct PDFChangeCommandTests {
    @Test func attackExitsOneUnlessAllowed() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (passwordFile, contract) = try fixture.passwordFileAndContract()
        let signed = try fixture.run([
            "sign", contract, "--format", "pades", "--p12", fixture.p12Path, "--password-file", passwordFile,
        ])
        #expect(signed.status == 0, "\(signed.errorOutput)")
        let signedPath = fixture.directory.path("contract-signed.pdf")
        // An xref-only update frees the page's content stream (a shadow "hide").
        let attacked = fixture.directory.path("attacked.pdf")
        try PDFAttacks.apply(.freeContents, to: signedPath, writingTo: attacked)

        let refused = try fixture.run(["--json", "verify", attacked, "--ca", fixture.rootPath])
        #expect(refused.status == 1, "\(refused.output) \(refused.errorOutput)")
        let json = try CLI.json(refused)
        #expect(json["valid"] as? Bool == false)
        #expect(json["revisions"] as? Int == 3)
        let signature = try #require((json["signatures"] as? [[String: Any]])?.first)
        #expect(signature["valid"] as? Bool == false)
        let pdf = try #require(signature["pdf"] as? [String: Any])
        #expect(pdf["laterChanges"] as? String == "other")
        #expect(pdf["changesAllowed"] as? Bool == false)
        #expect(pdf["laterRevisionsSigned"] as? Bool == false)
        let change = try #require((pdf["changes"] as? [[String: Any]])?.first)
        #expect(change["kind"] as? String == "other")
        #expect(change["revision"] as? Int == 3)
        #expect(change["allowed"] as? Bool == false)
        let contents = try PDFAttacks.firstContentsObject(signedPath)
        #expect((change["objects"] as? [Int])?.contains(contents) == true, "\(change)")
        #expect((change["text"] as? String)?.contains("/Contents") == true, "\(change)")

        // One verdict for the signature, first: FAILED for the change, never VALID beside it.
        let text = try fixture.run(["verify", attacked, "--ca", fixture.rootPath])
        #expect(text.status == 1)
        #expect(
            text.output.hasPrefix(
                "field 'Signature1' (revision 2 of 3): FAILED: FORMAT_FAILURE — 1 later change the signature's policy does not allow"
            ),
            "\(text.output)"
        )
        #expect(!text.output.contains("VALID") && !text.output.contains("PASSED"), "\(text.output)")
        #expect(text.output.contains("\n1 later change(s) the signature's policy does not allow:"), "\(text.output)")
        #expect(text.output.contains("revision 3:"), "\(text.output)")

        let allowed = try fixture.run(["--json", "verify", attacked, "--ca", fixture.rootPath, "--allow-changes"])
        #expect(allowed.status == 0, "\(allowed.output) \(allowed.errorOutput)")
        let allowedJSON = try CLI.json(allowed)
        #expect(allowedJSON["valid"] as? Bool == true)
        let allowedPDF = try #require(
            ((allowedJSON["signatures"] as? [[String: Any]])?.first)?["pdf"] as? [String: Any]
        )
        #expect(allowedPDF["laterChanges"] as? String == "other")
        #expect(allowedPDF["changesAllowed"] as? Bool == false)
        let warned = try fixture.run(["verify", attacked, "--ca", fixture.rootPath, "--allow-changes"])
        #expect(warned.status == 0)
        #expect(warned.output.contains("WARNING (--allow-changes)"), "\(warned.output)")
    }
}
