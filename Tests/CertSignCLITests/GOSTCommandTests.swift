import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// GOST R 34.10-2012 end to end through the `certsign` binary: PKCS#12 files written by `openssl
/// -engine gost`, signatures checked by `openssl cms -engine gost -verify` (and the other way round),
/// both DSS surfaces of the emulator, and a process without the engine.
@Suite(.enabled(if: GOSTEngine.isAvailable && ExternalTool.isAvailable("openssl"), "needs libengine-gost-openssl"))
struct GOSTCommandTests {
    /// A GOST key, its self-signed CA-less certificate and a PKCS#12 written by openssl with the engine.
    struct OpenSSLIdentity {
        let directory: TemporaryDirectory
        let bits: Int
        var certificate: String { directory.path("cert\(bits).pem") }
        var key: String { directory.path("key\(bits).pem") }
        var pkcs12: String { directory.path("id\(bits).p12") }
        var rootCertificate: String { directory.path("root\(bits).pem") }
    }

    static let password = "gost-пароль"

    @discardableResult
    static func openssl(_ arguments: [String], environment: [String: String] = [:]) throws -> ExternalTool.Result {
        try ExternalTool.run("openssl", arguments, environment: environment).requireSuccess()
    }

    /// A GOST CA (same size) and a leaf issued by it, exported as PKCS#12 with GOST PBE and MAC:
    /// gost89 + Streebog-256 MAC for 256-bit keys, Kuznyechik + Streebog-512 MAC for 512-bit keys.
    static func makeIdentity(bits: Int, in directory: TemporaryDirectory) throws -> OpenSSLIdentity {
        let identity = OpenSSLIdentity(directory: directory, bits: bits)
        let algorithm = "gost2012_\(bits)"
        let md = "-md_gost12_\(bits)"
        let paramset = bits == 256 ? "TCB" : "A"
        let rootKey = directory.path("rootkey\(bits).pem")
        try openssl([
            "genpkey", "-engine", "gost", "-algorithm", algorithm, "-pkeyopt", "paramset:\(paramset)", "-out", rootKey,
        ])
        try openssl([
            "req", "-engine", "gost", "-new", "-x509", md, "-key", rootKey, "-subj", "/CN=ГОСТ Root \(bits)/O=certsign",
            "-days", "30", "-out", identity.rootCertificate, "-utf8",
        ])
        try openssl([
            "genpkey", "-engine", "gost", "-algorithm", algorithm, "-pkeyopt", "paramset:A", "-out", identity.key,
        ])
        let request = directory.path("req\(bits).csr")
        try openssl([
            "req", "-engine", "gost", "-new", md, "-key", identity.key, "-subj",
            "/CN=Иванов ГОСТ \(bits)/O=ООО Ромашка",
            "-out", request, "-utf8",
        ])
        let extensions = try directory.write(
            "leaf.ext",
            text: "keyUsage=critical,digitalSignature,nonRepudiation\nextendedKeyUsage=emailProtection\n"
        )
        try openssl([
            "x509", "-engine", "gost", "-req", md, "-in", request, "-CA", identity.rootCertificate, "-CAkey", rootKey,
            "-CAcreateserial", "-extfile", extensions, "-days", "30", "-out", identity.certificate,
        ])
        let pbe = bits == 256 ? "gost89" : "kuznyechik-ctr-acpkm"
        try openssl(
            [
                "pkcs12", "-engine", "gost", "-export", "-keypbe", pbe, "-certpbe", pbe, "-macalg", "md_gost12_\(bits)",
                "-inkey", identity.key, "-in", identity.certificate, "-certfile", identity.rootCertificate,
                "-out", identity.pkcs12, "-passout", "env:P12PASS",
            ],
            environment: ["P12PASS": password]
        )
        return identity
    }

    /// ``makeIdentity(bits:in:)`` in a new directory, and an empty certsign store.
    static func makeIdentityAndStore(bits: Int) throws -> (OpenSSLIdentity, store: TemporaryDirectory) {
        let identity = try makeIdentity(bits: bits, in: try TemporaryDirectory(prefix: "gost-cli"))
        return (identity, try TemporaryDirectory(prefix: "gost-cli-store"))
    }

    /// `openssl cms -engine gost -verify` of a detached CAdES signature against the GOST root.
    /// `openssl cms -engine gost -verify -cades` accepts the detached `signature` over `content`.
    static func expectOpenSSLVerifies(
        signature: String,
        content: String,
        root: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = try ExternalTool.run(
            "openssl",
            [
                "cms", "-engine", "gost", "-verify", "-binary", "-cades", "-inform", "DER", "-in", signature,
                "-content", content, "-CAfile", root, "-purpose", "any", "-out", "/dev/null",
            ]
        )
        #expect(result.succeeded, "\(result.errorOutput)", sourceLocation: sourceLocation)
    }

    @Test(arguments: [256, 512])
    func openSSLFilesSignDirectlyAndAfterImportAndOpenSSLVerifies(bits: Int) throws {
        let (identity, store) = try Self.makeIdentityAndStore(bits: bits)
        let directory = identity.directory
        let document = try directory.write("документ.txt", text: "Счёт № \(bits)\n")
        let env = ["P12PASS": Self.password]

        // --p12: the file is used directly.
        let direct = try CLI.run(
            [
                "--json", "sign", document, "--p12", identity.pkcs12, "--password-env", "P12PASS",
                "--out", directory.path("direct.p7s"),
            ],
            store: store,
            environment: env
        )
        #expect(direct.status == 0, "\(direct.errorOutput)")
        let results = try #require(try CLI.json(direct)["results"] as? [[String: Any]])
        #expect(results.first?["digest"] as? String == "streebog\(bits)")
        try Self.expectOpenSSLVerifies(
            signature: directory.path("direct.p7s"),
            content: document,
            root: identity.rootCertificate
        )

        // identity import, then sign with the stored identity.
        let imported = try CLI.run(
            ["identity", "import", identity.pkcs12, "--alias", "gost\(bits)", "--password-env", "P12PASS"],
            store: store,
            environment: env
        )
        #expect(imported.status == 0, "\(imported.errorOutput)")
        let shown = try CLI.run(["identity", "show", "gost\(bits)"], store: store)
        #expect(shown.output.contains("GOST R 34.10-2012 \(bits)"), "\(shown.output)")
        let listed = try CLI.run(["identity", "list"], store: store)
        #expect(listed.output.contains("GOST R 34.10-2012 \(bits)"))
        let stored = try CLI.run(
            [
                "sign", document, "--identity", "gost\(bits)", "--password-env", "P12PASS",
                "--out", directory.path("stored.p7s"), "--digest", "streebog\(bits)",
            ],
            store: store,
            environment: env
        )
        #expect(stored.status == 0, "\(stored.errorOutput)")
        try Self.expectOpenSSLVerifies(
            signature: directory.path("stored.p7s"),
            content: document,
            root: identity.rootCertificate
        )

        // Our own verify prints the GOST names; a changed document is rejected.
        let verified = try CLI.run(
            ["verify", directory.path("stored.p7s"), "--content", document, "--ca", identity.rootCertificate],
            store: store
        )
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
        #expect(verified.output.contains("key:          GOST R 34.10-2012 \(bits)"))
        #expect(verified.output.contains("digest:       GOST R 34.11-2012 \(bits)"))
        let changed = try directory.write("changed.txt", text: "Счёт № \(bits)0\n")
        let rejected = try CLI.run(
            ["verify", directory.path("stored.p7s"), "--content", changed, "--ca", identity.rootCertificate],
            store: store
        )
        #expect(rejected.status == 1)
        #expect(rejected.output.contains("changed after signing"))

        // A digest that does not fit the key is refused with a reason.
        let other = bits == 256 ? "streebog512" : "sha256"
        let refused = try CLI.run(
            [
                "sign", document, "--identity", "gost\(bits)", "--password-env", "P12PASS",
                "--out", directory.path("refused.p7s"), "--digest", other,
            ],
            store: store,
            environment: env
        )
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("GOST R 34.11-2012 \(bits)"), "\(refused.errorOutput)")
    }

    @Test(arguments: [256, 512])
    func verifiesOpenSSLMadeCMSAndCAdES(bits: Int) throws {
        let (identity, store) = try Self.makeIdentityAndStore(bits: bits)
        let directory = identity.directory
        let document = try directory.write("doc.txt", text: "openssl signed \(bits)\n")
        let changed = try directory.write("changed.txt", text: "openssl signed \(bits)!\n")
        for (name, extra) in [("cms", [String]()), ("cades", ["-cades"]), ("attached", ["-nodetach"])] {
            let signature = directory.path("\(name).p7s")
            try Self.openssl(
                [
                    "cms", "-engine", "gost", "-sign", "-binary", "-in", document, "-signer", identity.certificate,
                    "-inkey", identity.key, "-certfile", identity.rootCertificate, "-outform", "DER", "-out", signature,
                ] + extra
            )
            let good = try CLI.run(
                ["verify", signature, "--content", document, "--ca", identity.rootCertificate],
                store: store
            )
            #expect(good.status == 0, "\(name): \(good.output) \(good.errorOutput)")
            #expect(good.output.contains("digest:       GOST R 34.11-2012 \(bits)"))
            #expect(good.output.contains(name == "cades" ? "CAdES-BES" : "format:       CMS"))
            if name != "attached" {
                let bad = try CLI.run(
                    ["verify", signature, "--content", changed, "--ca", identity.rootCertificate],
                    store: store
                )
                #expect(bad.status == 1, "\(name) over a changed document")
                #expect(bad.output.contains("changed after signing"))
            }
        }
    }

    @Test func withoutTheEngineTheErrorSaysWhatToInstall() throws {
        let directory = try TemporaryDirectory(prefix: "gost-cli")
        let identity = try Self.makeIdentity(bits: 256, in: directory)
        let document = try directory.write("doc.txt", text: "no engine\n")
        // OPENSSL_ENGINES pointing at an empty directory makes ENGINE_by_id("gost") fail in the child.
        let empty = try TemporaryDirectory(prefix: "no-engines")
        let env = ["P12PASS": Self.password, "OPENSSL_ENGINES": empty.url.path]
        let signed = try CLI.run(
            [
                "sign", document, "--p12", identity.pkcs12, "--password-env", "P12PASS",
                "--out", directory.path("x.p7s"),
            ],
            store: try TemporaryDirectory(),
            environment: env
        )
        #expect(signed.status == 1)
        #expect(
            signed.errorOutput.contains("GOST needs libengine-gost-openssl"),
            "\(signed.output) \(signed.errorOutput)"
        )
        #expect(!FileManager.default.fileExists(atPath: directory.path("x.p7s")))

        // Verifying a GOST signature: the signer's certificate cannot be read either.
        let signature = directory.path("ok.p7s")
        try Self.openssl([
            "cms", "-engine", "gost", "-sign", "-binary", "-in", document, "-signer", identity.certificate,
            "-inkey", identity.key, "-outform", "DER", "-out", signature,
        ])
        let verified = try CLI.run(
            ["verify", signature, "--content", document, "--no-chain-check"],
            store: try TemporaryDirectory(),
            environment: env
        )
        // Not proven bad: another OpenSSL (with the engine) can decide: INDETERMINATE, exit 2.
        #expect(verified.status == 2)
        #expect(verified.output.hasPrefix("INDETERMINATE: CRYPTO_CONSTRAINTS_FAILURE — "), "\(verified.output)")
        #expect(
            (verified.output + verified.errorOutput).contains("GOST needs libengine-gost-openssl"),
            "\(verified.output) \(verified.errorOutput)"
        )
        // RSA and EC still work in that process.
        let plain = try CLI.run(["sign", "--help"], environment: env)
        #expect(plain.status == 0)
    }

    @Test func emulatorGOSTCertificateSignsThroughBothDSSSurfaces() throws {
        let emulator = try DSSEmulator()
        let url = try emulator.start()
        defer { emulator.stop() }
        let store = try TemporaryDirectory()
        let ca = try store.write("ca.pem", text: emulator.certificateAuthorityPEM)
        let env = [
            "FMP_PASSWORD": StandardSeed.password, "DSS_PASSWORD": StandardSeed.dssPassword,
            "PIN": StandardSeed.certificatePIN,
            "DSS_USER_PASSWORD": StandardSeed.password,
        ]

        // FMP: certsign dss sign with the GOST certificate, then the signature from the history.
        try CLI.dssLogin(url, store: store)
        let certificates = try CLI.run(
            ["dss", "certificates", "--dss-password-env", "DSS_PASSWORD"],
            store: store,
            environment: env
        )
        #expect(certificates.output.contains("\(StandardSeed.gostCertificateID)"), "\(certificates.output)")
        let signed = try CLI.run(
            [
                "--json", "dss", "sign", "--resource", StandardSeed.resource, "--table", StandardSeed.table,
                "--column", StandardSeed.column, "--hhive-id", "1", "--certificate-id",
                "\(StandardSeed.gostCertificateID)",
                "--dss-password-env", "DSS_PASSWORD", "--pin-env", "PIN",
            ],
            store: store,
            environment: env
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        let raw = try #require((try CLI.json(signed)["result"] as? [String: Any])?["raw"] as? [String: Any])
        let id = try #require(raw["signature_id"] as? Int)
        let out = try TemporaryDirectory()
        #expect(try CLI.run(["dss", "signs", "--out-dir", out.url.path], store: store).status == 0)
        let fmpCheck = try ExternalTool.run(
            "openssl",
            [
                "cms", "-engine", "gost", "-verify", "-binary", "-cades", "-inform", "DER",
                "-in", out.path("\(id).p7s"), "-CAfile", ca,
            ]
        )
        #expect(fmpCheck.succeeded, "\(fmpCheck.errorOutput)")
        #expect(fmpCheck.output == StandardSeed.cellValue)
        let fmpPrint = try ExternalTool.run(
            "openssl",
            ["cms", "-engine", "gost", "-cmsout", "-print", "-inform", "DER", "-in", out.path("\(id).p7s")]
        )
        #expect(fmpPrint.output.contains("1.2.643.7.1.1.2.2"), "the FMP signature's digest is not Streebog-256")

        // CryptoPro DSS: sign --provider cryptopro-dss with the 256- and the 512-bit certificate
        // (a detached file goes up as its Streebog digest, Hash: True).
        for (certificateID, bits) in [(StandardSeed.gostCertificateID, 256), (StandardSeed.gost512CertificateID, 512)] {
            let document = try store.write("договор-\(bits).txt", text: "Договор ГОСТ \(bits)\n")
            let result = try CLI.run(
                [
                    "sign", document, "--provider", "cryptopro-dss", "--param", "url=\(url.absoluteString)",
                    "--param", "username=\(StandardSeed.username)", "--param-env", "password=DSS_USER_PASSWORD",
                    "--param", "certificateID=\(certificateID)", "--param-env", "pin=PIN",
                ],
                store: TemporaryDirectory(),
                environment: env
            )
            #expect(result.status == 0, "\(result.errorOutput)")
            let check = try ExternalTool.run(
                "openssl",
                [
                    "cms", "-engine", "gost", "-verify", "-binary", "-cades", "-inform", "DER",
                    "-in", document + ".p7s", "-content", document, "-CAfile", ca, "-out", "/dev/null",
                ]
            )
            #expect(check.succeeded, "\(bits): \(check.errorOutput)")
            let ours = try CLI.run(["verify", document + ".p7s", "--ca", ca], store: store)
            #expect(ours.output.contains("digest:       GOST R 34.11-2012 \(bits)"), "\(ours.output)")
        }
    }
}
