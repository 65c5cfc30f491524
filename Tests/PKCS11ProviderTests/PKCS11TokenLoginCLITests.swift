import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign tokens` with a PIN, and the hints a PKCS#11 user meets, run as child processes against
/// a token of the test's own. The keys are imported the way a PKCS#12 import does it: a private key
/// and a certificate written with `pkcs11-tool --write-object`, and no public-key object, so they
/// show only after a login.
@Suite(
    "certsign tokens with a PIN, and PKCS#11 hints",
    .enabled(
        if: SoftHSMFixture.isAvailable && CLI.isBuilt,
        "softhsm2, opensc, openssl or the certsign binary is missing"
    )
)
struct PKCS11TokenLoginCLITests {
    static let module = SoftHSMFixture.softHSMModule

    /// The `cli` token with two imported keys: `imported` (RSA-2048) and `imported-aa` (P-256,
    /// CKA_ALWAYS_AUTHENTICATE), each with its certificate from the token's test CA.
    static func tokenWithImportedKeys() throws -> PKCS11CLITests.OwnToken {
        let token = try PKCS11CLITests.OwnToken()
        let directory = token.directory
        for (label, id, algorithm, extra) in [
            ("imported", "0a", ["-newkey", "rsa:2048"], [String]()),
            ("imported-aa", "0b", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"], ["--always-auth"]),
        ] {
            let key = directory.path("\(label).key.pem")
            try SoftHSMFixture.tool(
                "openssl",
                ["req", "-new"] + algorithm + [
                    "-nodes", "-keyout", key, "-out", directory.path("\(label).csr"), "-subj", "/CN=\(label) signer",
                ],
                config: token.configPath
            )
            try SoftHSMFixture.tool(
                "openssl",
                [
                    "x509", "-req", "-in", directory.path("\(label).csr"), "-CA", directory.path("ca.pem"),
                    "-CAkey", directory.path("ca.key"), "-days", "30", "-outform", "DER", "-out",
                    directory.path("\(label).cert.der"),
                ],
                config: token.configPath
            )
            try SoftHSMFixture.tool(
                "openssl",
                ["pkey", "-in", key, "-outform", "DER", "-out", directory.path("\(label).key.der")],
                config: token.configPath
            )
            for (file, type) in [("\(label).key.der", "privkey"), ("\(label).cert.der", "cert")] {
                try SoftHSMFixture.tool(
                    "pkcs11-tool",
                    [
                        "--module", module, "--token-label", "cli", "--login", "--pin", "env:PIN", "--write-object",
                        directory.path(file), "--type", type, "--id", id, "--label", label,
                    ] + (type == "privkey" ? extra : []),
                    config: token.configPath
                )
            }
        }
        return token
    }

    /// The words of the command line a message suggests after `marker` (up to `end`), quotes removed.
    static func suggestedCommand(in text: String, after marker: String, end: String) throws -> [String] {
        let start = try #require(text.range(of: marker), "no '\(marker)' in: \(text)")
        let rest = text[start.upperBound...]
        let line = rest[..<(rest.range(of: end)?.lowerBound ?? rest.endIndex)]
        return line.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "'")) }
    }

    @Test(
        "without a PIN the listing says keys may be hidden and how to log in; that command line lists the imported keys"
    )
    func hiddenKeysAndLogin() throws {
        let token = try Self.tokenWithImportedKeys()
        let plain = try token.certsign(["tokens", "--module", Self.module])
        #expect(plain.succeeded, "\(plain.errorOutput)")
        #expect(!plain.output.contains("object=imported"), "hidden before a login: \(plain.output)")
        #expect(plain.output.contains("private keys may be hidden"), "\(plain.output)")
        // Run exactly what the listing suggests, with VAR naming a variable that holds the PIN.
        let suggested = try Self.suggestedCommand(in: plain.output, after: "log in to list them: ", end: " (or")
        #expect(suggested.first == "certsign", "\(suggested)")
        let arguments = suggested.dropFirst().map { $0 == "VAR" ? "TOKEN_PIN" : $0 }
        let loggedIn = try token.certsign(Array(arguments), environment: ["TOKEN_PIN": SoftHSMFixture.pin])
        #expect(loggedIn.succeeded, "\(arguments): \(loggedIn.errorOutput)")
        #expect(loggedIn.output.contains("object=imported;id="), "\(loggedIn.output)")
        #expect(loggedIn.output.contains("(logged in)"))
        #expect(!loggedIn.output.contains("private keys may be hidden"))
        #expect(
            loggedIn.output.contains("imported-aa signer") && loggedIn.output.contains("before each signature"),
            "the always-authenticate key is marked: \(loggedIn.output)"
        )
        // The same with --pin-file and --pin-stdin; the PIN is never printed.
        let pinFile = try token.directory.write("pin.txt", text: SoftHSMFixture.pin + "\n")
        let fromFile = try token.certsign(["tokens", "--module", Self.module, "--pin-file", pinFile])
        #expect(fromFile.succeeded && fromFile.output.contains("object=imported;id="), "\(fromFile.errorOutput)")
        #expect(!fromFile.output.contains(SoftHSMFixture.pin + "\n"))
    }

    @Test(
        "tokens --json --pin-env gives each imported key its URI; sign --param uri=<that URI> signs, openssl verifies"
    )
    func signWithListedURI() throws {
        let token = try Self.tokenWithImportedKeys()
        let listing = try token.certsign(
            ["--json", "tokens", "--module", Self.module, "--pin-env", "TOKEN_PIN"],
            environment: ["TOKEN_PIN": SoftHSMFixture.pin]
        )
        #expect(listing.succeeded, "\(listing.errorOutput)")
        let object = try JSONSerialization.jsonObject(with: listing.standardOutput) as? [String: Any]
        let tokens = try #require(object?["tokens"] as? [[String: Any]])
        #expect(tokens.first?["loggedIn"] as? Bool == true && tokens.first?["privateKeysHidden"] as? Bool == false)
        let keys = try #require(tokens.first?["keys"] as? [[String: Any]])
        let imported = try #require(keys.first { $0["label"] as? String == "imported" })
        let alwaysAuthenticate = try #require(keys.first { $0["label"] as? String == "imported-aa" })
        #expect(imported["alwaysAuthenticate"] as? Bool == false)
        #expect(alwaysAuthenticate["alwaysAuthenticate"] as? Bool == true)
        for (index, key) in [imported, alwaysAuthenticate].enumerated() {
            let uri = try #require(key["uri"] as? String)
            let document = try token.directory.write("doc-\(index).txt", text: "document \(index)\n")
            let sign = try token.certsign(
                [
                    "sign", document, "--provider", "pkcs11", "--param", "uri=\(uri)", "--param",
                    "module=\(Self.module)", "--param-env", "pin=TOKEN_PIN",
                ],
                environment: ["TOKEN_PIN": SoftHSMFixture.pin]
            )
            #expect(sign.succeeded, "\(uri): \(sign.errorOutput)")
            let verify = try OpenSSLCMS.verify(
                signatureFile: document + ".p7s",
                contentFile: document,
                caFile: token.directory.path("ca.pem"),
                anyPurpose: true
            )
            #expect(verify.succeeded, "\(uri): \(verify.errorOutput)")
        }
    }

    @Test("with two tokens that need a login, a PIN needs --token: the hint names it, and that command line lists")
    func severalTokensNeedTheTokenOption() throws {
        let token = try PKCS11CLITests.OwnToken()
        _ = try TokenMaker(
            directory: token.directory,
            configPath: token.configPath,
            caPath: token.directory.path("ca.pem"),
            caKeyPath: token.directory.path("ca.key")
        ).initToken("second")
        let ambiguous = try token.certsign(
            ["tokens", "--module", Self.module, "--pin-env", "TOKEN_PIN"],
            environment: ["TOKEN_PIN": SoftHSMFixture.pin]
        )
        #expect(ambiguous.status == 1, "\(ambiguous.output)")
        #expect(ambiguous.errorOutput.contains("'cli'") && ambiguous.errorOutput.contains("'second'"))
        let suggested = try Self.suggestedCommand(in: ambiguous.errorOutput, after: "PIN is for with ", end: " (or")
        #expect(suggested == ["--token", "LABEL"], "\(ambiguous.errorOutput)")
        let named = try token.certsign(
            ["tokens", "--module", Self.module, "--pin-env", "TOKEN_PIN", "--token", "cli"],
            environment: ["TOKEN_PIN": SoftHSMFixture.pin]
        )
        #expect(named.succeeded && named.output.contains("(logged in)"), "\(named.errorOutput)")
        #expect(!named.output.contains("token 'second'"), "--token lists only that token")
    }

    @Test("a missing PKCS#11 PIN hints --param-env pin=VAR (which then signs), never --password-env")
    func missingPINHint() throws {
        let token = try PKCS11CLITests.OwnToken()
        let document = try token.directory.write("doc.txt", text: "doc\n")
        let base = [
            "sign", document, "--provider", "pkcs11", "--param", "uri=pkcs11:token=cli;object=rsakey",
            "--param", "module=\(Self.module)",
        ]
        let missing = try token.certsign(base)
        #expect(missing.status == 1, "\(missing.errorOutput)")
        #expect(missing.errorOutput.contains("hint: give the token's user PIN with --param-env pin=VAR"))
        #expect(!missing.errorOutput.contains("--password"), "\(missing.errorOutput)")
        let suggested = try Self.suggestedCommand(in: missing.errorOutput, after: "PIN with ", end: " or ")
        #expect(suggested == ["--param-env", "pin=VAR"])
        let given = try token.certsign(
            base + suggested.map { $0.replacingOccurrences(of: "VAR", with: "TOKEN_PIN") },
            environment: ["TOKEN_PIN": SoftHSMFixture.pin]
        )
        #expect(given.succeeded, "\(given.errorOutput)")
    }

    @Test("a wrong PKCS#11 PIN hints the token's tries and 'certsign tokens --module PATH' (which runs), not PKCS#12")
    func wrongPINHint() throws {
        let token = try PKCS11CLITests.OwnToken()
        let document = try token.directory.write("doc.txt", text: "doc\n")
        let wrong = try token.certsign(
            [
                "sign", document, "--provider", "pkcs11", "--param", "uri=pkcs11:token=cli;object=rsakey",
                "--param", "module=\(Self.module)", "--param-env", "pin=TOKEN_PIN",
            ],
            environment: ["TOKEN_PIN": "9999"]
        )
        #expect(wrong.status == 1)
        #expect(
            !wrong.errorOutput.contains("PKCS#12") && !wrong.errorOutput.contains("Windows"),
            "\(wrong.errorOutput)"
        )
        #expect(wrong.errorOutput.contains("tries"), "\(wrong.errorOutput)")
        let suggested = try Self.suggestedCommand(in: wrong.errorOutput, after: "('", end: "' shows")
        #expect(suggested == ["certsign", "tokens", "--module", "PATH"])
        let listing = try token.certsign(["tokens", "--module", Self.module])
        #expect(listing.succeeded && listing.output.contains("user PIN count low"), "\(listing.output)")
        // The same hint on `tokens --pin-env` with the wrong PIN.
        let tokens = try token.certsign(
            ["tokens", "--module", Self.module, "--pin-env", "TOKEN_PIN"],
            environment: ["TOKEN_PIN": "9999"]
        )
        #expect(tokens.status == 1 && tokens.errorOutput.contains("tries"), "\(tokens.errorOutput)")
        #expect(!tokens.errorOutput.contains("PKCS#12"))
    }
}
