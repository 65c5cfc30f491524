import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import RemoteSigning
import Signing
import TestSupport
import Testing

/// Past signature validation (ETSI EN 319 102-1 §5.6.2.4) of PAdES B-LTA: certomancer's signers
/// expire in 2070 and its `tsa` in 2080; archive timestamps come from `tsa-archive` (2089). At
/// 2085 the B-LTA signature is VALID through its document timestamp chain; the same signature at
/// B-T is not.
@Suite(.serialized) struct PAdESPastValidationTests {
    static let after = ISO8601DateFormatter().date(from: "2085-06-01T00:00:00Z")!

    @Test func aBLTASignatureVerifiesAfterItsCertificatesExpiredAndAtBTItDoesNot() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let bt = try await PAdESLongTermTests.signedBT(pki, "signer-rsa", in: directory)
        let lta = directory.url.appendingPathComponent("lta.pdf")
        let archive = TimestampAuthorityClient(
            configuration: .init(
                url: pki.archiveTimestampURL,
                trustAnchors: [try pki.certificate("root"), try pki.certificate("interm")]
            ),
            fetcher: loopbackFetcher
        )
        let upgrade = try PAdESLevelUpgrade(
            level: .bLTA,
            authority: archive,
            collector: ValidationDataCollector(
                cache: RevocationDataCache(fetcher: loopbackFetcher),
                trustAnchors: [try pki.certificate("root")]
            )
        )
        let started = Date()
        _ = try await upgrade.upgrade(pdfAt: bt, writingTo: lta)
        // Renewal: the first archive timestamp must then have been valid when the second was applied.
        _ = try await upgrade.upgrade(pdfAt: lta, writingTo: lta)
        pki.stop()

        let now = try PAdESLongTermTests.verify(lta, pki, at: Date())
        #expect(now.isValid && now.signatures.first?.pastValidationTime == nil)
        let later = try PAdESLongTermTests.verify(lta, pki, at: Self.after)
        let signature = try #require(later.signatures.first)
        #expect(later.isValid, "\(later.signatures.map { String(describing: $0.verification.failure) })")
        #expect(signature.level == .bLTA)
        let proven = try #require(signature.pastValidationTime)
        #expect(proven >= started.addingTimeInterval(-300) && proven <= Date().addingTimeInterval(300))
        #expect(later.signatures.filter { $0.kind == .documentTimestamp && $0.isValid }.count == 2)

        // The B-T file it was made from: at 2085 its TSA and its signer have expired.
        let alone = try PAdESLongTermTests.verify(bt, pki, at: Self.after)
        #expect(!alone.isValid)
        #expect(alone.signatures.first?.pastValidationTime == nil)
        #expect(alone.signatures.first?.level == .bT)
    }
}
