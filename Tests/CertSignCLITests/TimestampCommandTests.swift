import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// `certsign sign --tsa`, `certsign timestamp`, `certsign verify --tsa-ca / --crl / --check-revocation`
/// against an in-process emulator (TSA, CRL) on an ephemeral port.
@Suite("certsign timestamp and revocation options")
struct TimestampCommandTests {
    @Test(
        "sign --tsa makes CAdES-T; timestamp upgrades a CAdES-BES file in place and its journal row; verify reports the timestamp"
    )
    func timestampCommands() throws {
        let fixture = try CLIFixture()
        let emulator = try DSSEmulator(configuration: .init(faultsEnabled: true, requestLogLimit: 0))
        try emulator.start()
        defer { emulator.stop() }
        let tsa = try #require(emulator.timestampURL).absoluteString
        let tsaCA = try fixture.directory.write("tsa-ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
        let environment = ["P12PASS": fixture.password]

        let first = try fixture.document("first.txt", "первый документ\n")
        let signed = try fixture.run(
            [
                "--json", "sign", first, "--p12", fixture.p12Path, "--password-env", "P12PASS", "--tsa", tsa,
                "--tsa-ca", tsaCA,
            ],
            environment: environment
        )
        #expect(signed.succeeded, "\(signed.errorOutput)")
        let signedResult = try #require((try CLI.json(signed)["results"] as? [[String: Any]])?.first)
        #expect(signedResult["format"] as? String == "cades-t")
        #expect(try fixture.opensslVerifies(first + ".p7s", content: first))
        let verified = try fixture.run([
            "--json", "verify", first + ".p7s", "--ca", fixture.rootPath, "--tsa-ca", tsaCA,
        ])
        #expect(verified.succeeded, "\(verified.output)\(verified.errorOutput)")
        let timestamp = try #require(
            (try CLI.json(verified)["signers"] as? [[String: Any]])?.first?["timestamp"] as? [String: Any]
        )
        #expect(timestamp["valid"] as? Bool == true)
        #expect(timestamp["tsa"] as? String == emulator.timestampAuthorityCertificate.subject)
        #expect(timestamp["time"] is String)
        // verify names the format as sign --json does: cades-t, text CAdES-T.
        #expect(try CLI.json(verified)["format"] as? String == "cades-t")
        let verifiedText = try fixture.run(["verify", first + ".p7s", "--ca", fixture.rootPath, "--tsa-ca", tsaCA])
        #expect(verifiedText.output.contains("format:       CAdES-T, detached"), "\(verifiedText.output)")
        // Without the TSA's anchor the token cannot be trusted: INDETERMINATE, timestampInvalid.
        let untrusted = try fixture.run(["--json", "verify", first + ".p7s", "--ca", fixture.rootPath])
        #expect(untrusted.status == 2)
        #expect(try CLI.json(untrusted)["subIndication"] as? String == "NO_CERTIFICATE_CHAIN_FOUND")
        let untrustedStamp = try #require(
            (try CLI.json(untrusted)["signers"] as? [[String: Any]])?.first?["timestamp"] as? [String: Any]
        )
        #expect(untrustedStamp["indication"] as? String == "INDETERMINATE", "\(untrustedStamp)")
        #expect((try CLI.json(untrusted)["failure"] as? [String: Any])?["code"] as? String == "timestampInvalid")

        // A CAdES-BES file, upgraded in place.
        let second = try fixture.document("second.txt", "второй документ\n")
        try fixture.signWithP12(second)
        let before = try Data(contentsOf: URL(fileURLWithPath: second + ".p7s"))
        let upgraded = try fixture.run(["--json", "timestamp", second + ".p7s", "--tsa", tsa, "--tsa-ca", tsaCA])
        #expect(upgraded.succeeded, "\(upgraded.errorOutput)")
        let upgradeResult = try #require((try CLI.json(upgraded)["results"] as? [[String: Any]])?.first)
        #expect(upgradeResult["status"] as? String == "timestamped")
        #expect(upgradeResult["journalRowsUpdated"] as? Int == 1)
        let after = try Data(contentsOf: URL(fileURLWithPath: second + ".p7s"))
        #expect(after != before && after.count > before.count)
        #expect(try fixture.opensslVerifies(second + ".p7s", content: second))
        let list = try CLI.json(try fixture.run(["--json", "signatures", "list"]))
        let rows = try #require(list["signatures"] as? [[String: Any]])
        #expect(rows.first { ($0["document"] as? String) == "second.txt" }?["format"] as? String == "cades-t")
        #expect(rows.first { ($0["document"] as? String) == "first.txt" }?["format"] as? String == "cades-t")
        // Again: nothing to add, the file stays as it is.
        let again = try fixture.run(["--json", "timestamp", second + ".p7s", "--tsa", tsa, "--tsa-ca", tsaCA])
        #expect(again.succeeded)
        #expect(try Data(contentsOf: URL(fileURLWithPath: second + ".p7s")) == after)

        // A TSA fault: typed error, exit 1, the file untouched.
        let third = try fixture.document("third.txt", "третий\n")
        try fixture.signWithP12(third)
        let untouched = try Data(contentsOf: URL(fileURLWithPath: third + ".p7s"))
        let faulty = try fixture.run([
            "--json", "timestamp", third + ".p7s", "--tsa", tsa + "/wrong-nonce", "--tsa-ca", tsaCA,
        ])
        #expect(faulty.status == 1)
        #expect((try CLI.json(faulty)["results"] as? [[String: Any]])?.first?["code"] as? String == "timestampInvalid")
        #expect(try Data(contentsOf: URL(fileURLWithPath: third + ".p7s")) == untouched)
        #expect(try fixture.run(["timestamp", third + ".p7s"]).status == 64)
    }

    @Test(
        "verify --crl: good before the revocation, signerRevoked after; --check-revocation with no source is revocationUnknown"
    )
    func crlOptions() async throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("doc.txt", "акт\n")
        try fixture.signWithP12(document)
        // An emulator seeded with the fixture's CA serves that CA's CRL.
        let seed = EmulatorSeed(
            certificateAuthority: fixture.pki.root.certificate,
            users: [],
            cells: [],
            firstSignatureID: 1,
            certificateAuthorityKey: fixture.pki.root.key
        )
        let emulator = try DSSEmulator(configuration: .init(requestLogLimit: 0), seed: seed)
        try emulator.start()
        defer { emulator.stop() }
        func crl(_ name: String) throws -> String {
            let result = try ExternalTool.run(
                "curl",
                ["-sf", "-o", fixture.directory.path(name), try #require(emulator.crlURL).absoluteString]
            )
            #expect(result.succeeded)
            return fixture.directory.path(name)
        }
        let clean = try crl("clean.crl")
        let good = try fixture.run(["--json", "verify", document + ".p7s", "--ca", fixture.rootPath, "--crl", clean])
        #expect(good.succeeded, "\(good.output)")
        #expect(
            ((try CLI.json(good)["signers"] as? [[String: Any]])?.first?["revocation"] as? [String: Any])?["status"]
                as? String == "good"
        )
        emulator.revoke(fixture.signer.certificate)
        let listed = try crl("revoked.crl")
        let pem = try ExternalTool.run(
            "openssl",
            ["crl", "-inform", "DER", "-in", listed, "-out", fixture.directory.path("revoked.pem")]
        )
        #expect(pem.succeeded)
        for file in [listed, fixture.directory.path("revoked.pem")] {
            let revoked = try fixture.run([
                "--json", "verify", document + ".p7s", "--ca", fixture.rootPath, "--crl", file,
            ])
            // Revoked, and nothing proves the signature existed before: INDETERMINATE, exit 2.
            #expect(revoked.status == 2)
            #expect(try CLI.json(revoked)["subIndication"] as? String == "REVOKED_NO_POE", "\(revoked.output)")
            #expect(
                (try CLI.json(revoked)["failure"] as? [String: Any])?["code"] as? String == "signerRevoked",
                "\(revoked.output)"
            )
        }
        let nowhere = try fixture.run([
            "--json", "verify", document + ".p7s", "--ca", fixture.rootPath, "--check-revocation",
        ])
        #expect(nowhere.status == 2)
        #expect(try CLI.json(nowhere)["subIndication"] as? String == "TRY_LATER", "\(nowhere.output)")
        #expect(
            (try CLI.json(nowhere)["failure"] as? [String: Any])?["code"] as? String == "revocationUnknown",
            "\(nowhere.output)"
        )
        #expect(
            try fixture.run(["verify", document + ".p7s", "--ca", fixture.rootPath, "--crl", fixture.rootPath]).status
                != 0
        )
    }
}
