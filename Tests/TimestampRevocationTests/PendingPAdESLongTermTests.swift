import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import SignatureJournal
import Signing
import TestSupport
import Testing

/// Two-phase PAdES through the coordinator: prepared in one coordinator, signed by `openssl
/// pkeyutl` with certomancer's key, completed in another at B-LTA (signature timestamp in the
/// reserved room, a /DSS revision, a document timestamp) and recorded; pyHanko's LTA validation
/// and ours accept the result offline. A wrong value writes and records nothing.
@Suite(.serialized, .enabled(if: ExternalTool.isAvailable("openssl"), "needs the openssl command"))
struct PendingPAdESLongTermTests {
    @Test func preparedHereSignedOutsideCompletedAtBLTAElsewhere() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory(prefix: "pending-pades-lta")
        let original = TestPDF.minimal()
        let input = URL(fileURLWithPath: try directory.write("договор.pdf", original))
        let identity = try PAdESLongTermTests.identity(pki, "signer-rsa")
        let authority = try PAdESLongTermTests.authority(pki)

        let preparing = try SigningCoordinator.makeForTesting(providers: [])
        let json = try preparing.preparePDF(
            at: input,
            certificate: identity.certificate,
            chain: identity.chain,
            options: PDFSignatureOptions(location: "Москва", timestampAuthority: authority)
        )
        .jsonData()
        let pending = try PendingSignature(jsonData: json)
        let key = try #require(identity.key as? LocalSigningKey)
        let value = try OpenSSLExternalSigner.all[0].sign(pending.digestToSign, key: key, in: directory)

        let completing = try SigningCoordinator.makeForTesting(providers: [])
        let output = directory.url.appendingPathComponent("договор-signed.pdf")
        let options = PDFCompletionOptions(
            timestampAuthority: authority,
            longTerm: try PAdESLongTermTests.upgrade(pki, .bLTA)
        )
        var other = value
        other[other.count / 2] ^= 0xFF
        let refused = try await #require(throws: CertificateProviderError.self) {
            try await completing.completePDF(pending, signatureValue: other, pdfAt: input, writingTo: output)
        }
        #expect(refused.code == .signatureValueInvalid, "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(try await completing.journal.count() == 0)

        let completed = try await completing.completePDF(
            pending,
            signatureValue: value,
            pdfAt: input,
            writingTo: output,
            options: options
        )
        #expect(completed.signing.timestamp != nil)
        #expect(completed.record.format == .padesLTA)
        #expect(completed.record.providerID == SigningCoordinator.externalSignerID)
        #expect(completed.record.documentName == "договор.pdf")
        #expect(completed.record.documentDigest == DigestAlgorithm.sha256.hash(Array(original)))
        #expect(try await completing.journal.count() == 1)
        #expect(try Data(contentsOf: input) == Data(original))

        let judged = try PyHankoValidator.longTerm(
            output.path,
            root: try pki.certificate("root"),
            lta: true,
            in: directory
        )
        #expect(
            judged.contains { $0.hasPrefix("signature Signature1: INTACT:TRUSTED") && $0.hasSuffix("True") },
            "\(judged)"
        )
        #expect(judged.contains { $0.hasPrefix("lta Signature1: AdESPassed.OK 20") }, "\(judged)")
        pki.stop()
        let report = try PAdESLongTermTests.verify(output, pki)
        #expect(report.isValid, "\(report.signatures.map { String(describing: $0.verification.failure) })")
        #expect(report.signatures.first?.level == .bLTA)
    }
}
