import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import TestSupport
import Testing

/// GOST PKCS#12 files as `openssl pkcs12 -engine gost -export` writes them (TC26 PBES2 with gost89
/// or Kuznyechik, Streebog MAC), the store's handling of GOST identities, and CryptoPro CSP's own
/// PFX format.
@Suite(.enabled(if: GOSTEngine.isAvailable && Fixtures.hasOpenSSL, "needs libengine-gost-openssl"))
struct GOSTPKCS12Tests {
    static let password = "ГОСТ-пароль-1"

    /// A GOST key and self-signed certificate written by openssl; returns the PEM paths.
    static func opensslKeyAndCertificate(
        bits: Int,
        in directory: TemporaryDirectory
    ) throws -> (key: String, certificate: String) {
        let key = directory.path("key\(bits).pem")
        let certificate = directory.path("cert\(bits).pem")
        try Fixtures.run(
            "openssl",
            ["genpkey", "-engine", "gost", "-algorithm", "gost2012_\(bits)", "-pkeyopt", "paramset:A", "-out", key]
        )
        try Fixtures.run(
            "openssl",
            [
                "req", "-engine", "gost", "-new", "-x509", "-md_gost12_\(bits)", "-key", key,
                "-subj", "/CN=Подписант ГОСТ \(bits)", "-days", "30", "-out", certificate, "-utf8",
            ]
        )
        return (key, certificate)
    }

    @Test(arguments: [
        (256, "gost89", "md_gost12_256"), (256, "kuznyechik-ctr-acpkm", "md_gost12_512"),
        (512, "kuznyechik-ctr-acpkm", "md_gost12_512"), (512, "gost89", "md_gost12_256"),
    ])
    func openSSLGOSTFilesOpenAndSign(bits: Int, pbe: String, mac: String) async throws {
        let directory = try TemporaryDirectory(prefix: "gost-p12")
        let (key, certificate) = try Self.opensslKeyAndCertificate(bits: bits, in: directory)
        try Fixtures.run(
            "openssl",
            [
                "pkcs12", "-engine", "gost", "-export", "-keypbe", pbe, "-certpbe", pbe, "-macalg", mac,
                "-inkey", key, "-in", certificate, "-name", "ГОСТ ключ", "-out", directory.path("id.p12"),
                "-passout", "env:P12PASS",
            ],
            environment: ["P12PASS": Self.password]
        )
        let bytes = try directory.read("id.p12")
        let file = try PKCS12File(data: bytes, password: Secret(Self.password))
        #expect(file.protection.isMACVerified)
        #expect(
            file.protection.macAlgorithm?.oid.hasPrefix("1.2.643.7.1.1.2") == true,
            "\(String(describing: file.protection.macAlgorithm))"
        )
        #expect(file.protection.keyEncryption.first?.name == "PBES2")
        #expect(file.aliases == ["ГОСТ ключ"])
        let identity = try file.identity()
        #expect(identity.certificate.publicKeyAlgorithm.gostKeySize == bits)
        #expect(identity.key.publicKeyAlgorithm == identity.certificate.publicKeyAlgorithm)
        let digestAlgorithm = try DigestAlgorithm.preferred(for: identity.key.publicKeyAlgorithm)
        let data = Array("подпись".utf8)
        let signature = try await identity.key.signature(
            for: data,
            digestAlgorithm: digestAlgorithm,
            scheme: identity.key.defaultScheme
        )
        let local = try #require(identity.key as? LocalSigningKey)
        #expect(local.isValidSignature(signature, for: data, digestAlgorithm: digestAlgorithm, scheme: .gostR34102012))

        #expect(throws: CertificateProviderError(.wrongPassword, "")) {
            try PKCS12File(data: bytes, password: Secret("wrong"))
        }
        #expect(throws: CertificateProviderError(.passwordRequired, "")) { try PKCS12File(data: bytes, password: nil) }
        var damaged = bytes
        damaged[damaged.count / 2] ^= 0x01
        #expect(throws: CertificateProviderError.self) {
            try PKCS12File(data: damaged, password: Secret(Self.password))
        }
    }

    @Test(arguments: [256, 512])
    func theStoreKeepsGOSTIdentitiesAndExportsWhatOpenSSLReads(bits: Int) throws {
        let directory = try TemporaryDirectory(prefix: "gost-store")
        let (key, certificate) = try Self.opensslKeyAndCertificate(bits: bits, in: directory)
        try Fixtures.run(
            "openssl",
            [
                "pkcs12", "-engine", "gost", "-export", "-keypbe", "gost89", "-certpbe", "gost89",
                "-macalg", "md_gost12_256", "-inkey", key, "-in", certificate, "-out", directory.path("in.p12"),
                "-passout", "env:P12PASS",
            ],
            environment: ["P12PASS": Self.password]
        )
        let store = PKCS12IdentityStore(directory: directory.url.appendingPathComponent("store"))
        let (identity, metadata) = try store.import(
            pkcs12Data: try directory.read("in.p12"),
            password: Secret(Self.password),
            alias: "гост",
            storePassword: Secret("store-pass")
        )
        #expect(metadata.keyAlgorithm.hasPrefix("GOST R 34.10-2012 \(bits)"))
        #expect(metadata.keySize == bits)
        let unlocked = try store.identity(alias: "гост", password: Secret("store-pass"))
        #expect(unlocked.certificate == identity.certificate)
        #expect(unlocked.key.publicKeyDERRepresentation == identity.key.publicKeyDERRepresentation)

        let exported = directory.path("out.p12")
        try store.export(
            alias: "гост",
            password: Secret("store-pass"),
            exportPassword: Secret("export-pass"),
            to: exported
        )
        let read = try Fixtures.run(
            "openssl",
            ["pkcs12", "-engine", "gost", "-in", exported, "-passin", "env:EXPORT", "-nodes"],
            environment: ["EXPORT": "export-pass"]
        )
        #expect(read.output.contains("-----BEGIN PRIVATE KEY-----"))
        // The key openssl read is the stored key: its public half equals the certificate's.
        let keyOnly = try directory.write("exported-key.pem", text: read.output)
        let publicFromKey = try Fixtures.run("openssl", ["pkey", "-engine", "gost", "-in", keyOnly, "-pubout"]).output
        let publicFromCertificate = try Fixtures.run(
            "openssl",
            ["x509", "-engine", "gost", "-in", certificate, "-noout", "-pubkey"]
        ).output
        #expect(publicFromKey == publicFromCertificate)
    }

    /// A process whose OpenSSL cannot load the engine (OPENSSL_ENGINES pointing at an empty
    /// directory): `.unsupportedAlgorithm` saying what to install, whether the MAC, the encryption or
    /// only the key is GOST; the same file opens in a normal process.
    @Test func withoutTheEngineTheErrorSaysWhatToInstall() throws {
        let directory = try TemporaryDirectory(prefix: "gost-no-engine")
        let (key, certificate) = try Self.opensslKeyAndCertificate(bits: 256, in: directory)
        let variants: [(String, [String])] = [
            ("gost-mac", ["-keypbe", "gost89", "-certpbe", "gost89", "-macalg", "md_gost12_256"]),
            ("gost-cipher", ["-keypbe", "gost89", "-certpbe", "gost89", "-nomac"]),
            ("gost-key-only", ["-keypbe", "AES-256-CBC", "-certpbe", "NONE", "-nomac"]),
        ]
        for (name, options) in variants {
            let path = directory.path("\(name).p12")
            try Fixtures.run(
                "openssl",
                [
                    "pkcs12", "-engine", "gost", "-export", "-inkey", key, "-in", certificate, "-out", path,
                    "-passout", "env:P12PASS",
                ] + options,
                environment: ["P12PASS": Self.password]
            )
            let without = try ExternalTool.run(
                Fixtures.storeToolPath,
                ["open", path],
                environment: ["PKCS12_PASSWORD": Self.password, "OPENSSL_ENGINES": directory.path("no-engines")]
            )
            #expect(without.status == 1)
            #expect(
                without.output.hasPrefix("error unsupportedAlgorithm: GOST needs libengine-gost-openssl"),
                "\(name): \(without.output)"
            )
            let with = try ExternalTool.run(
                Fixtures.storeToolPath,
                ["open", path],
                environment: ["PKCS12_PASSWORD": Self.password]
            )
            #expect(with.output.hasPrefix("ok CN=Подписант ГОСТ 256"), "\(name): \(with.output)")
        }
    }

    /// CryptoPro CSP's own export protects the key bag with 1.2.840.113549.1.12.1.80: the file
    /// is refused with a reason that says what it is and how to convert it.
    @Test func cryptoProCSPExportsAreExplained() throws {
        let directory = try TemporaryDirectory(prefix: "gost-cryptopro")
        let (key, certificate) = try Self.opensslKeyAndCertificate(bits: 256, in: directory)
        // A key bag encrypted with pbeWithSHAAnd3-KeyTripleDES-CBC (1.2.840.113549.1.12.1.3), whose OID
        // is then turned into CryptoPro's …12.1.80, as in a PFX that CryptoPro CSP wrote.
        try Fixtures.run(
            "openssl",
            [
                "pkcs12", "-engine", "gost", "-export", "-keypbe", "PBE-SHA1-3DES", "-certpbe", "NONE", "-nomac",
                "-inkey", key, "-in", certificate, "-out", directory.path("csp.pfx"), "-passout", "env:P12PASS",
            ],
            environment: ["P12PASS": Self.password]
        )
        var bytes = try directory.read("csp.pfx")
        let tripleDES: [UInt8] = [0x06, 0x0A, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x0C, 0x01, 0x03]
        let index = try #require(
            (0...(bytes.count - tripleDES.count)).first { bytes[$0..<($0 + tripleDES.count)].elementsEqual(tripleDES) }
        )
        bytes[index + tripleDES.count - 1] = 80
        do {
            _ = try PKCS12File(data: bytes, password: Secret(Self.password))
            Issue.record("a CryptoPro CSP PFX opened")
        } catch let error as CertificateProviderError {
            #expect(error.code == .unsupportedAlgorithm)
            #expect(error.reason.contains("CryptoPro CSP"))
            #expect(error.reason.contains("1.2.840.113549.1.12.1.80"))
            #expect(error.reason.contains("openssl pkcs12 -engine gost -export"))
        }
    }
}
