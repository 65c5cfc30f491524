import CertificateProviders
import CertificateProvidersTesting
import Foundation
import HTTPClient
import PDFSigning
import Signing
import TestSupport
import Testing

/// Past signature validation (ETSI EN 319 102-1 §5.6.2.4) of PAdES and CAdES B-LTA: certomancer's
/// signers expire in 2070 and its `tsa` in 2080; archive timestamps come from `tsa-archive` (2089).
/// At 2085 the B-LTA signature is VALID through its archive (document) timestamp chain; the same
/// signature at B-T is not.
@Suite(.serialized) struct PastSignatureValidationTests {
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
        let later = try PAdESLongTermTests.verify(lta, pki, at: PastValidationTime.after)
        let signature = try #require(later.signatures.first)
        #expect(later.isValid, "\(later.signatures.map { String(describing: $0.verification.failure) })")
        #expect(signature.level == .bLTA)
        let proven = try #require(signature.pastValidationTime)
        #expect(proven >= started.addingTimeInterval(-300) && proven <= Date().addingTimeInterval(300))
        #expect(later.signatures.filter { $0.kind == .documentTimestamp && $0.isValid }.count == 2)

        // The B-T file it was made from: at 2085 its TSA and its signer have expired.
        let alone = try PAdESLongTermTests.verify(bt, pki, at: PastValidationTime.after)
        #expect(!alone.isValid)
        #expect(alone.signatures.first?.pastValidationTime == nil)
        #expect(alone.signatures.first?.level == .bT)
    }

    @Test func aCAdESLTASignatureVerifiesAfterItsCertificatesExpiredAndAtBTItDoesNot() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let (signature, document) = try LongTermCAdESTests.opensslSignature(pki, signer: "signer-rsa", in: directory)
        let root = try pki.certificate("root")
        let anchors = [root, try pki.certificate("interm")]
        let tsa = TimestampAuthorityClient(
            configuration: .init(url: pki.timestampURL, trustAnchors: anchors),
            fetcher: loopbackFetcher
        )
        let archive = TimestampAuthorityClient(
            configuration: .init(url: pki.archiveTimestampURL, trustAnchors: anchors),
            fetcher: loopbackFetcher
        )
        let bt = try await TimestampLevelUpgrade(authority: tsa).upgrade(signature).signature
        let upgrade = try LongTermLevelUpgrade(
            level: .bLTA,
            authority: archive,
            collector: ValidationDataCollector(
                cache: RevocationDataCache(fetcher: loopbackFetcher),
                trustAnchors: [root]
            )
        )
        let started = Date()
        // B-LTA, then renewed: the first archive timestamp must have been valid when the second was applied.
        let lta = try await upgrade.upgrade(try await upgrade.upgrade(bt).signature).signature
        pki.stop()
        let content = try Array(Data(contentsOf: URL(fileURLWithPath: document)))
        let policy = ValidationPolicy(validationTime: PastValidationTime.after, timestampTrustAnchors: anchors)
        let later = CMSVerifier.verify(signature: lta, content: content, trustAnchors: [root], policy: policy)
        #expect(later.isValid, "\(String(describing: later.failure))")
        #expect(later.format == .cadesLTA)
        let proven = try #require(later.pastValidationTime)
        #expect(proven >= started.addingTimeInterval(-300) && proven <= Date().addingTimeInterval(300))
        let now = CMSVerifier.verify(
            signature: lta,
            content: content,
            trustAnchors: [root],
            policy: ValidationPolicy(timestampTrustAnchors: anchors)
        )
        #expect(now.isValid && now.pastValidationTime == nil, "\(String(describing: now.failure))")
        // The B-T signature it was made from: at 2085 its TSA and its signer have expired.
        let alone = CMSVerifier.verify(signature: bt, content: content, trustAnchors: [root], policy: policy)
        #expect(!alone.isValid && alone.pastValidationTime == nil)
        // It says which certificate expired and when, not "does not chain … or is not a time-stamping certificate",
        // with a code of its own: the token verifies at its own time.
        #expect(alone.failure?.code == .timestampExpired, "\(String(describing: alone.failure))")
        let reason = alone.failure?.reason ?? ""
        let tsaCertificate = try pki.certificate("tsa")
        #expect(reason.contains("the TSA's certificate '\(tsaCertificate.subject)' expired on "), "\(reason)")
        #expect(reason.contains(tsaCertificate.notValidAfter.formatted(Date.ISO8601FormatStyle())), "\(reason)")
        #expect(!reason.contains("does not chain"), "\(reason)")
    }
}

/// The date after every certificate of the B-T path expired (signers 2070, `tsa` 2080) and before
/// `tsa-archive` (2089) and the intermediate (2090) do.
enum PastValidationTime {
    static let after = ISO8601DateFormatter().date(from: "2085-06-01T00:00:00Z")!
}
