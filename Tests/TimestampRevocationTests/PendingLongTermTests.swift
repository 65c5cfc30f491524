import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import SignatureJournal
import Signing
import TestSupport
import Testing

/// Two-phase signing through the coordinator: `prepare` reads the document, `openssl pkeyutl` signs
/// the digest outside the package, and `complete` (in a fresh coordinator, from the pending
/// signature's JSON alone) adds B-LT against the in-process services, writes the file and records it;
/// a wrong value writes and records nothing.
@Suite(.enabled(if: ExternalTool.isAvailable("openssl"), "needs the openssl command"))
struct PendingLongTermTests {
    @Test func preparedHereSignedOutsideCompletedAtBLTElsewhere() async throws {
        let services = try LongTermTestServices()
        defer { services.stop() }
        let signer = try services.issueSigner(subject: "CN=Подписант на телефоне,O=swift-certificate-providers")
        let key = try #require(signer.key as? LocalSigningKey)
        let directory = try TemporaryDirectory(prefix: "pending-blt")
        let documentPath = try directory.write("заявление.txt", text: "Прошу предоставить отпуск\n")
        let document = Document.file(URL(fileURLWithPath: documentPath))

        let preparing = try SigningCoordinator.makeForTesting(providers: [])
        let json = try await preparing.prepare(document: document, certificate: signer.certificate, chain: signer.chain)
            .jsonData()
        #expect(try await preparing.journal.count() == 0)

        // The phone: signs the printed digest with its key.
        let pending = try PendingSignature(jsonData: json)
        let keyPath = try directory.write("key.pem", text: try key.pemRepresentation(password: nil))
        let digestPath = try directory.write("digest.bin", pending.digestToSign)
        let signed = try ExternalTool.run(
            "openssl",
            ["pkeyutl", "-sign", "-inkey", keyPath, "-in", digestPath, "-out", directory.path("value.bin")]
        )
        try #require(signed.succeeded, "\(signed.errorOutput)")
        let value = try directory.read("value.bin")

        let completing = try SigningCoordinator.makeForTesting(providers: [])
        let options = try LongTermTestServicesTests.longTermOptions(services)
        let output = URL(fileURLWithPath: directory.path("заявление.txt.p7s"))

        // A value over other bytes: nothing written, nothing recorded.
        var other = value
        other[other.count / 2] ^= 0xFF
        let refused = try await #require(throws: CertificateProviderError.self) {
            try await completing.complete(pending, signatureValue: other, options: options, output: output)
        }
        #expect(refused.code == .signatureValueInvalid, "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(try await completing.journal.count() == 0)

        let result = try await completing.complete(pending, signatureValue: value, options: options, output: output)
        #expect(result.addedTimestamps.count == 1)
        #expect(try await completing.journal.count() == 1)
        #expect(result.record.providerID == SigningCoordinator.externalSignerID)
        #expect(result.record.documentName == "заявление.txt")
        #expect(try Data(contentsOf: output) == Data(result.signature))

        try LongTermTestServicesTests.expectValidOffline(
            result.signature,
            content: try directory.read("заявление.txt"),
            services
        )
    }
}
