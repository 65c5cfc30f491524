import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

/// The CryptoPro DSS provider with the emulator's GOST certificates: the digest that fits the key
/// (``DigestAlgorithm/preferred(for:)``) is what hash mode sends, and what the server signs.
@Suite(.enabled(if: GOSTEngine.isAvailable && ExternalTool.isAvailable("openssl"), "needs libengine-gost-openssl"))
struct CryptoProGOSTTests {
    static let document = Array("Договор поставки ГОСТ № 13".utf8)

    func parameters(_ url: URL, certificateID: Int) -> ProviderParameters {
        ProviderParameters([
            CryptoProDSSProvider.ParameterKey.url: .url(url),
            CryptoProDSSProvider.ParameterKey.username: .string(StandardSeed.username),
            CryptoProDSSProvider.ParameterKey.password: .secret(Secret(StandardSeed.password)),
            CryptoProDSSProvider.ParameterKey.pin: .secret(Secret(StandardSeed.certificatePIN)),
            CryptoProDSSProvider.ParameterKey.certificateID: .integer(certificateID),
        ])
    }

    /// `openssl cms -engine gost -verify -cades` against the emulator's CA.
    func opensslVerifiesGOST(_ cms: [UInt8], emulator: DSSEmulator, content: [UInt8]) throws -> ExternalTool.Result {
        let directory = try TemporaryDirectory()
        return try ExternalTool.run(
            "openssl",
            [
                "cms", "-engine", "gost", "-verify", "-binary", "-cades", "-inform", "DER",
                "-in", try directory.write("s.der", cms), "-content", try directory.write("d.bin", content),
                "-CAfile", try directory.write("ca.pem", text: emulator.certificateAuthorityPEM),
                "-purpose", "any", "-out", "/dev/null",
            ]
        )
    }

    @Test(arguments: [
        (StandardSeed.gostCertificateID, DigestAlgorithm.streebog256),
        (StandardSeed.gost512CertificateID, .streebog512),
    ])
    func hashModeSendsTheStreebogDigest(certificateID: Int, digest: DigestAlgorithm) async throws {
        try await withEmulator(.init(faultsEnabled: true, requestLogKeepsSecrets: true)) { emulator, url in
            let provider = try CryptoProDSSProvider(parameters: parameters(url, certificateID: certificateID))
            let identity = try await provider.initialize(options: [:])
            #expect(identity.certificate.publicKeyAlgorithm.isGOST)
            #expect(try DigestAlgorithm.preferred(for: identity.certificate.publicKeyAlgorithm) == digest)

            let hashed = try await provider.signDocument(
                DocumentSigningRequest(payload: .digest(digest.hash(Self.document), digest))
            )
            let hashedCheck = try opensslVerifiesGOST(hashed, emulator: emulator, content: Self.document)
            #expect(hashedCheck.succeeded, "\(hashedCheck.errorOutput)")
            let content = try await provider.signDocument(
                DocumentSigningRequest(payload: .content(Self.document), digestAlgorithm: digest)
            )
            let contentCheck = try opensslVerifiesGOST(content, emulator: emulator, content: Self.document)
            #expect(contentCheck.succeeded, "\(contentCheck.errorOutput)")

            let bodies = requests(emulator, endingWith: "/documents").compactMap(\.json)
            #expect(bodies.map { $0["Signature"]?["Parameters"]?["Hash"] } == ["True", "False"])
            #expect(bodies.first?["Content"]?.stringValue == Data(digest.hash(Self.document)).base64EncodedString())

            // A SHA digest does not fit a GOST key, on either payload.
            await expectError(.unsupportedAlgorithm) {
                try await provider.signDocument(
                    DocumentSigningRequest(payload: .digest(DigestAlgorithm.sha256.hash(Self.document), .sha256))
                )
            }
            await expectError(.unsupportedAlgorithm) {
                try await provider.signDocument(
                    DocumentSigningRequest(payload: .content(Self.document), digestAlgorithm: .sha256)
                )
            }
            #expect(requests(emulator, endingWith: "/documents").count == 2, "refused requests never reach the server")
        }
    }

    @Test func theEmulatorRefusesAHashThatDoesNotFitTheGOSTKey() async throws {
        try await withEmulator(.faults) { _, url in
            let client = try await loggedInClient(url)
            await expectError(.serverRejected) {
                try await client.sign(
                    document: DigestAlgorithm.sha384.hash(Self.document),
                    certificateID: StandardSeed.gostCertificateID,
                    pin: Secret(StandardSeed.certificatePIN),
                    parameters: CryptoProSignatureParameters(isDetached: true, isHash: true)
                )
            }
        }
    }
}
