import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS11Provider
import SignatureJournal
import Signing
import TestSupport
import Testing

/// Signing on SoftHSM2 tokens made by softhsm2-util / pkcs11-tool / python-pkcs11; every signature
/// is checked by `openssl cms -verify` (or `openssl pkeyutl -verify`) against the test CA.
@Suite(
    "PKCS#11 signing on SoftHSM2",
    .enabled(if: SoftHSMFixture.isAvailable, "softhsm2, opensc or openssl is not installed")
)
struct PKCS11SigningTests {
    static let document = Array("Счёт № 42: PKCS#11 signing test\n".utf8)

    @Test("RSA-2048 by label: CAdES-BES that openssl cms -verify accepts, with the chain from the token")
    func rsaByLabel() async throws {
        let directory = try TemporaryDirectory()
        let (provider, identity) = try await PKCS11Testing.provider("pkcs11:token=signer;object=rsakey")
        #expect(identity.certificate.subject.contains("RSA Token Signer"))
        #expect(identity.key.publicKeyAlgorithm == .rsa && identity.key.keySize == 2048)
        #expect(identity.chain.map(\.subject) == [try SoftHSMFixture.shared().caCertificate.subject])
        let signature = try await CMSSigner.sign(content: Self.document, identity: identity, format: .cadesBES)
        let result = try PKCS11Testing.opensslVerifies(signature, content: Self.document, in: directory)
        #expect(result.succeeded, "\(result.errorOutput)")
        let dump = try PKCS11Testing.opensslPrint(signature, in: directory)
        #expect(dump.contains("id-smime-aa-signingCertificateV2"))
        #expect(dump.contains("rsaEncryption"))
        // The token may already be logged in by another test's connection (login state is the process's).
        #expect(provider.connectionDiagnostics.map { $0.logins <= 1 && $0.failedLogins == 0 } == true)
    }

    @Test("P-256 by id (%02): CKM_ECDSA's r||s is DER-encoded; openssl cms -verify accepts it")
    func p256ByID() async throws {
        let directory = try TemporaryDirectory()
        let (_, identity) = try await PKCS11Testing.provider("pkcs11:token=signer;id=%02")
        #expect(identity.key.publicKeyAlgorithm == .ecP256)
        let signature = try await CMSSigner.sign(content: Self.document, identity: identity, format: .cadesBES)
        let result = try PKCS11Testing.opensslVerifies(signature, content: Self.document, in: directory)
        #expect(result.succeeded, "\(result.errorOutput)")
        #expect(try PKCS11Testing.opensslPrint(signature, in: directory).contains("ecdsa-with-SHA256"))
    }

    @Test(
        "P-384 by token serial and label, SHA-384",
        .enabled(if: SoftHSMFixture.hasPythonPKCS11, "python-pkcs11 exports the P-384 public key")
    )
    func p384BySerial() async throws {
        let directory = try TemporaryDirectory()
        let serial = try #require(try SoftHSMFixture.shared().serials[SoftHSMFixture.Token.signer])
        let (_, identity) = try await PKCS11Testing.provider("pkcs11:serial=\(serial);object=ec384")
        #expect(identity.key.publicKeyAlgorithm == .ecP384)
        let signature = try await CMSSigner.sign(
            content: Self.document,
            identity: identity,
            format: .cadesBES,
            digestAlgorithm: .sha384
        )
        let result = try PKCS11Testing.opensslVerifies(signature, content: Self.document, in: directory)
        #expect(result.succeeded, "\(result.errorOutput)")
    }

    @Test(
        "a key generated through python-pkcs11 signs too",
        .enabled(if: SoftHSMFixture.hasPythonPKCS11, "python-pkcs11 is not installed")
    )
    func pythonMadeKey() async throws {
        let directory = try TemporaryDirectory()
        let (_, identity) = try await PKCS11Testing.provider("pkcs11:token=signer;object=pykey;type=private")
        #expect(identity.certificate.subject.contains("Python Made Token Signer"))
        let signature = try await CMSSigner.sign(content: Self.document, identity: identity, format: .cadesBES)
        let result = try PKCS11Testing.opensslVerifies(signature, content: Self.document, in: directory)
        #expect(result.succeeded, "\(result.errorOutput)")
    }

    @Test(
        "RSA-PSS: CKM_RSA_PKCS_PSS (MGF1-SHA256, salt 32) verifies with openssl pkeyutl -pkeyopt rsa_padding_mode:pss"
    )
    func rsaPSSRaw() async throws {
        let directory = try TemporaryDirectory()
        let (_, identity) = try await PKCS11Testing.provider("pkcs11:token=pss;object=rsakey")
        let digest = DigestAlgorithm.sha256.hash(Self.document)
        let signature = try await identity.key.signature(forDigest: digest, digestAlgorithm: .sha256, scheme: .rsaPSS)
        let certificate = try directory.write("cert.pem", text: identity.certificate.pemRepresentation)
        let digestPath = try directory.write("digest.bin", digest)
        let signaturePath = try directory.write("sig.bin", signature)
        let result = try ExternalTool.run(
            "openssl",
            [
                "pkeyutl", "-verify", "-certin", "-inkey", certificate, "-in", digestPath, "-sigfile", signaturePath,
                "-pkeyopt", "digest:sha256", "-pkeyopt", "rsa_padding_mode:pss", "-pkeyopt", "rsa_pss_saltlen:32",
            ]
        )
        #expect(result.succeeded, "\(result.output) \(result.errorOutput)")
        // PSS is randomised: a second signature differs and verifies too.
        let again = try await identity.key.signature(forDigest: digest, digestAlgorithm: .sha256, scheme: .rsaPSS)
        #expect(again != signature)
    }

    @Test("RSA-PSS CAdES-BES (scheme=rsa-pss): SignerInfo algorithm RSASSA-PSS, openssl cms -verify accepts it")
    func rsaPSSCAdES() async throws {
        let directory = try TemporaryDirectory()
        _ = try SoftHSMFixture.shared()
        let provider = try PKCS11CertificateProvider(parameters: [
            PKCS11CertificateProvider.ParameterKey.module: .string(SoftHSMFixture.softHSMModule),
            PKCS11CertificateProvider.ParameterKey.scheme: .string("rsa-pss"),
        ])
        let identity = try await provider.initialize(options: [
            PKCS11CertificateProvider.ParameterKey.uri: .string("pkcs11:token=pss;object=rsakey"),
            PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret(SoftHSMFixture.pin)),
        ])
        #expect(identity.key.defaultScheme == .rsaPSS)
        for digest in [DigestAlgorithm.sha256, .sha512] {
            let signature = try await CMSSigner.sign(
                content: Self.document,
                identity: identity,
                format: .cadesBES,
                digestAlgorithm: digest
            )
            let result = try PKCS11Testing.opensslVerifies(signature, content: Self.document, in: directory)
            #expect(result.succeeded, "\(digest): \(result.errorOutput)")
            let dump = try PKCS11Testing.opensslPrint(signature, in: directory)
            #expect(dump.contains("rsassaPss"), "\(dump)")
            #expect(dump.contains("mgf1"))
        }
        let ecError = await PKCS11Testing.error {
            _ = try await provider.initialize(options: [
                PKCS11CertificateProvider.ParameterKey.uri: .string("pkcs11:token=signer;object=eckey"),
                PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret(SoftHSMFixture.pin)),
            ])
        }
        #expect(ecError?.code == .unsupportedAlgorithm)
    }

    @Test("CKA_ALWAYS_AUTHENTICATE: a context-specific login with the same PIN before each signature")
    func alwaysAuthenticate() async throws {
        let directory = try TemporaryDirectory()
        let (provider, identity) = try await PKCS11Testing.provider("pkcs11:token=always-auth;object=rsakey")
        let key = try #require(identity.key as? PKCS11SigningKey)
        #expect(key.requiresLoginPerSignature)
        for round in 1...3 {
            let signature = try await CMSSigner.sign(content: Self.document, identity: identity, format: .cadesBES)
            let result = try PKCS11Testing.opensslVerifies(signature, content: Self.document, in: directory)
            #expect(result.succeeded, "round \(round): \(result.errorOutput)")
        }
        #expect(provider.connectionDiagnostics?.contextLogins == 3)
        #expect(provider.connectionDiagnostics?.logins == 1)
    }

    @Test("8 concurrent signing tasks on one identity all succeed and verify")
    func concurrentSigners() async throws {
        let directory = try TemporaryDirectory()
        let (provider, identity) = try await PKCS11Testing.provider("pkcs11:token=concurrent;object=rsakey")
        let signatures = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for index in 0..<8 {
                group.addTask {
                    let content = Array("document \(index)\n".utf8)
                    var last: [UInt8] = []
                    for _ in 0..<4 {
                        last = try await CMSSigner.sign(content: content, identity: identity, format: .cadesBES)
                    }
                    return (index, last)
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(signatures.count == 8)
        for (index, signature) in signatures {
            let result = try PKCS11Testing.opensslVerifies(
                signature,
                content: Array("document \(index)\n".utf8),
                in: directory
            )
            #expect(result.succeeded, "signer \(index): \(result.errorOutput)")
        }
        let diagnostics = try #require(provider.connectionDiagnostics)
        #expect(diagnostics.logins == 1 && diagnostics.failedLogins == 0)
        #expect(diagnostics.sessionsOpened >= 1 && diagnostics.sessionsOpened <= 8)
    }

    @Test("all sessions closed behind the pool (C_CloseAllSessions): one clean re-open and login, then signing goes on")
    func reopenAfterSessionsClosed() async throws {
        let directory = try TemporaryDirectory()
        let (provider, identity) = try await PKCS11Testing.provider("pkcs11:token=reopen;object=eckey")
        _ = try await CMSSigner.sign(content: Self.document, identity: identity, format: .cadesBES)
        try provider.closeAllSessionsBehindThePool()
        let signature = try await CMSSigner.sign(content: Self.document, identity: identity, format: .cadesBES)
        #expect(try PKCS11Testing.opensslVerifies(signature, content: Self.document, in: directory).succeeded)
        let diagnostics = try #require(provider.connectionDiagnostics)
        #expect(diagnostics.reopens == 1)
        #expect(diagnostics.logins == 2 && diagnostics.failedLogins == 0)
    }

    @Test("storedCertificate while open; deleteStoredCertificate logs out, forgets, keeps the token's objects")
    func storedAndDeleted() async throws {
        let (provider, identity) = try await PKCS11Testing.provider("pkcs11:token=signer;object=eckey")
        #expect(try provider.storedCertificate()?.certificate == identity.certificate)
        #expect(provider.parameters[PKCS11CertificateProvider.ParameterKey.pin] == nil)
        #expect(
            try provider.parameters.string(PKCS11CertificateProvider.ParameterKey.uri)
                == "pkcs11:token=signer;object=eckey"
        )
        try provider.deleteStoredCertificate()
        #expect(try provider.storedCertificate() == nil)
        let error = await PKCS11Testing.error {
            _ = try await identity.key.signature(for: Self.document, digestAlgorithm: .sha256, scheme: .ecdsa)
        }
        #expect(error?.code == .notStored)
        try provider.deleteStoredCertificate()  // nothing open: no-op
        // The key is still on the token: a new provider finds it again.
        let (_, again) = try await PKCS11Testing.provider("pkcs11:token=signer;object=eckey")
        #expect(again.certificate == identity.certificate)
    }

    @Test("the module from the URI's ?module-path=, and a URI naming the certificate (type=cert)")
    func modulePathAndCertificateURI() async throws {
        _ = try SoftHSMFixture.shared()
        let provider = try PKCS11CertificateProvider()  // default module: p11-kit's proxy, overridden by the URI
        let identity = try await provider.initialize(options: [
            PKCS11CertificateProvider.ParameterKey.uri: .string(
                "pkcs11:token=signer;object=rsakey;type=cert?module-path=\(SoftHSMFixture.softHSMModule)"
            ),
            PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret(SoftHSMFixture.pin)),
        ])
        #expect(identity.certificate.subject.contains("RSA Token Signer"))
        #expect((identity.key as? PKCS11SigningKey)?.id == [0x01])
    }

    @Test("a PIN given through setParameters is used once and never shown in parameters")
    func pinThroughSetParameters() async throws {
        _ = try SoftHSMFixture.shared()
        let provider = try PKCS11CertificateProvider()
        try provider.setParameters([
            PKCS11CertificateProvider.ParameterKey.module: .string(SoftHSMFixture.softHSMModule),
            PKCS11CertificateProvider.ParameterKey.uri: .string("pkcs11:token=signer;object=eckey"),
            PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret(SoftHSMFixture.pin)),
        ])
        #expect(provider.parameters[PKCS11CertificateProvider.ParameterKey.pin] == nil)
        #expect(!provider.parameters.description.contains(SoftHSMFixture.pin))
        let identity = try await provider.initialize(options: ProviderParameters())
        #expect(identity.certificate.subject.contains("EC Token Signer"))
    }

    @Test("through the SigningCoordinator with the provider registered under 'pkcs11'")
    func throughCoordinator() async throws {
        let directory = try TemporaryDirectory()
        _ = try SoftHSMFixture.shared()
        var registry = ProviderRegistry()
        try PKCS11CertificateProvider.register(
            in: &registry,
            parameters: [PKCS11CertificateProvider.ParameterKey.module: .string(SoftHSMFixture.softHSMModule)]
        )
        let journal = try SignatureJournal(url: directory.url.appendingPathComponent("journal.sqlite"))
        let coordinator = SigningCoordinator(registry: registry, journal: journal)
        let parameters: ProviderParameters = [
            PKCS11CertificateProvider.ParameterKey.uri: .string("pkcs11:token=signer;object=rsakey"),
            PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret(SoftHSMFixture.pin)),
        ]
        let result = try await coordinator.sign(
            document: .bytes(Self.document, name: "invoice.txt"),
            provider: .pkcs11,
            parameters: parameters
        )
        #expect(try PKCS11Testing.opensslVerifies(result.signature, content: Self.document, in: directory).succeeded)
    }
}
