import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign tokens` and `certsign sign --provider pkcs11`, run as child processes against tokens in a
/// directory of each test's own (a child process reads its own `SOFTHSM2_CONF`). OpenSC's
/// `pkcs11-spy.so` sits between certsign and SoftHSM where a test counts `C_Login` calls.
@Suite(
    "PKCS#11 in the certsign CLI",
    .enabled(
        if: SoftHSMFixture.isAvailable && CLI.isBuilt,
        "softhsm2, opensc, openssl or the certsign binary is missing"
    )
)
struct PKCS11CLITests {
    static let spyModule = "/usr/lib/x86_64-linux-gnu/pkcs11-spy.so"

    /// A token directory with one token `cli` holding `rsakey` (id 01) and its certificate.
    struct OwnToken {
        let directory: TemporaryDirectory
        let configPath: String
        let serial: String

        init() throws {
            directory = try TemporaryDirectory(prefix: "pkcs11-cli")
            try FileManager.default.createDirectory(atPath: directory.path("tokens"), withIntermediateDirectories: true)
            configPath = try directory.write(
                "softhsm2.conf",
                text:
                    "directories.tokendir = \(directory.path("tokens"))\nobjectstore.backend = file\nlog.level = ERROR\n"
            )
            try SoftHSMFixture.tool(
                "openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                    directory.path("ca.key"), "-out", directory.path("ca.pem"), "-subj", "/CN=CLI Token CA", "-days",
                    "30",
                ],
                config: configPath
            )
            let maker = TokenMaker(
                directory: directory,
                configPath: configPath,
                caPath: directory.path("ca.pem"),
                caKeyPath: directory.path("ca.key")
            )
            serial = try maker.initToken("cli")
            try maker.keyPair(
                token: "cli",
                id: "01",
                label: "rsakey",
                type: "rsa:2048",
                subject: "/CN=CLI Token Signer"
            )
        }

        /// Runs certsign with this token directory, a private store, and `environment`.
        func certsign(_ arguments: [String], environment: [String: String] = [:]) throws -> ExternalTool.Result {
            try CLI.run(
                arguments,
                environment: [
                    "SOFTHSM2_CONF": configPath, "CERTSIGN_HOME": directory.path("home"),
                ].merging(environment) { _, new in new }
            )
        }

        /// `certsign sign` of a new document with the RSA key through pkcs11-spy (`spyModule`) in front of
        /// SoftHSM, the PIN from the environment; the result and the spy's log path.
        func signThroughSpy(pin: String, spyModule: String) throws -> (ExternalTool.Result, String) {
            let document = try directory.write("doc.txt", text: "doc\n")
            let log = directory.path("spy.log")
            let result = try certsign(
                [
                    "sign", document, "--provider", "pkcs11", "--param", "uri=pkcs11:token=cli;object=rsakey",
                    "--param", "module=\(spyModule)", "--param-env", "pin=TOKEN_PIN",
                ],
                environment: ["TOKEN_PIN": pin, "PKCS11SPY": SoftHSMFixture.softHSMModule, "PKCS11SPY_OUTPUT": log]
            )
            return (result, log)
        }

        /// `C_Login` calls and their results in a pkcs11-spy log.
        func logins(inSpyLog path: String) throws -> [String] {
            let lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
            var results: [String] = []
            for (index, line) in lines.enumerated() where line.hasSuffix(": C_Login") {
                results.append(lines[index...].first { $0.hasPrefix("Returned:") } ?? "no result")
            }
            return results
        }
    }

    @Test("certsign tokens lists the token, its flags and the key's pkcs11: URI; --json too")
    func tokens() throws {
        let token = try OwnToken()
        let human = try token.certsign(["tokens", "--module", SoftHSMFixture.softHSMModule])
        #expect(human.succeeded, "\(human.errorOutput)")
        #expect(human.output.contains("token 'cli'"))
        #expect(human.output.contains("login required"))
        #expect(
            human.output.contains("pkcs11:token=cli;serial=\(token.serial);object=rsakey;id=%01"),
            "\(human.output)"
        )
        let json = try token.certsign(["--json", "tokens", "--module", SoftHSMFixture.softHSMModule])
        let object = try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any]
        let tokens = try #require(object?["tokens"] as? [[String: Any]])
        #expect(tokens.count == 1)
        let keys = try #require(tokens.first?["keys"] as? [[String: Any]])
        #expect(keys.first?["subject"] as? String == "CN=CLI Token Signer")
        let providers = try token.certsign(["providers"])
        #expect(providers.output.contains("pkcs11"), "\(providers.output)")
        let missing = try token.certsign(["tokens", "--module", "/etc/hostname"])
        #expect(missing.status == 1 && missing.errorOutput.contains("/etc/hostname"))
    }

    @Test(
        "certsign sign --provider pkcs11 --param uri=… --param-env pin=VAR makes a CAdES-BES openssl accepts; --param pin=… is refused"
    )
    func sign() throws {
        let token = try OwnToken()
        let document = try token.directory.write("invoice.txt", text: "invoice 42\n")
        let result = try token.certsign(
            [
                "sign", document, "--provider", "pkcs11", "--param", "uri=pkcs11:token=cli;object=rsakey",
                "--param", "module=\(SoftHSMFixture.softHSMModule)", "--param-env", "pin=TOKEN_PIN",
            ],
            environment: ["TOKEN_PIN": SoftHSMFixture.pin]
        )
        #expect(result.succeeded, "\(result.errorOutput)")
        let verify = try ExternalTool.run(
            "openssl",
            [
                "cms", "-verify", "-binary", "-inform", "DER", "-in", document + ".p7s", "-content", document,
                "-CAfile", token.directory.path("ca.pem"), "-purpose", "any", "-out", "/dev/null",
            ]
        )
        #expect(verify.succeeded, "\(verify.errorOutput)")
        let onCommandLine = try token.certsign([
            "sign", document, "--provider", "pkcs11", "--param", "uri=pkcs11:token=cli;object=rsakey",
            "--param", "pin=\(SoftHSMFixture.pin)",
        ])
        #expect(onCommandLine.status == 64)
    }

    @Test("wrong PIN through pkcs11-spy: exactly one C_Login (CKR_PIN_INCORRECT), exit 1, the token marks one failure")
    func wrongPINOneLogin() throws {
        try #require(FileManager.default.fileExists(atPath: Self.spyModule), "OpenSC's pkcs11-spy.so is not installed")
        let token = try OwnToken()
        let flags = {
            try SoftHSMFixture.tool(
                "pkcs11-tool",
                ["--module", SoftHSMFixture.softHSMModule, "-T"],
                config: token.configPath
            ).output
        }
        #expect(!(try flags()).contains("user PIN count low"))
        let (result, log) = try token.signThroughSpy(pin: "wrong-pin-Жz", spyModule: Self.spyModule)
        #expect(result.status == 1)
        #expect(
            !result.output.contains("wrong-pin-Жz") && !result.errorOutput.contains("wrong-pin-Жz"),
            "the PIN is never printed"
        )
        #expect(
            result.errorOutput.contains("CKR_PIN_INCORRECT") && result.errorOutput.contains("will not be retried"),
            "\(result.errorOutput)"
        )
        let logins = try token.logins(inSpyLog: log)
        #expect(logins.count == 1, "\(logins)")
        #expect(logins.first?.contains("CKR_PIN_INCORRECT") == true)
        #expect((try flags()).contains("user PIN count low"))
    }

    @Test("locked PIN through pkcs11-spy: no C_Login at all, exit 1, the error says the PIN is locked")
    func lockedPINNoLogin() throws {
        try #require(FileManager.default.fileExists(atPath: Self.spyModule), "OpenSC's pkcs11-spy.so is not installed")
        let token = try OwnToken()
        try SoftHSMFixture.setUserPINLocked(tokenDirectory: token.directory.path("tokens"), serial: token.serial)
        let (result, log) = try token.signThroughSpy(pin: SoftHSMFixture.pin, spyModule: Self.spyModule)
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("locked"), "\(result.errorOutput)")
        #expect(try token.logins(inSpyLog: log).isEmpty)
    }
}

/// A process that forks after logging in: the child re-initialises the module and signs with the
/// identity made before the fork; the parent keeps signing afterwards.
@Suite(
    "PKCS#11 across fork",
    .enabled(
        if: SoftHSMFixture.isAvailable && ExternalTool.builtProduct("pkcs11-fork-check") != nil,
        "softhsm2 or the pkcs11-fork-check helper is missing"
    )
)
struct PKCS11ForkTests {
    @Test("parent signs, child (after fork) signs, parent signs again: all three verify with the certificate's key")
    func forkedChildSigns() throws {
        let token = try PKCS11CLITests.OwnToken()
        let helper = try #require(ExternalTool.builtProduct("pkcs11-fork-check"))
        let prefix = token.directory.path("fork-")
        let result = try ExternalTool.run(
            helper,
            [SoftHSMFixture.softHSMModule, "pkcs11:token=cli;object=rsakey", prefix],
            environment: ["SOFTHSM2_CONF": token.configPath, "TOKEN_PIN": SoftHSMFixture.pin]
        )
        #expect(result.succeeded, "\(result.errorOutput)")
        // The child re-initialised the module, dropped the parent's sessions and logged in once again.
        #expect(
            try String(contentsOfFile: prefix + "child-counters.txt", encoding: .utf8)
                == "reopens=1 logins=2 failedLogins=0"
        )
        let digest = try token.directory.write("digest.bin", DigestAlgorithm.sha256.hash(Array("fork check\n".utf8)))
        for name in ["parent-before.sig", "child.sig", "parent-after.sig"] {
            let verify = try ExternalTool.run(
                "openssl",
                [
                    "pkeyutl", "-verify", "-certin", "-inkey", prefix + "cert.pem", "-in", digest,
                    "-sigfile", prefix + name, "-pkeyopt", "digest:sha256",
                ]
            )
            #expect(verify.succeeded, "\(name): \(verify.output) \(verify.errorOutput)")
        }
    }
}
