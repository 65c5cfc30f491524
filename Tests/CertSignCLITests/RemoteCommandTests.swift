import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// The dss commands and `sign --provider cryptopro-dss`, run as real processes against the DSS
/// emulator started in this test process on an ephemeral loopback port.
@Suite struct RemoteCommandTests {
    @Test func fmpWalkThroughWithJSONEnvelopes() throws {
        let emulator = try DSSEmulator()
        let url = try emulator.start()
        defer { emulator.stop() }
        let store = try TemporaryDirectory()
        let env = [
            "FMP_PASSWORD": StandardSeed.password, "DSS_PASSWORD": StandardSeed.dssPassword,
            "PIN": StandardSeed.certificatePIN,
        ]
        func certsign(_ arguments: [String]) throws -> ExternalTool.Result {
            let result = try CLI.run(arguments, store: store, environment: env)
            for secret in [StandardSeed.password, StandardSeed.dssPassword] {
                #expect(!result.output.contains(secret) && !result.errorOutput.contains(secret))
            }
            return result
        }
        let login = try certsign([
            "--json", "dss", "login", "--host", url.absoluteString, "--environment", StandardSeed.environment,
            "--project", StandardSeed.project, "--user", StandardSeed.username, "--password-env", "FMP_PASSWORD",
        ])
        #expect(login.status == 0, "\(login.errorOutput)")
        let envelope = try CLI.json(login)
        #expect(envelope["status"] as? String == "ok")
        #expect((envelope["http"] as? [String: Any])?["status"] as? Int == 200)
        let sessionFile = store.url.appendingPathComponent("fmp-session.json").path
        #expect(
            (try FileManager.default.attributesOfItem(atPath: sessionFile)[.posixPermissions] as? NSNumber)?.intValue
                == 0o600
        )

        let certificates = try certsign(["dss", "certificates", "--dss-password-env", "DSS_PASSWORD"])
        #expect(certificates.status == 0)
        #expect(certificates.output.contains("12831"))
        let wrong = try CLI.run(
            ["dss", "certificates", "--dss-password-env", "WRONG"],
            store: store,
            environment: ["WRONG": "nope"]
        )
        #expect(wrong.status == 1)

        let signed = try certsign([
            "--json", "dss", "sign", "--resource", StandardSeed.resource, "--table", StandardSeed.table,
            "--column", StandardSeed.column, "--hhive-id", "1", "--certificate-id", "12831",
            "--dss-password-env", "DSS_PASSWORD", "--pin-env", "PIN",
        ])
        #expect(signed.status == 0, "\(signed.errorOutput)")
        let signedRaw = try #require((try CLI.json(signed)["result"] as? [String: Any])?["raw"] as? [String: Any])
        #expect(signedRaw["signature_id"] as? Int == 121)

        let out = try TemporaryDirectory()
        let signs = try certsign(["dss", "signs", "--out-dir", out.url.path])
        #expect(signs.output.contains("121"))
        let ca = try out.write("ca.pem", text: emulator.certificateAuthorityPEM)
        let verified = try ExternalTool.run(
            "openssl",
            ["cms", "-verify", "-binary", "-cades", "-inform", "DER", "-in", out.path("121.p7s"), "-CAfile", ca]
        )
        #expect(verified.succeeded, "\(verified.errorOutput)")
        #expect(verified.output == StandardSeed.cellValue)

        #expect(try certsign(["dss", "remove", "121"]).status == 0)
        let again = try certsign(["--json", "dss", "remove", "121"])
        #expect(again.status == 1)
        #expect(try CLI.json(again)["status"] as? String == "error")
        #expect(try certsign(["dss", "signs"]).output.contains("no signatures"))
        #expect(try certsign(["dss", "sign", "--resource", "R"]).status == 64)
    }

    @Test func dssCommandsNeedALoginAndRefuseRemoteHTTP() throws {
        let store = try TemporaryDirectory()
        let notLoggedIn = try CLI.run(["dss", "signs"], store: store)
        #expect(notLoggedIn.status == 1)
        #expect(notLoggedIn.errorOutput.contains("dss login"))
        let insecure = try CLI.run(
            [
                "dss", "login", "--host", "http://fmp.example.invalid/", "--environment", "e", "--project", "p",
                "--user", "u", "--password-env", "X",
            ],
            store: store,
            environment: ["X": "x"]
        )
        #expect(insecure.status == 1)
        #expect(insecure.errorOutput.contains("http"))
    }

    @Test func signThroughCryptoProDSS() throws {
        let emulator = try DSSEmulator()
        let url = try emulator.start()
        defer { emulator.stop() }
        let store = try TemporaryDirectory()
        let document = try store.write("договор.txt", text: "Договор № 7\n")
        let env = ["DSS_USER_PASSWORD": StandardSeed.password, "DSS_PIN": StandardSeed.certificatePIN]
        let signed = try CLI.run(
            [
                "sign", document, "--provider", "cryptopro-dss", "--param", "url=\(url.absoluteString)",
                "--param", "username=\(StandardSeed.username)", "--param-env", "password=DSS_USER_PASSWORD",
                "--param", "certificateID=\(StandardSeed.certificateID)", "--param-env", "pin=DSS_PIN",
            ],
            store: store,
            environment: env
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        #expect(!signed.output.contains(StandardSeed.password) && !signed.errorOutput.contains(StandardSeed.password))
        let ca = try store.write("ca.pem", text: emulator.certificateAuthorityPEM)
        let verified = try ExternalTool.run(
            "openssl",
            [
                "cms", "-verify", "-binary", "-cades", "-inform", "DER", "-in", document + ".p7s",
                "-content", document, "-CAfile", ca, "-out", "/dev/null",
            ]
        )
        #expect(verified.succeeded, "\(verified.errorOutput)")
        let wrongPIN = try CLI.run(
            [
                "sign", document, "--provider", "cryptopro-dss", "--param", "url=\(url.absoluteString)",
                "--param", "username=\(StandardSeed.username)", "--param-env", "password=DSS_USER_PASSWORD",
                "--param", "certificateID=\(StandardSeed.certificateID)", "--param-env", "pin=BAD", "--out",
                store.path("x.p7s"),
            ],
            store: TemporaryDirectory(),
            environment: env.merging(["BAD": "999"]) { $1 }
        )
        #expect(wrongPIN.status == 1)
        #expect(!FileManager.default.fileExists(atPath: store.path("x.p7s")))
    }

    @Test func demoRunsTheWalkThrough() throws {
        let demo = try CLI.run(["demo"])
        #expect(demo.status == 0, "\(demo.errorOutput)")
        for fragment in [
            "Authentication success", "12831", "signature_id 121", "VALID", "removed signature 121", "demo finished",
        ] {
            #expect(demo.output.contains(fragment), "demo output lacks \(fragment)")
        }
    }

    /// The demo keeps to its temporary store: a journal the user names in CERTSIGN_JOURNAL gets none of
    /// its signatures (it used to get the demo's throwaway signature, and the demo then failed, "the
    /// demo's signature is missing from the journal").
    @Test func demoLeavesTheUsersJournalAlone() throws {
        let directory = try TemporaryDirectory()
        let journal = directory.path("kept.sqlite")
        let demo = try CLI.run(["demo"], store: directory, environment: ["CERTSIGN_JOURNAL": "sqlite:" + journal])
        #expect(demo.status == 0, "\(demo.errorOutput)")
        #expect(demo.output.contains("demo finished"), "\(demo.output)")
        #expect(!FileManager.default.fileExists(atPath: journal))
    }
}
