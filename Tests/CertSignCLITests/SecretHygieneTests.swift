import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// Runs a representative set of `certsign` commands (identity import/export, sign with --identity
/// and --p12, dss login/certificates/sign, sign --provider cryptopro-dss, wrong passwords, usage
/// failures) and checks that no test secret appears in any stdout, stderr or file the CLI wrote
/// (store, documents, signatures), except inside the encrypted `.p12` files.
@Suite struct SecretHygieneTests {
    /// A distinctive PIN (the standard seed's `123` is too short to grep for safely).
    static let pin = "PIN-7391-Ω"
    static let storePassword = "Хранилище-Store-58"
    static let exportPassword = "Export-Пароль-19"
    static let wrongPassword = "Wrong-Guess-4471"

    @Test func noSecretInAnyOutputOrFile() throws {
        let fixture = try CLIFixture()
        var seed = try EmulatorSeed.standard()
        seed.users[0].certificates[0].pin = Secret(Self.pin)
        let emulator = try DSSEmulator(seed: seed)
        let url = try emulator.start()
        defer { emulator.stop() }

        let secrets = [
            fixture.password, Self.storePassword, Self.exportPassword, Self.wrongPassword,
            StandardSeed.password, StandardSeed.dssPassword, Self.pin,
        ]
        let env = [
            "P12": fixture.password, "STORE": Self.storePassword, "EXPORT": Self.exportPassword,
            "WRONG": Self.wrongPassword,
            "FMP_PASSWORD": StandardSeed.password, "DSS_PASSWORD": StandardSeed.dssPassword, "PIN": Self.pin,
        ]
        var outputs: [(String, Data)] = []
        func certsign(_ arguments: [String], input: String? = nil) throws -> ExternalTool.Result {
            for secret in secrets {
                #expect(!arguments.contains { $0.contains(secret) }, "the test itself put a secret in argv")
            }
            let result = try CLI.run(arguments, store: fixture.store, environment: env, input: input)
            outputs.append(("stdout of \(arguments)", result.standardOutput))
            outputs.append(("stderr of \(arguments)", result.standardError))
            return result
        }

        // Identities: import with a store password, list, show, export, wrong passwords.
        let document = try fixture.document("акт.txt", "Акт № 5\n")
        #expect(
            try certsign([
                "--json", "identity", "import", fixture.p12Path, "--alias", "ivanov", "--password-env", "P12",
                "--store-password-env", "STORE",
            ]).status == 0
        )
        #expect(
            try certsign(
                ["identity", "import", fixture.p12Path, "--alias", "plain", "--password-stdin"],
                input: fixture.password + "\n"
            ).status == 0
        )
        #expect(
            try certsign(["identity", "import", fixture.p12Path, "--alias", "bad", "--password-env", "WRONG"]).status
                == 1
        )
        #expect(
            try certsign(["--json", "identity", "import", fixture.p12Path, "--alias", "bad", "--password-env", "WRONG"])
                .status == 1
        )
        #expect(try certsign(["--json", "identity", "list"]).status == 0)
        #expect(try certsign(["identity", "show", "ivanov"]).status == 0)
        let passwordFile = try fixture.directory.write("store.pass", text: Self.storePassword + "\n")
        #expect(
            try certsign([
                "identity", "export", "ivanov", "--out", fixture.directory.path("exported.p12"), "--password-file",
                passwordFile,
                "--export-password-env", "EXPORT",
            ]).status == 0
        )
        #expect(
            try certsign([
                "--json", "identity", "export", "ivanov", "--out", fixture.directory.path("never.p12"),
                "--password-env", "WRONG",
            ]).status == 1
        )

        // Local signing with a stored identity and with a .p12, right and wrong passwords.
        #expect(
            try certsign(["--json", "sign", document, "--identity", "ivanov", "--password-env", "STORE"]).status == 0
        )
        #expect(
            try certsign([
                "sign", document, "--identity", "ivanov", "--password-env", "WRONG", "--out",
                fixture.directory.path("x.p7s"),
            ]).status == 1
        )
        #expect(
            try certsign(
                [
                    "--json", "sign", document, "--identity", "plain", "--password-stdin", "--out",
                    fixture.directory.path("plain.p7s"),
                ],
                input: Self.wrongPassword
            ).status == 1
        )
        #expect(
            try certsign([
                "sign", document, "--p12", fixture.p12Path, "--password-env", "P12", "--out",
                fixture.directory.path("p12.p7s"),
            ]).status == 0
        )
        #expect(
            try certsign([
                "--json", "sign", document, "--p12", fixture.p12Path, "--password-env", "WRONG", "--out",
                fixture.directory.path("y.p7s"),
            ]).status == 1
        )
        #expect(try certsign(["--json", "signatures", "list"]).status == 0)
        #expect(
            try certsign(["--json", "verify", document + ".p7s", "--content", document, "--ca", fixture.rootPath])
                .status == 0
        )

        // FMP DSS: login, certificates, sign (distinctive PIN), wrong password and PIN, signs.
        #expect(
            try certsign([
                "--json", "dss", "login", "--host", url.absoluteString, "--environment", StandardSeed.environment,
                "--project", StandardSeed.project, "--user", StandardSeed.username, "--password-env", "FMP_PASSWORD",
            ]).status == 0
        )
        #expect(try certsign(["--json", "dss", "certificates", "--dss-password-env", "DSS_PASSWORD"]).status == 0)
        #expect(try certsign(["--json", "dss", "certificates", "--dss-password-env", "WRONG"]).status == 1)
        let sign = [
            "dss", "sign", "--resource", StandardSeed.resource, "--table", StandardSeed.table, "--column",
            StandardSeed.column,
            "--hhive-id", "1", "--certificate-id", String(StandardSeed.certificateID), "--dss-password-env",
            "DSS_PASSWORD",
        ]
        #expect(try certsign(["--json"] + sign + ["--pin-env", "PIN"]).status == 0)
        #expect(try certsign(["--json"] + sign + ["--pin-env", "WRONG"]).status == 1)
        #expect(try certsign(sign + ["--pin-env", "WRONG"]).status == 1)
        #expect(try certsign(["--json", "dss", "signs", "--out-dir", fixture.directory.url.path]).status == 0)
        #expect(
            try certsign([
                "--json", "dss", "login", "--host", url.absoluteString, "--environment", StandardSeed.environment,
                "--project", StandardSeed.project, "--user", StandardSeed.username, "--password-env", "WRONG",
            ]).status == 1
        )

        // CryptoPro DSS through the provider: right and wrong PIN, wrong password, secret on argv refused.
        let cryptoPro = [
            "sign", document, "--provider", "cryptopro-dss", "--param", "url=\(url.absoluteString)",
            "--param", "username=\(StandardSeed.username)", "--param", "certificateID=\(StandardSeed.certificateID)",
        ]
        #expect(
            try certsign(
                cryptoPro + [
                    "--param-env", "password=FMP_PASSWORD", "--param-env", "pin=PIN", "--out",
                    fixture.directory.path("cp.p7s"),
                ]
            ).status == 0
        )
        #expect(
            try certsign(
                ["--json"] + cryptoPro + [
                    "--param-env", "password=FMP_PASSWORD", "--param-env", "pin=WRONG",
                    "--out", fixture.directory.path("cp2.p7s"),
                ]
            ).status == 1
        )
        // A store without the cached session, so the wrong password reaches the server.
        let fresh = ["--store", fixture.directory.path("fresh-store")]
        #expect(
            try certsign(
                fresh + cryptoPro + [
                    "--param-env", "password=WRONG", "--param-env", "pin=PIN", "--out",
                    fixture.directory.path("cp3.p7s"),
                ]
            ).status == 1
        )
        #expect(
            try certsign(
                fresh + cryptoPro + [
                    "--param-file", "password=\(passwordFile)", "--param-env", "pin=PIN",
                    "--out", fixture.directory.path("cp4.p7s"),
                ]
            ).status == 1
        )

        // Every output, then every file written under the store and the work directory.
        #expect(outputs.count > 40)
        for (name, data) in outputs { expectNoSecret(data, secrets, in: name) }
        var files = 0
        for root in [fixture.store.url, fixture.directory.url] {
            let enumerator = try #require(
                FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
            )
            for case let file as URL in enumerator {
                guard (try file.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
                // Encrypted PKCS#12 files (stored identities, exports, the fixture's input) and the
                // password files the test itself wrote are the only places a secret may be.
                if file.pathExtension == "p12" || file.lastPathComponent == "store.pass" { continue }
                expectNoSecret(try Data(contentsOf: file), secrets, in: file.path)
                files += 1
            }
        }
        // The journal database, session file, signatures and documents were all checked.
        #expect(files >= 6)
    }

    private func expectNoSecret(
        _ data: Data,
        _ secrets: [String],
        in name: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for secret in secrets where data.range(of: Data(secret.utf8)) != nil {
            Issue.record("\(name) contains a test secret (\(secret.count) characters)", sourceLocation: sourceLocation)
        }
    }
}
