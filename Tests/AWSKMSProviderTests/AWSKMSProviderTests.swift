import AWSKMSProvider
import CertificateProviders
import CertificateProvidersTesting
import Foundation
import RemoteProviderSupport
import TestSupport
import Testing

/// The provider in process against moto: the key without a certificate (what a certificate request
/// is made with), the message types, RSA-PSS, and the parameters' environment fallbacks.
@Suite("AWSKMSProvider against moto", .serialized)
struct AWSKMSProviderTests {
    func provider(_ moto: MotoKMS, keyID: String, _ extra: ProviderParameters = [:]) throws -> AWSKMSProvider {
        try AWSKMSProvider(
            parameters: ProviderParameters([
                AWSKMSProvider.ParameterKey.keyID: .string(keyID),
                AWSKMSProvider.ParameterKey.endpointURL: .url(moto.url),
            ]).merging(extra),
            environment: [
                "AWS_ACCESS_KEY_ID": moto.accessKeyID, "AWS_SECRET_ACCESS_KEY": moto.secretAccessKey,
                "AWS_REGION": moto.region,
            ]
        )
    }

    @Test("signingKey() without a certificate: the SPKI boto3 reads, RAW signatures that openssl verifies with it")
    func keyWithoutCertificate() async throws {
        let moto = try MotoKMS()
        for name in ["p256", "rsa"] {
            let key = try await provider(moto, keyID: moto.keys[name]!).signingKey()
            #expect(key.certificate == nil)
            let expected = try Certificate.publicKeyDER(pem: moto.publicKeys[name]!)
            #expect(key.publicKeyDERRepresentation == expected, "\(name): the public key boto3 reads")
            #expect(
                key.publicKeyAlgorithm == (name == "rsa" ? .rsa : .ecP256)
                    && key.keySize == (name == "rsa" ? 2048 : 256)
            )
            let message = Array("a certificate request's info, DER".utf8)
            let signature = try await key.signature(for: message, digestAlgorithm: .sha256, scheme: key.defaultScheme)
            let work = try TemporaryDirectory()
            let verified = try ExternalTool.run(
                "openssl",
                [
                    "dgst", "-sha256", "-verify", try work.write("public.pem", text: moto.publicKeys[name]!),
                    "-signature", try work.write("signature.bin", signature), try work.write("message.bin", message),
                ]
            )
            #expect(verified.succeeded, "\(name): \(verified.output) \(verified.errorOutput)")
        }
    }

    @Test("messageType=digest against moto (which hashes a DIGEST again): refused after the local check, naming auto")
    func digestAgainstMoto() async throws {
        let moto = try MotoKMS()
        let key = try await provider(
            moto,
            keyID: moto.keys["p256"]!,
            [AWSKMSProvider.ParameterKey.messageType: .string("digest")]
        ).signingKey()
        await expectError(.invalidServerSignature, containing: "messageType=auto") {
            try await key.signature(for: [1, 2, 3], digestAlgorithm: .sha256, scheme: .ecdsa)
        }
        let raw = try await provider(
            moto,
            keyID: moto.keys["p256"]!,
            [AWSKMSProvider.ParameterKey.messageType: .string("raw")]
        )
        .signingKey()
        await expectError(.invalidParameter, containing: "4096") {
            try await raw.signature(for: [UInt8](repeating: 7, count: 4097), digestAlgorithm: .sha256, scheme: .ecdsa)
        }
        await expectError(.invalidParameter, containing: "messageType=raw") {
            try await raw.signature(
                forDigest: [UInt8](repeating: 7, count: 32),
                digestAlgorithm: .sha256,
                scheme: .ecdsa
            )
        }
    }

    @Test(
        "RSA-PSS: the check accepts OpenSSL's PSS with salt = hash length (what AWS makes) and refuses moto's maximum salt"
    )
    func pss() async throws {
        let moto = try MotoKMS()
        let key = try await provider(
            moto,
            keyID: moto.keys["rsa"]!,
            [AWSKMSProvider.ParameterKey.scheme: .string("rsa-pss")]
        )
        .signingKey()
        #expect(key.defaultScheme == .rsaPSS)
        // A local RSA key signs with PSS, salt = digest length, through openssl; the same check the
        // provider makes on KMS's answers accepts it, and refuses the maximum salt length.
        let work = try TemporaryDirectory()
        let privateKey = work.path("rsa.key")
        try #require(
            try ExternalTool.run(
                "openssl",
                ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", privateKey]
            )
            .succeeded
        )
        let publicKey = try ExternalTool.run("openssl", ["pkey", "-in", privateKey, "-pubout", "-outform", "DER"])
        let local = try AWSKMSKeyDescription(
            keyID: "local",
            keyUsage: "SIGN_VERIFY",
            keySpec: "RSA_2048",
            signingAlgorithms: [],
            subjectPublicKeyInfo: Array(publicKey.standardOutput)
        )
        let digest = DigestAlgorithm.sha256.hash(Array("signed attributes".utf8))
        for (salt, valid) in [("digest", true), ("max", false)] {
            let signed = try ExternalTool.run(
                "openssl",
                [
                    "pkeyutl", "-sign", "-inkey", privateKey, "-in", try work.write("digest.bin", digest), "-pkeyopt",
                    "digest:sha256", "-pkeyopt", "rsa_padding_mode:pss", "-pkeyopt", "rsa_pss_saltlen:\(salt)",
                ]
            )
            try #require(signed.succeeded, "\(signed.errorOutput)")
            let signature = Array(signed.standardOutput)
            #expect(
                local.isValidSignature(signature, forDigest: digest, digestAlgorithm: .sha256, scheme: .rsaPSS) == valid
            )
        }
        // moto signs PSS with the maximum salt length: the answer does not pass the check, nothing is returned.
        await expectError(.invalidServerSignature, containing: "does not verify") {
            try await key.signature(for: Array("x".utf8), digestAlgorithm: .sha256, scheme: .rsaPSS)
        }
    }

    @Test("without a region, access key or secret (parameters nor environment): .invalidParameter naming the fix")
    func missingCredentials() async throws {
        for (environment, expected) in [
            ([String: String](), "AWS_REGION"),
            (["AWS_REGION": "eu-west-1"], "AWS_ACCESS_KEY_ID"),
            (["AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIA"], "AWS_SECRET_ACCESS_KEY"),
        ] {
            let provider = try AWSKMSProvider(
                parameters: [AWSKMSProvider.ParameterKey.keyID: .string("alias/x")],
                environment: environment
            )
            await expectError(.invalidParameter, containing: expected) { try await provider.signingKey() }
        }
        let provider = try AWSKMSProvider(
            parameters: [AWSKMSProvider.ParameterKey.keyID: .string("alias/x")],
            environment: ["AWS_REGION": "eu-west-1"]
        )
        await expectError(.invalidParameter, containing: "certificate") {
            try await provider.initialize(options: ProviderParameters())
        }
        // Clear-text HTTP only to loopback, unless allowInsecureHTTP says otherwise.
        let remote = try AWSKMSProvider(
            parameters: [
                AWSKMSProvider.ParameterKey.keyID: .string("alias/x"),
                AWSKMSProvider.ParameterKey.endpointURL: .string("http://kms.example.net/"),
            ],
            environment: ["AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s"]
        )
        await expectError(.invalidParameter, containing: "http://") { try await remote.signingKey() }
    }
}

extension Certificate {
    /// The DER of a PEM `PUBLIC KEY`, decoded by openssl.
    static func publicKeyDER(pem: String) throws -> [UInt8] {
        let work = try TemporaryDirectory()
        let result = try ExternalTool.run(
            "openssl",
            ["pkey", "-pubin", "-in", try work.write("key.pem", text: pem), "-outform", "DER"]
        )
        try #require(result.succeeded)
        return Array(result.standardOutput)
    }
}
