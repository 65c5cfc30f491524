import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign verify` under the validation model: `--at`, every signer listed,
/// attached content never replaced by a file beside it, the digest always named.
@Suite struct VerifyCommandTests {
    static func utc(_ text: String) throws -> Date { try #require(ISO8601DateFormatter().date(from: text)) }

    /// openssl cms -sign with a certificate and key of `identity`, written beside `document`.
    func opensslSign(
        _ fixture: CLIFixture,
        identity: SigningIdentity,
        document: String,
        output: String,
        extra: [String] = []
    ) throws {
        let key = try fixture.directory.write(
            "k-\(UUID().uuidString).pem",
            text: try (identity.key as! LocalSigningKey).pemRepresentation(password: nil)
        )
        let certificate = try fixture.directory.write(
            "c-\(UUID().uuidString).pem",
            text: identity.certificate.pemRepresentation
        )
        let made = try ExternalTool.run(
            "openssl",
            [
                "cms", "-sign", "-binary", "-in", document, "-signer", certificate, "-inkey", key,
                "-outform", "DER", "-out", output,
            ] + extra
        )
        try #require(made.succeeded, "\(made.errorOutput)")
    }

    @Test(
        "--at validates as of a past time; without it a certificate expired now is INVALID whatever the signature claims"
    )
    func validationTime() throws {
        let fixture = try CLIFixture()
        let pki = try TestPKI(
            rootSubject: "CN=Audit Root",
            validity: try Self.utc("2019-01-01T00:00:00Z")...Date().addingTimeInterval(86_400 * 365)
        )
        let expired = try pki.issueLeaf(
            subject: "CN=Expired 2021",
            validity: try Self.utc("2019-06-01T00:00:00Z")...Self.utc("2021-06-01T00:00:00Z")
        )
        let root = try fixture.directory.write("audit-root.pem", text: pki.root.certificate.pemRepresentation)
        let document = try fixture.document("audit.txt", "Номер 1\n")
        try opensslSign(fixture, identity: expired, document: document, output: document + ".p7s")

        // Expired now, and nothing proves it was signed before: INDETERMINATE, exit 2.
        let now = try fixture.run(["--json", "verify", document + ".p7s", "--ca", root])
        #expect(now.status == 2)
        #expect((try CLI.json(now)["failure"] as? [String: Any])?["code"] as? String == "signerExpired")
        #expect(try CLI.json(now)["indication"] as? String == "INDETERMINATE")
        #expect(try CLI.json(now)["subIndication"] as? String == "OUT_OF_BOUNDS_NO_POE")
        let audit = try fixture.run([
            "--json", "verify", document + ".p7s", "--ca", root, "--at", "2020-06-01T12:00:00Z",
        ])
        #expect(audit.status == 0, "\(audit.output)")
        let json = try CLI.json(audit)
        #expect(json["validationTime"] as? String == "2020-06-01T12:00:00Z")
        #expect((json["signers"] as? [[String: Any]])?.first?["checkedAt"] as? String == "2020-06-01T12:00:00Z")
        let text = try fixture.run(["verify", document + ".p7s", "--ca", root, "--at", "2020-06-01T15:00:00+03:00"])
        #expect(text.status == 0)
        #expect(text.output.contains("checked at:"), "\(text.output)")
        #expect(text.output.contains("(claimed by the signer)"))
        #expect(try fixture.run(["verify", document + ".p7s", "--ca", root, "--at", "yesterday"]).status == 64)
    }

    @Test("Every signer is listed in text and in JSON signers; the top level keeps the first signer's fields")
    func everySigner() throws {
        let fixture = try CLIFixture()
        let second = try fixture.pki.issueLeaf(subject: "CN=Второй Подписант", keyType: .rsa2048)
        let document = try fixture.document("two.txt", "два подписанта\n")
        let one = fixture.directory.path("one.p7s")
        try opensslSign(fixture, identity: fixture.signer, document: document, output: one)
        let key = try fixture.directory.write(
            "second.key",
            text: try (second.key as! LocalSigningKey).pemRepresentation(password: nil)
        )
        let certificate = try fixture.directory.write("second.pem", text: second.certificate.pemRepresentation)
        let resigned = try ExternalTool.run(
            "openssl",
            [
                "cms", "-resign", "-binary", "-inform", "DER", "-in", one, "-signer", certificate,
                "-inkey", key, "-outform", "DER", "-out", document + ".p7s",
            ]
        )
        try #require(resigned.succeeded, "\(resigned.errorOutput)")

        let text = try fixture.run(["verify", document + ".p7s", "--ca", fixture.rootPath])
        #expect(text.status == 0, "\(text.output)")
        #expect(
            text.output.hasPrefix("PASSED\n") && text.output.contains("signer 1 of 2: PASSED")
                && text.output.contains("signer 2 of 2: PASSED"),
            "\(text.output)"
        )
        #expect(text.output.contains("CN=Второй Подписант") && text.output.contains("CN=Подписант CLI"))

        let json = try CLI.json(try fixture.run(["--json", "verify", document + ".p7s", "--ca", fixture.rootPath]))
        let signers = try #require(json["signers"] as? [[String: Any]])
        #expect(signers.count == 2)
        let subjects = Set(signers.compactMap { ($0["signer"] as? [String: Any])?["subject"] as? String })
        #expect(subjects == ["CN=Второй Подписант", "CN=Подписант CLI,O=ООО Ромашка"])
        for signer in signers {
            #expect(signer["valid"] as? Bool == true)
            #expect(signer["chainChecked"] as? Bool == true)
            #expect(signer["digest"] as? String == "sha256")
            #expect(signer["signingTime"] as? String != nil)
            #expect((signer["chain"] as? [String])?.count == 2)
            #expect(signer["signatureAlgorithm"] as? String != nil)
        }
        #expect(
            (json["signer"] as? [String: Any])?["subject"] as? String == (signers[0]["signer"] as? [String: Any])?[
                "subject"
            ] as? String
        )
        #expect(json["digest"] as? String == "sha256")
        #expect(json["valid"] as? Bool == true)
    }

    @Test(
        "An attached signature is checked over its embedded content, never over DOC beside DOC.p7s; --content must match it"
    )
    func attachedBeside() throws {
        let fixture = try CLIFixture()
        #expect(try fixture.importIdentity(alias: "a"))
        let document = try fixture.document("attached.txt", "оригинал\n")
        let signed = try fixture.run(
            ["sign", document, "--identity", "a", "--password-stdin", "--attached"],
            input: fixture.password + "\n"
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        // The file beside changes; the signature embeds the original.
        _ = try fixture.document("attached.txt", "подмена\n")

        let beside = try fixture.run(["--json", "verify", document + ".p7s", "--ca", fixture.rootPath])
        #expect(beside.status == 0, "\(beside.output)")
        let json = try CLI.json(beside)
        #expect(json["detached"] as? Bool == false)
        #expect(json["content"] == nil, "the file beside was not used")
        let given = try fixture.run([
            "--json", "verify", document + ".p7s", "--content", document, "--ca", fixture.rootPath,
        ])
        #expect(given.status == 1)
        #expect((try CLI.json(given)["failure"] as? [String: Any])?["code"] as? String == "contentChanged")
    }

    @Test("A SHA-1 signature is INDETERMINATE (weakAlgorithm, exit 2) and its digest is named in the JSON")
    func weakDigestNamed() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("sha1.txt", "SHA-1\n")
        try opensslSign(
            fixture,
            identity: fixture.signer,
            document: document,
            output: document + ".p7s",
            extra: ["-md", "sha1"]
        )
        // A refused algorithm: a proof of existence from before it was refused could still save it.
        let result = try fixture.run(["--json", "verify", document + ".p7s", "--ca", fixture.rootPath])
        #expect(result.status == 2)
        let json = try CLI.json(result)
        #expect(json["subIndication"] as? String == "CRYPTO_CONSTRAINTS_FAILURE_NO_POE")
        #expect(json["digest"] as? String == "sha1")
        #expect((json["failure"] as? [String: Any])?["code"] as? String == "weakAlgorithm")
        let text = try fixture.run(["verify", document + ".p7s", "--ca", fixture.rootPath])
        #expect(text.output.contains("SHA1"), "\(text.output)")
    }
}
