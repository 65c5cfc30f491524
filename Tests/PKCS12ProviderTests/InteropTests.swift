import COpenSSL
import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import TestSupport
import Testing

/// Files written at test time by openssl, keytool and Python `cryptography`, opened and used to sign;
/// every signature is verified by `openssl dgst -verify`.
@Suite("PKCS#12 interop with real tools")
struct InteropTests {
    // MARK: openssl

    @Test(
        "openssl 3 default (PBES2/AES-256, SHA-256 MAC), RSA-2048",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func opensslDefaultRSA() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Иван Петров,O=ООО Ромашка", keyType: .rsa2048)
        let bytes = try Fixtures.opensslExport(original, password: "s3cret", in: directory)
        let file = try PKCS12File(data: bytes, password: Secret("s3cret"))
        #expect(file.protection.macAlgorithm?.name == "sha256")
        #expect(file.protection.isMACVerified)
        #expect(file.protection.keyEncryption.first?.cipher == "AES-256-CBC")
        #expect(file.protection.contentEncryption.first?.pseudoRandomFunction == "hmacWithSHA256")
        #expect(file.keys.first?.friendlyName == "signer")
        let identity = try file.identity()
        #expect(identity.certificate == original.certificate)
        #expect(identity.chain == original.chain)
        try await Fixtures.signAndVerifyWithOpenSSL(identity)
    }

    @Test(
        "openssl -legacy (RC2-40 certificates, 3DES key, SHA-1 MAC), EC P-256",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func opensslLegacyEC() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Legacy Signer", keyType: .p256)
        let bytes = try Fixtures.opensslExport(original, password: "legacy-pass", arguments: ["-legacy"], in: directory)
        let file = try PKCS12File(data: bytes, password: Secret("legacy-pass"))
        #expect(file.protection.macAlgorithm?.name == "sha1")
        #expect(file.protection.contentEncryption.first?.name == "pbeWithSHA1And40BitRC2-CBC")
        #expect(file.protection.keyEncryption.first?.name == "pbeWithSHA1And3-KeyTripleDES-CBC")
        let identity = try file.identity()
        #expect(identity.key.publicKeyAlgorithm == .ecP256)
        try await Fixtures.signAndVerifyWithOpenSSL(identity)
        expectError(.wrongPassword) { _ = try PKCS12File(data: bytes, password: Secret("wrong")) }
    }

    @Test(
        "openssl default with EC P-256 and with RSA-4096",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed"),
        arguments: [LocalSigningKey.GenerationParameters.p256, .rsa(bits: 4096)]
    )
    func opensslKeyTypes(keyType: LocalSigningKey.GenerationParameters) async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Key type \(keyType)", keyType: keyType)
        let bytes = try Fixtures.opensslExport(original, password: "pw", in: directory)
        let identity = try PKCS12File(data: bytes, password: Secret("pw")).identity()
        #expect(identity.key.keySize == (keyType == .p256 ? 256 : 4096))
        try await Fixtures.signAndVerifyWithOpenSSL(identity)
    }

    @Test(
        "a chain leaf + intermediate + root comes back ordered leaf → root",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func chainOrdering() async throws {
        let directory = try TemporaryDirectory()
        let intermediate = try Fixtures.pki.issueIntermediate(
            subject: "CN=PKCS12 Test Intermediate,O=swift-certificate-providers"
        )
        let leaf = try Fixtures.pki.issueLeaf(subject: "CN=Chained Signer", keyType: .p256, issuer: intermediate)
        // Give openssl the chain root first, so the order in the file is not the answer.
        let scrambled = SigningIdentity(certificate: leaf.certificate, chain: leaf.chain.reversed(), key: leaf.key)
        let bytes = try Fixtures.opensslExport(scrambled, password: "chain", in: directory)
        let file = try PKCS12File(data: bytes, password: Secret("chain"))
        #expect(file.certificates.count == 3)
        let identity = try file.identity()
        #expect(identity.certificate == leaf.certificate)
        #expect(identity.chain == [intermediate.certificate, Fixtures.pki.root.certificate])
        try await Fixtures.signAndVerifyWithOpenSSL(identity)
    }

    @Test(
        "openssl -nomac opens, and a wrong password is still told apart",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func noMAC() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=No MAC")
        let bytes = try Fixtures.opensslExport(original, password: "nomac", arguments: ["-nomac"], in: directory)
        let file = try PKCS12File(data: bytes, password: Secret("nomac"))
        #expect(file.protection.macAlgorithm == nil)
        #expect(!file.protection.isMACVerified)
        try await Fixtures.signAndVerifyWithOpenSSL(try file.identity())
        expectError(.wrongPassword) { _ = try PKCS12File(data: bytes, password: Secret("wrong")) }
        expectError(.passwordRequired) { _ = try PKCS12File(data: bytes, password: nil) }
    }

    @Test(
        "an unencrypted file (-keypbe NONE -certpbe NONE) opens; its key counts as plaintext",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func unencrypted() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Plain")
        let bytes = try Fixtures.opensslExport(
            original,
            password: "",
            arguments: ["-keypbe", "NONE", "-certpbe", "NONE"],
            in: directory
        )
        let file = try PKCS12File(data: bytes, password: nil)
        #expect(file.protection.plaintextKeyCount == 1)
        #expect(file.protection.keyEncryption.isEmpty)
        try await Fixtures.signAndVerifyWithOpenSSL(try file.identity())
    }

    @Test(
        "the empty password: opened with \"\" and with no password at all",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func emptyPassword() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Empty Password")
        let bytes = try Fixtures.opensslExport(original, password: nil, in: directory)
        let withEmpty = try PKCS12File(data: bytes, password: Secret(""))
        let withNone = try PKCS12File(data: bytes, password: nil)
        #expect(withEmpty.protection.isMACVerified && withNone.protection.isMACVerified)
        try await Fixtures.signAndVerifyWithOpenSSL(try withNone.identity())
        expectError(.wrongPassword) { _ = try PKCS12File(data: bytes, password: Secret("not empty")) }
    }

    @Test(
        "the absent password (a MAC over a NULL password, as PKCS12_create(NULL, …) writes): opened with nil and with \"\""
    )
    func absentPassword() async throws {
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Absent Password")
        let key = try #require(original.key as? LocalSigningKey)
        // No tool writes this, so OpenSSL's own API does: no encryption, MAC keyed by a NULL password.
        let bytes = try #require(
            writeWithNullPassword(
                key: key.pemRepresentation(password: nil),
                certificate: original.certificate.derRepresentation
            )
        )
        for password in [nil, Secret("")] {
            let file = try PKCS12File(data: bytes, password: password)
            #expect(file.protection.isMACVerified)
            try await Fixtures.signAndVerifyWithOpenSSL(try file.identity())
        }
        expectError(.wrongPassword) { _ = try PKCS12File(data: bytes, password: Secret("x")) }
    }

    @Test(
        "a Cyrillic password written by openssl 3 (UTF-8 → BMPString)",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func cyrillicPasswordOpenSSL() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Пароль кириллицей")
        let password = "Пароль-Ёж-123"
        let bytes = try Fixtures.opensslExport(original, password: password, arguments: ["-legacy"], in: directory)
        try await Fixtures.signAndVerifyWithOpenSSL(try PKCS12File(data: bytes, password: Secret(password)).identity())
        let modern = try Fixtures.opensslExport(original, password: password, in: directory)
        try await Fixtures.signAndVerifyWithOpenSSL(try PKCS12File(data: modern, password: Secret(password)).identity())
        expectError(.wrongPassword) { _ = try PKCS12File(data: modern, password: Secret("пароль-ёж-123")) }
    }

    @Test(
        "a non-ASCII password as OpenSSL 1.0 wrote it (each UTF-8 byte taken as one BMP character) still opens",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func openSSL10Password() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=OpenSSL 1.0 era")
        let password = "Пароль"
        // OpenSSL 1.0 turned each byte into one BMP character: the UTF-8 bytes read as Latin-1.
        let asOpenSSL10Wrote = String(String.UnicodeScalarView(password.utf8.map { Unicode.Scalar($0) }))
        #expect(asOpenSSL10Wrote.unicodeScalars.count == password.utf8.count)
        let bytes = try Fixtures.opensslExport(
            original,
            password: asOpenSSL10Wrote,
            arguments: ["-legacy"],
            in: directory
        )
        let file = try PKCS12File(data: bytes, password: Secret(password))
        #expect(file.protection.isMACVerified)
        try await Fixtures.signAndVerifyWithOpenSSL(try file.identity())
    }

    @Test(
        "a file with certificates only gives .noPrivateKey",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func certificatesOnly() throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Certs Only")
        let bytes = try Fixtures.opensslExport(original, password: "pw", arguments: ["-nokeys"], in: directory)
        let file = try PKCS12File(data: bytes, password: Secret("pw"))
        #expect(file.keys.isEmpty && file.certificates.count == 2)
        expectError(.noPrivateKey) { _ = try file.identity() }
    }

    @Test(
        "a key whose certificate is missing gives .keyCertificateMismatch",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func keyWithoutItsCertificate() throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Key Owner")
        let stranger = try Fixtures.pki.issueLeaf(subject: "CN=Stranger")
        try Fixtures.writePEM(original, in: directory)
        try directory.write("other.pem", text: stranger.certificate.pemRepresentation)
        try Fixtures.run(
            "openssl",
            [
                "pkcs12", "-export", "-nocerts", "-inkey", directory.path("key.pem"), "-certfile",
                directory.path("other.pem"),
                "-out", directory.path("mismatch.p12"), "-passout", "env:P",
            ],
            environment: ["P": "pw"]
        )
        let file = try PKCS12File(data: try directory.read("mismatch.p12"), password: Secret("pw"))
        #expect(file.keys.count == 1 && file.keys[0].certificate == nil)
        let error = expectError(.keyCertificateMismatch) { _ = try file.identity() }
        #expect(error?.reason.contains("CN=Stranger") == true)
    }

    @Test(
        "RC2 without OpenSSL's legacy provider gives .unsupportedAlgorithm naming it (separate process)",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func legacyProviderMissing() throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=RC2")
        let bytes = try Fixtures.opensslExport(original, password: "pw", arguments: ["-legacy"], in: directory)
        let path = try directory.write("legacy.p12", bytes)
        // OPENSSL_MODULES pointing nowhere: the built-in default provider loads, legacy cannot.
        let result = try ExternalTool.run(
            Fixtures.storeToolPath,
            ["open", path],
            environment: ["PKCS12_PASSWORD": "pw", "OPENSSL_MODULES": directory.path("no-modules")]
        )
        #expect(result.status == 1)
        #expect(result.output.hasPrefix("error unsupportedAlgorithm"), "\(result.output)")
        #expect(result.output.contains("pbeWithSHA1And40BitRC2-CBC"))
        let normal = try ExternalTool.run(
            Fixtures.storeToolPath,
            ["open", path],
            environment: ["PKCS12_PASSWORD": "pw"]
        )
        #expect(normal.output.hasPrefix("ok CN=RC2"), "\(normal.output)")
    }

    @Test(
        "an unknown cipher OID gives .unsupportedAlgorithm naming the OID",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func unknownCipher() throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Odd Cipher")
        var bytes = try Fixtures.opensslExport(original, password: "pw", arguments: ["-nomac"], in: directory)
        // aes-256-cbc is 2.16.840.1.101.3.4.1.42: 06 09 60 86 48 01 65 03 04 01 2A. Make it …1.99.
        let oid: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x2A]
        var patched = 0
        var index = 0
        while index + oid.count <= bytes.count {
            if Array(bytes[index..<index + oid.count]) == oid {
                bytes[index + oid.count - 1] = 0x63
                patched += 1
            }
            index += 1
        }
        #expect(patched >= 1)
        let error = expectError(.unsupportedAlgorithm) {
            _ = try PKCS12File(data: bytes, password: Secret("pw"))
        }
        #expect(error?.reason.contains("2.16.840.1.101.3.4.1.99") == true, "\(String(describing: error))")

        // PBES2 is 1.2.840.113549.1.5.13; make it the unknown scheme …1.5.127.
        var scheme = try directory.read("out.p12")
        let pbes2: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0D]
        var found = 0
        for start in 0...(scheme.count - pbes2.count) where Array(scheme[start..<start + pbes2.count]) == pbes2 {
            scheme[start + pbes2.count - 1] = 0x7F
            found += 1
        }
        #expect(found >= 1)
        let schemeError = expectError(.unsupportedAlgorithm) {
            _ = try PKCS12File(data: scheme, password: Secret("pw"))
        }
        #expect(schemeError?.reason.contains("1.2.840.113549.1.5.127") == true, "\(String(describing: schemeError))")
    }

    // MARK: keytool

    struct KeytoolCase: Sendable, CustomTestStringConvertible {
        let algorithm: String
        let legacy: Bool
        var testDescription: String { "\(algorithm)\(legacy ? " legacy" : "")" }
    }

    @Test(
        "keytool PKCS12 keystores",
        .enabled(if: Fixtures.hasKeytool, "keytool (JDK) is not installed"),
        arguments: [
            KeytoolCase(algorithm: "RSA", legacy: false), KeytoolCase(algorithm: "EC", legacy: false),
            KeytoolCase(algorithm: "RSA", legacy: true), KeytoolCase(algorithm: "EC", legacy: true),
        ]
    )
    func keytool(_ testCase: KeytoolCase) async throws {
        let directory = try TemporaryDirectory()
        let store = directory.path("keystore.p12")
        var arguments = [
            "-genkeypair", "-alias", "Подписант", "-keyalg", testCase.algorithm,
            "-keysize", testCase.algorithm == "RSA" ? "2048" : "256", "-dname",
            "CN=Keytool \(testCase.algorithm),O=Test",
            "-validity", "30", "-storetype", "PKCS12", "-keystore", store, "-storepass:env", "KSPASS", "-keypass:env",
            "KSPASS",
        ]
        if testCase.legacy { arguments.insert("-J-Dkeystore.pkcs12.legacy", at: 0) }
        // The JDK refuses non-ASCII passwords for PBES2 ("Password is not ASCII"); the alias is Cyrillic.
        try Fixtures.run("keytool", arguments, environment: ["KSPASS": "keytool-pass"])
        let file = try PKCS12File(contentsOf: store, password: Secret("keytool-pass"))
        #expect(file.keys.first?.friendlyName == "подписант")  // keytool lower-cases aliases
        if testCase.legacy {
            #expect(file.protection.macAlgorithm?.name == "sha1")
            #expect(file.protection.keyEncryption.first?.name == "pbeWithSHA1And3-KeyTripleDES-CBC")
        } else {
            #expect(file.protection.keyEncryption.first?.cipher == "AES-256-CBC")
        }
        let identity = try file.identity(alias: "Подписант")
        try await Fixtures.signAndVerifyWithOpenSSL(identity)
        expectError(.wrongPassword) { _ = try PKCS12File(contentsOf: store, password: Secret("wrong")) }
    }

    @Test(
        "keytool -importkeystore from a JKS keystore to PKCS12",
        .enabled(if: Fixtures.hasKeytool, "keytool (JDK) is not installed")
    )
    func keytoolImportKeystore() async throws {
        let directory = try TemporaryDirectory()
        let environment = ["SRC": "jks-pass", "DST": "p12-pass"]
        try Fixtures.run(
            "keytool",
            [
                "-genkeypair", "-alias", "java-signer", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=From JKS",
                "-validity", "30", "-storetype", "JKS", "-keystore", directory.path("old.jks"),
                "-storepass:env", "SRC", "-keypass:env", "SRC",
            ],
            environment: environment
        )
        try Fixtures.run(
            "keytool",
            [
                "-importkeystore", "-srckeystore", directory.path("old.jks"), "-srcstoretype", "JKS",
                "-srcstorepass:env", "SRC",
                "-destkeystore", directory.path("new.p12"), "-deststoretype", "PKCS12", "-deststorepass:env", "DST",
            ],
            environment: environment
        )
        let file = try PKCS12File(contentsOf: directory.path("new.p12"), password: Secret("p12-pass"))
        #expect(file.aliases == ["java-signer"])
        try await Fixtures.signAndVerifyWithOpenSSL(try file.identity())
    }

    @Test(
        "two keys with aliases (keytool): ambiguous without alias, selectable by name or local key ID",
        .enabled(if: Fixtures.hasKeytool, "keytool (JDK) is not installed")
    )
    func twoKeys() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.path("two.p12")
        for (alias, algorithm) in [("first", "EC"), ("second", "RSA")] {
            try Fixtures.run(
                "keytool",
                [
                    "-genkeypair", "-alias", alias, "-keyalg", algorithm, "-keysize",
                    algorithm == "RSA" ? "2048" : "256",
                    "-dname", "CN=\(alias)", "-validity", "30", "-storetype", "PKCS12", "-keystore", store,
                    "-storepass:env", "KSPASS",
                ],
                environment: ["KSPASS": "two-keys"]
            )
        }
        let file = try PKCS12File(contentsOf: store, password: Secret("two-keys"))
        #expect(Set(file.aliases) == ["first", "second"])
        let error = expectError(.invalidParameter) { _ = try file.identity() }
        #expect(error?.reason.contains("'first'") == true && error?.reason.contains("'second'") == true)
        expectError(.invalidParameter) { _ = try file.identity(alias: "third") }
        let second = try file.identity(alias: "second")
        #expect(second.certificate.subject == "CN=second")
        try await Fixtures.signAndVerifyWithOpenSSL(second)
        let first = try #require(file.keys.first { $0.friendlyName == "first" })
        let localKeyID: String = try #require(first.localKeyIDHex)
        let byID = try file.identity(alias: localKeyID)
        #expect(byID.certificate.subject == "CN=first")
        try await Fixtures.signAndVerifyWithOpenSSL(byID)
    }

    // MARK: Python cryptography

    @Test(
        "Python cryptography: BestAvailableEncryption and PBESv1SHA1And3KeyTripleDESCBC, Cyrillic password",
        .enabled(if: Fixtures.hasPythonCryptography, "python3 with the cryptography package is not installed"),
        arguments: ["best", "3des"]
    )
    func python(_ mode: String) async throws {
        let directory = try TemporaryDirectory()
        let intermediate = try Fixtures.pki.issueIntermediate(subject: "CN=Python Intermediate")
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Python \(mode)", keyType: .p256, issuer: intermediate)
        try Fixtures.writePEM(original, in: directory)
        let script = """
            import os, sys
            from cryptography import x509
            from cryptography.hazmat.primitives import serialization, hashes
            from cryptography.hazmat.primitives.serialization import pkcs12, PrivateFormat, BestAvailableEncryption
            d = sys.argv[1]; mode = sys.argv[2]
            key = serialization.load_pem_private_key(open(d + "/key.pem", "rb").read(), None)
            cert = x509.load_pem_x509_certificate(open(d + "/cert.pem", "rb").read())
            cas = x509.load_pem_x509_certificates(open(d + "/chain.pem", "rb").read())
            password = os.environb[b"PYPASS"]
            if mode == "best":
                enc = BestAvailableEncryption(password)
            else:
                enc = (PrivateFormat.PKCS12.encryption_builder().kdf_rounds(50000)
                       .key_cert_algorithm(pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC).hmac_hash(hashes.SHA1()).build(password))
            open(d + "/py.p12", "wb").write(pkcs12.serialize_key_and_certificates("питон".encode(), key, cert, cas, enc))
            """
        try directory.write("make.py", text: script)
        try Fixtures.run(
            "python3",
            [directory.path("make.py"), directory.url.path, mode],
            environment: ["PYPASS": "Пароль Питона"]
        )
        let file = try PKCS12File(contentsOf: directory.path("py.p12"), password: Secret("Пароль Питона"))
        #expect(file.keys.first?.friendlyName == "питон")
        if mode == "3des" { #expect(file.protection.keyEncryption.first?.name == "pbeWithSHA1And3-KeyTripleDES-CBC") }
        let identity = try file.identity()
        #expect(identity.chain == [intermediate.certificate, Fixtures.pki.root.certificate])
        try await Fixtures.signAndVerifyWithOpenSSL(identity)
        expectError(.wrongPassword) {
            _ = try PKCS12File(contentsOf: directory.path("py.p12"), password: Secret("пароль питона"))
        }
    }

    // MARK: Our own writer, read by openssl

    @Test(
        "PKCS12File.encode writes PBES2/AES-256 + SHA-256 MAC that openssl opens",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func writerInterop() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Written By Us", keyType: .p256)
        let bytes = try PKCS12File.encode(original, password: Secret("экспорт"), friendlyName: "Моя подпись")
        let path = try directory.write("ours.p12", bytes)
        let info = try Fixtures.run(
            "openssl",
            ["pkcs12", "-in", path, "-info", "-noout", "-passin", "env:P"],
            environment: ["P": "экспорт"]
        )
        #expect(info.errorOutput.contains("MAC: sha256"))
        #expect(info.errorOutput.contains("Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC"))
        #expect(!info.errorOutput.contains("Key bag"))
        let file = try PKCS12File(data: bytes, password: Secret("экспорт"))
        #expect(file.keys.first?.friendlyName == "Моя подпись")
        #expect(file.protection.keyEncryption.first?.iterations == PKCS12File.EncodingOptions.default.iterations)
        try await Fixtures.signAndVerifyWithOpenSSL(try file.identity())
    }
}

/// `PKCS12_create(NULL, …)` + `PKCS12_set_mac(p12, NULL, 0, …)`: the absent-password file.
private func writeWithNullPassword(key pem: String, certificate der: [UInt8]) -> [UInt8]? {
    // BIO_new_mem_buf keeps the pointer: the bytes must outlive the BIO (a String argument is a
    // temporary C string freed when the call returns; AddressSanitizer caught the use after free).
    let pemBytes = Array(pem.utf8)
    let key = pemBytes.withUnsafeBytes { buffer -> OpaquePointer? in
        guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
        defer { BIO_free(bio) }
        return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
    }
    guard let pkey = key else { return nil }
    defer { EVP_PKEY_free(pkey) }
    let x509 = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
        var cursor = buffer.baseAddress
        return d2i_X509(nil, &cursor, buffer.count)
    }
    guard let x509 else { return nil }
    defer { X509_free(x509) }
    guard let p12 = PKCS12_create(nil, "absent", pkey, x509, nil, -1, -1, 0, -1, 0) else { return nil }
    defer { PKCS12_free(p12) }
    guard PKCS12_set_mac(p12, nil, 0, nil, 0, 2048, EVP_sha256()) == 1 else { return nil }
    var output: UnsafeMutablePointer<UInt8>?
    let length = i2d_PKCS12(p12, &output)
    guard length > 0, let output else { return nil }
    defer { CRYPTO_free(output, #fileID, #line) }
    return Array(UnsafeBufferPointer(start: output, count: Int(length)))
}
