import CertificateProviders
import CertificateProvidersTesting
import Foundation

#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// SoftHSM2 tokens made by `softhsm2-util`, `pkcs11-tool`, `openssl` and Python's `pkcs11` package,
/// never by the code under test.
///
/// One constraint shapes this fixture: SoftHSM reads `SOFTHSM2_CONF` once, at `C_Initialize`, and
/// sees only the tokens that exist then; and `C_Initialize` happens once per process. So each test
/// process makes ONE private token directory (a fresh temporary folder, never a fixed path), sets
/// `SOFTHSM2_CONF` in this process before the first `C_Initialize`, and creates every token the
/// in-process tests use up front, each under its own label. Tests never share a token whose state
/// they change (wrong PIN, locked PIN, closed sessions). Tools run as child processes with
/// `SOFTHSM2_CONF` in their own environment; tests that need a fresh token after initialisation
/// (the CLI's) run `certsign` as a child process against a directory of their own.
final class SoftHSMFixture: Sendable {
    /// The fixture of this test process, made on first use (Swift runs this initialiser once).
    private static let made: Result<SoftHSMFixture, FixtureError> = {
        do { return .success(try SoftHSMFixture()) } catch { return .failure(FixtureError("\(error)")) }
    }()

    /// The fixture of this test process.
    /// - Throws: when a tool failed while making the tokens.
    static func shared() throws -> SoftHSMFixture { try made.get() }

    static let softHSMModule = "/usr/lib/softhsm/libsofthsm2.so"
    static let pin = "1234"
    static let soPIN = "5678"

    /// Whether SoftHSM, pkcs11-tool and openssl are installed.
    static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: softHSMModule) && ExternalTool.isAvailable("softhsm2-util")
            && ExternalTool.isAvailable("pkcs11-tool") && ExternalTool.isAvailable("openssl")
    }

    /// Whether Python's `pkcs11` package (python-pkcs11) can be imported.
    static let hasPythonPKCS11: Bool = (try? ExternalTool.run("python3", ["-c", "import pkcs11"]))?.succeeded ?? false

    let directory: TemporaryDirectory
    let configPath: String
    /// The test CA that issued every token certificate (PEM file).
    let caPath: String
    let caCertificate: Certificate
    /// Token serial numbers by label.
    let serials: [String: String]

    /// Labels of the tokens made here.
    enum Token {
        static let signer = "signer"  // rsakey 01, eckey 02, ec384 03, nocert 04, pykey 05 (Python), the CA certificate
        static let always = "always-auth"  // rsakey 01 with CKA_ALWAYS_AUTHENTICATE
        static let wrongPIN = "wrong-pin"  // eckey 01
        static let locked = "locked"  // eckey 01, user PIN locked
        static let reopen = "reopen"  // eckey 01
        static let noPIN = "no-pin"  // eckey 01, never logged in by the tests
        static let pss = "pss"  // rsakey 01 (RSA-PSS signing)
        static let concurrent = "concurrent"  // rsakey 01
        static let limited = "limited"  // rsakey 01, used through the fault module (session limit)
        static let pulled = "pulled"  // eckey 01, used through the fault module (token pulled)
        static let sharedLogin = "shared-login"  // eckey 01, two providers in one process
    }

    private init() throws {
        directory = try TemporaryDirectory(prefix: "pkcs11-softhsm")
        try FileManager.default.createDirectory(atPath: directory.path("tokens"), withIntermediateDirectories: true)
        configPath = try directory.write(
            "softhsm2.conf",
            text: """
                directories.tokendir = \(directory.path("tokens"))
                objectstore.backend = file
                log.level = ERROR
                slots.removable = false

                """
        )
        // The in-process module reads this at its (one) C_Initialize: set before any test loads it.
        setenv("SOFTHSM2_CONF", configPath, 1)

        caPath = directory.path("ca.pem")
        try Self.tool(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", directory.path("ca.key"), "-out", caPath, "-subj",
                "/CN=Test Token CA/O=swift-certificate-providers",
                "-days", "30", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
            config: configPath
        )
        caCertificate = try Certificate(pemEncoded: String(decoding: try directory.read("ca.pem"), as: UTF8.self))

        var serials: [String: String] = [:]
        let maker = TokenMaker(
            directory: directory,
            configPath: configPath,
            caPath: caPath,
            caKeyPath: directory.path("ca.key")
        )
        serials[Token.signer] = try maker.initToken(Token.signer)
        try maker.rsaKeyPair(token: Token.signer, subject: "/CN=RSA Token Signer")
        try maker.ecKeyPair(token: Token.signer, id: "02", subject: "/CN=EC Token Signer")
        if Self.hasPythonPKCS11 {
            // pkcs11-tool 0.23 cannot export a P-384 public key ("cannot create EVP_PKEY"): python-pkcs11 does.
            try maker.keyPair(token: Token.signer, id: "03", label: "ec384", type: "EC:secp384r1", subject: nil)
            try maker.certify(
                token: Token.signer,
                id: "03",
                label: "ec384",
                subject: "/CN=EC P-384 Token Signer",
                exportWithPython: true
            )
        }
        try maker.keyPair(token: Token.signer, id: "04", label: "nocert", type: "EC:prime256v1", subject: nil)
        if Self.hasPythonPKCS11 {
            try maker.pythonRSAKeyPair(token: Token.signer, id: "05", label: "pykey")
            try maker.certify(token: Token.signer, id: "05", label: "pykey", subject: "/CN=Python Made Token Signer")
        }
        try maker.writeCertificate(
            token: Token.signer,
            der: caCertificate.derRepresentation,
            id: "ca",
            label: "Test Token CA"
        )

        serials[Token.always] = try maker.initToken(Token.always)
        try maker.rsaKeyPair(token: Token.always, subject: "/CN=Always Authenticate Signer", extra: ["--always-auth"])
        for label in [Token.wrongPIN, Token.locked, Token.reopen, Token.noPIN, Token.pulled, Token.sharedLogin] {
            serials[label] = try maker.initToken(label)
            try maker.ecKeyPair(token: label, subject: "/CN=\(label) signer")
        }
        for label in [Token.pss, Token.concurrent, Token.limited] {
            serials[label] = try maker.initToken(label)
            try maker.rsaKeyPair(token: label, subject: "/CN=\(label) signer")
        }
        try Self.setUserPINLocked(tokenDirectory: directory.path("tokens"), serial: serials[Token.locked]!)
        self.serials = serials
    }

    /// Runs a tool with `SOFTHSM2_CONF` (and the PIN, for `--pin env:PIN`) in its environment.
    @discardableResult
    static func tool(
        _ name: String,
        _ arguments: [String],
        config: String,
        input: Data? = nil
    ) throws -> ExternalTool.Result {
        let result = try ExternalTool.run(
            name,
            arguments,
            environment: ["SOFTHSM2_CONF": config, "PIN": pin, "SO_PIN": soPIN],
            input: input
        )
        guard result.succeeded else {
            throw FixtureError(
                "\(name) \(arguments.prefix(4).joined(separator: " ")) … failed: \(result.errorOutput)\(result.output)"
            )
        }
        return result
    }

    /// SoftHSM never locks a user PIN by itself (it only raises CKF_USER_PIN_COUNT_LOW), but it
    /// reports and honours CKF_USER_PIN_LOCKED (C_Login returns CKR_PIN_LOCKED) when the flag is in
    /// the token's stored flags: its `token.object` file holds them as the attribute
    /// CKA_OS_TOKENFLAGS (0x8000534B, a big-endian 8-byte ulong). Set the bit there and bump the
    /// file's generation counter (its first 8 bytes), as SoftHSM does when it writes the file.
    static func setUserPINLocked(tokenDirectory: String, serial: String) throws {
        let tokens = try FileManager.default.contentsOfDirectory(atPath: tokenDirectory)
        for token in tokens {
            let path = "\(tokenDirectory)/\(token)/token.object"
            guard var bytes = FileManager.default.contents(atPath: path).map(Array.init), bytes.count > 16 else {
                continue
            }
            guard String(decoding: bytes, as: UTF8.self).contains(serial) else { continue }
            let marker: [UInt8] = [0, 0, 0, 0, 0x80, 0, 0x53, 0x4B, 0, 0, 0, 0, 0, 0, 0, 2]
            guard
                let start = (0...(bytes.count - marker.count - 8)).first(where: {
                    Array(bytes[$0..<$0 + marker.count]) == marker
                })
            else {
                throw FixtureError("no CKA_OS_TOKENFLAGS in \(path)")
            }
            let value = start + marker.count
            bytes[value + 5] |= 0x04  // CKF_USER_PIN_LOCKED = 0x00040000
            bytes[7] &+= 1
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return
        }
        throw FixtureError("no token with serial \(serial) in \(tokenDirectory)")
    }

    /// The token flags as `pkcs11-tool -L` prints them for a token (read by a separate process).
    func tokenFlags(_ label: String) throws -> String {
        let result = try Self.tool("pkcs11-tool", ["--module", Self.softHSMModule, "-L"], config: configPath)
        let blocks = result.output.components(separatedBy: "Slot ")
        guard let block = blocks.first(where: { $0.contains("token label        : \(label)\n") }),
            let line = block.split(separator: "\n").first(where: { $0.contains("token flags") })
        else {
            throw FixtureError("token \(label) not listed: \(result.output)")
        }
        return String(line)
    }
}

/// Makes tokens, keys and certificates with the real tools.
struct TokenMaker {
    let directory: TemporaryDirectory
    let configPath: String
    let caPath: String
    let caKeyPath: String
    let module = SoftHSMFixture.softHSMModule

    /// `softhsm2-util --init-token`; returns the token's serial number.
    func initToken(_ label: String) throws -> String {
        try SoftHSMFixture.tool(
            "softhsm2-util",
            [
                "--init-token", "--free", "--label", label, "--pin", SoftHSMFixture.pin,
                "--so-pin", SoftHSMFixture.soPIN,
            ],
            config: configPath
        )
        let listing = try SoftHSMFixture.tool("pkcs11-tool", ["--module", module, "-L"], config: configPath).output
        for block in listing.components(separatedBy: "Slot ") where block.contains("token label        : \(label)\n") {
            if let line = block.split(separator: "\n").first(where: { $0.contains("serial num") }) {
                return line.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            }
        }
        throw FixtureError("token \(label) was not listed after softhsm2-util made it")
    }

    /// The RSA 2048 key pair "rsakey" (id 01) of `token`, with a certificate for `subject`.
    func rsaKeyPair(token: String, subject: String, extra: [String] = []) throws {
        try keyPair(token: token, id: "01", label: "rsakey", type: "rsa:2048", subject: subject, extra: extra)
    }

    /// A P-256 key pair "eckey" (id `id`) of `token`, with a certificate for `subject`.
    func ecKeyPair(token: String, id: String = "01", subject: String) throws {
        try keyPair(token: token, id: id, label: "eckey", type: "EC:prime256v1", subject: subject)
    }

    /// `pkcs11-tool --keypairgen`, then a certificate for the public key (when `subject` is given).
    func keyPair(token: String, id: String, label: String, type: String, subject: String?, extra: [String] = []) throws
    {
        try SoftHSMFixture.tool(
            "pkcs11-tool",
            [
                "--module", module, "--token-label", token, "--login", "--pin", "env:PIN", "--keypairgen",
                "--key-type", type, "--id", id, "--label", label,
            ] + extra,
            config: configPath
        )
        if let subject { try certify(token: token, id: id, label: label, subject: subject) }
    }

    /// Reads the public key from the token, has the test CA issue a certificate for it with
    /// `openssl x509 -new -force_pubkey`, and writes the certificate back with the key's ID.
    func certify(token: String, id: String, label: String, subject: String, exportWithPython: Bool = false) throws {
        let publicKey = directory.path("\(token)-\(id).pub.der")
        if exportWithPython {
            let script = """
                import os, pkcs11
                from pkcs11 import ObjectClass
                from pkcs11.util.ec import encode_ec_public_key
                token = pkcs11.lib(os.environ["MODULE"]).get_token(token_label=os.environ["TOKEN"])
                with token.open() as session:
                    key = session.get_key(object_class=ObjectClass.PUBLIC_KEY, id=bytes.fromhex(os.environ["KEY_ID"]))
                    open(os.environ["OUT"], "wb").write(encode_ec_public_key(key))
                """
            let result = try ExternalTool.run(
                "python3",
                ["-c", script],
                environment: [
                    "SOFTHSM2_CONF": configPath, "MODULE": module, "TOKEN": token, "KEY_ID": id, "OUT": publicKey,
                ]
            )
            guard result.succeeded else {
                throw FixtureError("python-pkcs11 public key export failed: \(result.errorOutput)")
            }
        } else {
            try SoftHSMFixture.tool(
                "pkcs11-tool",
                [
                    "--module", module, "--token-label", token, "--read-object", "--type", "pubkey", "--id", id,
                    "-o", publicKey,
                ],
                config: configPath
            )
        }
        let certificate = directory.path("\(token)-\(id).cert.der")
        try SoftHSMFixture.tool(
            "openssl",
            [
                "x509", "-new", "-subj", subject, "-force_pubkey", publicKey, "-keyform", "DER", "-CA", caPath,
                "-CAkey", caKeyPath, "-days", "30", "-outform", "DER", "-out", certificate,
                "-extfile",
                try directory.write("leaf.ext", text: "keyUsage=critical,digitalSignature,nonRepudiation\n"),
            ],
            config: configPath
        )
        try SoftHSMFixture.tool(
            "pkcs11-tool",
            [
                "--module", module, "--token-label", token, "--login", "--pin", "env:PIN", "--write-object",
                certificate, "--type", "cert", "--id", id, "--label", label,
            ],
            config: configPath
        )
    }

    /// Writes a certificate object (a CA certificate for the chain).
    func writeCertificate(token: String, der: [UInt8], id: String, label: String) throws {
        let path = try directory.write("\(token)-\(id).der", der)
        try SoftHSMFixture.tool(
            "pkcs11-tool",
            [
                "--module", module, "--token-label", token, "--login", "--pin", "env:PIN", "--write-object",
                path, "--type", "cert", "--id", id, "--label", label,
            ],
            config: configPath
        )
    }

    /// An RSA-2048 key pair generated on the token through python-pkcs11 (an independent client).
    func pythonRSAKeyPair(token: String, id: String, label: String) throws {
        let script = """
            import os, pkcs11
            from pkcs11 import KeyType, Attribute
            lib = pkcs11.lib(os.environ["MODULE"])
            t = lib.get_token(token_label=os.environ["TOKEN"])
            with t.open(rw=True, user_pin=os.environ["PIN"]) as session:
                session.generate_keypair(KeyType.RSA, 2048, id=bytes.fromhex(os.environ["KEY_ID"]), label=os.environ["LABEL"], store=True)
            """
        let result = try ExternalTool.run(
            "python3",
            ["-c", script],
            environment: [
                "SOFTHSM2_CONF": configPath, "PIN": SoftHSMFixture.pin, "MODULE": module, "TOKEN": token, "KEY_ID": id,
                "LABEL": label,
            ]
        )
        guard result.succeeded else { throw FixtureError("python-pkcs11 key generation failed: \(result.errorOutput)") }
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
