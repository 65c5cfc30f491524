import CertificateProviders
import CertificateProvidersTesting
import Foundation
import HTTPClient
import PDFSigning
import Signing
import TestSupport
import Testing

/// PAdES B-LT and B-LTA (a /DSS revision, document timestamps, renewal) against certomancer (the
/// TSA, OCSP responder and CRL source), judged offline by pyHanko from the document's DSS alone.
@Suite(.serialized) struct PAdESLongTermTests {
    /// certomancer's signer `label` with its key from the fixtures and the intermediate as chain.
    static func identity(_ pki: CertomancerPKI, _ label: String) throws -> SigningIdentity {
        let keyPath = PackageRoot.url.appendingPathComponent("Tests/Fixtures/certomancer/keys/\(label).key.pem")
        return SigningIdentity(
            certificate: try pki.certificate(label),
            chain: [try pki.certificate("interm")],
            key: try LocalSigningKey(pemEncoded: try String(contentsOf: keyPath, encoding: .utf8))
        )
    }

    static func authority(_ pki: CertomancerPKI) throws -> TimestampAuthorityClient {
        // certomancer's tokens carry only the TSA's certificate: its CA is given beside the root.
        TimestampAuthorityClient(
            configuration: .init(
                url: pki.timestampURL,
                trustAnchors: [try pki.certificate("root"), try pki.certificate("interm")]
            ),
            fetcher: loopbackFetcher
        )
    }

    static func upgrade(
        _ pki: CertomancerPKI,
        _ level: SignatureLevel,
        cache: RevocationDataCache = RevocationDataCache(fetcher: loopbackFetcher),
        vri: Bool = false
    ) throws -> PAdESLevelUpgrade {
        try PAdESLevelUpgrade(
            level: level,
            authority: try authority(pki),
            collector: ValidationDataCollector(cache: cache, trustAnchors: [try pki.certificate("root")]),
            addsVRI: vri
        )
    }

    /// A PAdES B-T PDF signed by `label` (signature timestamp from certomancer).
    static func signedBT(
        _ pki: CertomancerPKI,
        _ label: String,
        in directory: TemporaryDirectory
    ) async throws -> URL {
        let input = URL(fileURLWithPath: try directory.write("\(label).pdf", TestPDF.minimal()))
        let output = directory.url.appendingPathComponent("\(label)-bt.pdf")
        try await PDFSigner.sign(
            pdfAt: input,
            writingTo: output,
            identity: try identity(pki, label),
            options: PDFSignatureOptions(timestampAuthority: try authority(pki))
        )
        return output
    }

    /// Our offline verification (no fetcher: nothing but the file and the root), now or `at`.
    static func verify(_ url: URL, _ pki: CertomancerPKI, at time: Date? = nil) throws -> PDFVerificationReport {
        var policy = ValidationPolicy(validationTime: time)
        policy.timestampTrustAnchors = [try pki.certificate("root"), try pki.certificate("interm")]
        return try PDFSignatureVerifier.verify(pdfAt: url, trustAnchors: [try pki.certificate("root")], policy: policy)
    }

    @Test func bLTWritesADSSThatPyHankoValidatesOfflineAndOursWithTheResponderGone() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let pdf = try await Self.signedBT(pki, "signer-rsa", in: directory)
        let before = try Self.verify(pdf, pki)
        #expect(before.signatures.first?.level == .bT)
        let result = try await Self.upgrade(pki, .bLT, vri: true).upgrade(pdfAt: pdf, writingTo: pdf)
        // signer-rsa, interm, root, tsa; OCSP for the signer and the TSA; the root's CRL of interm.
        #expect(result.addedCertificates == 4 && result.addedOCSPResponses == 2 && result.addedCRLs == 1)
        #expect(result.addedTimestamps.isEmpty)
        let root = try pki.certificate("root")
        let judged = try PyHankoValidator.longTerm(pdf.path, root: root, in: directory)
        #expect(judged.contains("dss 4 2 1 1"), "\(judged)")
        #expect(
            judged.contains { $0.hasPrefix("signature Signature1: INTACT:TRUSTED") && $0.hasSuffix("True") },
            "\(judged)"
        )
        // The VRI key is the SHA-1 of the signature's /Contents, as the oracle computes it.
        #expect(judged.contains("vri-match Signature1 True"), "\(judged)")
        pki.stop()
        let after = try Self.verify(pdf, pki)
        let signature = try #require(after.signatures.first)
        #expect(after.isValid, "\(String(describing: signature.verification.failure))")
        #expect(signature.level == .bLT)
        #expect(signature.laterChanges == .ltv)
        let revocation = try #require(signature.verification.signers.first?.revocation)
        #expect(revocation.state == .good, "\(revocation)")
        #expect(revocation.source.contains("embedded"), "\(revocation.source)")
    }

    @Test func bLTAAndRenewalAddDocumentTimestampsPyHankoAccepts() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let pdf = try await Self.signedBT(pki, "signer-ec", in: directory)
        let lta = try await Self.upgrade(pki, .bLTA).upgrade(pdfAt: pdf, writingTo: pdf)
        #expect(lta.addedTimestamps.count == 1)
        #expect(try Self.verify(pdf, pki).signatures.first?.level == .bLTA)
        // Renewal, in a later run: a further DSS revision (fresh answers) and document timestamp.
        let renewed = try await Self.upgrade(pki, .bLTA).upgrade(pdfAt: pdf, writingTo: pdf)
        #expect(renewed.addedTimestamps.count == 1)
        #expect(renewed.addedOCSPResponses > 0)
        let root = try pki.certificate("root")
        let judged = try PyHankoValidator.longTerm(pdf.path, root: root, lta: true, in: directory)
        #expect(
            judged.contains { $0.hasPrefix("signature Signature1: INTACT:TRUSTED") && $0.hasSuffix("True") },
            "\(judged)"
        )
        #expect(judged.filter { $0.hasPrefix("timestamp ") && $0.hasSuffix("True") }.count == 2, "\(judged)")
        #expect(judged.contains { $0.hasPrefix("lta Signature1: AdESPassed.OK 20") }, "\(judged)")
        #expect(judged.first == "dss 4 4 1 0", "\(judged)")
        pki.stop()
        let report = try Self.verify(pdf, pki)
        #expect(report.isValid, "\(report.signatures.map { String(describing: $0.verification.failure) })")
        #expect(report.signatures.filter { $0.kind == .documentTimestamp }.count == 2)
    }
}

extension PAdESLongTermTests {
    @Test func aPyHankoSignedBTPDFExtendedByUsPassesPyHankosLTAValidation() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let input = try directory.write("foreign.pdf", TestPDF.minimal())
        let pdf = directory.path("foreign-bt.pdf")
        try PyHankoSigner.signBT(
            input,
            output: pdf,
            key: PackageRoot.url.appendingPathComponent("Tests/Fixtures/certomancer/keys/signer-rsa.key.pem").path,
            certificate: pki.certificatePath("signer-rsa"),
            chain: [pki.certificatePath("interm")],
            tsaURL: pki.timestampURL,
            field: "PyHankoSig"
        )
        let url = URL(fileURLWithPath: pdf)
        #expect(try Self.verify(url, pki).signatures.first?.level == .bT)
        _ = try await Self.upgrade(pki, .bLTA, vri: true).upgrade(pdfAt: url, writingTo: url)
        let judged = try PyHankoValidator.longTerm(pdf, root: try pki.certificate("root"), lta: true, in: directory)
        #expect(
            judged.contains { $0.hasPrefix("signature PyHankoSig: INTACT:TRUSTED") && $0.hasSuffix("True") },
            "\(judged)"
        )
        #expect(judged.contains { $0.hasPrefix("lta PyHankoSig: AdESPassed.OK 20") }, "\(judged)")
        // The VRI entry's key is the one pyHanko computes from the signature's /Contents.
        #expect(judged.contains("vri-match PyHankoSig True"), "\(judged)")
        pki.stop()
        let report = try Self.verify(url, pki)
        #expect(report.isValid && report.signatures.first?.level == .bLTA)
    }

    @Test func aCertificateWithoutAnswerWritesNothingAndNamesIt() async throws {
        let pki = try CertomancerPKI()
        let directory = try TemporaryDirectory()
        let pdf = try await Self.signedBT(pki, "signer-rsa", in: directory)
        let original = try Data(contentsOf: pdf)
        let upgrade = try Self.upgrade(pki, .bLTA)
        pki.stop()
        let error = await expectError(.revocationUnavailable) {
            _ = try await upgrade.upgrade(pdfAt: pdf, writingTo: pdf)
        }
        #expect(error?.reason.contains("LT Signer RSA") == true, "\(String(describing: error?.reason))")
        #expect(try Data(contentsOf: pdf) == original)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!leftovers.contains { $0.hasSuffix(".partial") }, "\(leftovers)")
    }

    @Test func oneRunAsksEachDistinctCertificateOnceAndADSSItemIsWrittenOnce() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let first = try await Self.signedBT(pki, "signer-rsa", in: directory)
        let input = URL(fileURLWithPath: try directory.write("second.pdf", TestPDF.minimal(pages: 1)))
        let second = directory.url.appendingPathComponent("second-bt.pdf")
        try await PDFSigner.sign(
            pdfAt: input,
            writingTo: second,
            identity: try Self.identity(pki, "signer-rsa"),
            options: PDFSignatureOptions(timestampAuthority: try Self.authority(pki))
        )
        let ocspBefore = pki.requests(containing: "/ocsp/").count
        let upgrade = try Self.upgrade(pki, .bLT)
        _ = try await upgrade.upgrade(pdfAt: first, writingTo: first)
        _ = try await upgrade.upgrade(pdfAt: second, writingTo: second)
        // signer-rsa and the TSA by OCSP, once each for both files; the root's CRL once.
        #expect(pki.requests(containing: "/ocsp/").count - ocspBefore == 2)
        #expect(await upgrade.collector.cache.requestCount == 3)
        // The same run again: the DSS holds every answer already, so no revision is added.
        let size = try FileManager.default.attributesOfItem(atPath: second.path)[.size] as? Int
        let again = try await upgrade.upgrade(pdfAt: second, writingTo: second)
        #expect(again.addedCertificates + again.addedOCSPResponses + again.addedCRLs == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: second.path)[.size] as? Int == size)
        let judged = try PyHankoValidator.longTerm(second.path, root: try pki.certificate("root"), in: directory)
        #expect(judged.first == "dss 4 2 1 0", "\(judged)")
    }

    @Test func aBBPDFGetsADocumentTimestampFirstThenItsDSS() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let input = URL(fileURLWithPath: try directory.write("plain.pdf", TestPDF.minimal()))
        let pdf = directory.url.appendingPathComponent("plain-bb.pdf")
        try await PDFSigner.sign(pdfAt: input, writingTo: pdf, identity: try Self.identity(pki, "signer-ec"))
        #expect(try Self.verify(pdf, pki).signatures.first?.level == .bB)
        let result = try await Self.upgrade(pki, .bLT).upgrade(pdfAt: pdf, writingTo: pdf)
        #expect(result.addedTimestamps.count == 1)
        let judged = try PyHankoValidator.longTerm(pdf.path, root: try pki.certificate("root"), in: directory)
        #expect(judged.contains { $0.hasPrefix("signature Signature1: INTACT:TRUSTED") && $0.hasSuffix("True") })
        #expect(judged.contains { $0.hasPrefix("timestamp Signature2: INTACT:TRUSTED") && $0.hasSuffix("True") })
        pki.stop()
        let report = try Self.verify(pdf, pki)
        #expect(report.isValid && report.signatures.first?.level == .bLT)
    }
}
