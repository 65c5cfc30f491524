import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

/// `verify FILE.pdf --check-revocation`: a PAdES signature's whole path asked online, as for a
/// CMS signature (the same Python OCSP responder as ``OCSPPathFixture``).
@Suite struct PDFRevocationTests {
    /// A PDF signed by the signer of `mode`, and its report verified online (`checkRevocation`).
    func verifyOnline(
        _ fixture: OCSPPathFixture,
        mode: String
    ) async throws -> (pdf: URL, policy: ValidationPolicy, report: PDFVerificationReport) {
        let identity = try #require(fixture.signers[mode])
        let input = URL(fileURLWithPath: try fixture.directory.write("\(mode).pdf", TestPDF.minimal()))
        let pdf = URL(fileURLWithPath: fixture.directory.path("\(mode)-signed.pdf"))
        try await PDFSigner.sign(pdfAt: input, writingTo: pdf, identity: identity)
        var policy = ValidationPolicy()
        policy.checkRevocation = true
        let report = try await PDFSignatureVerifier.verify(
            pdfAt: pdf,
            trustAnchors: [fixture.pki.root.certificate],
            policy: policy,
            fetcher: loopbackFetcher
        )
        return (pdf, policy, report)
    }

    @Test("a PDF signer and its CA answered good online: VALID, each certificate listed; offline it cannot be")
    func goodOnline() async throws {
        let fixture = try OCSPPathFixture()
        let (pdf, policy, report) = try await verifyOnline(fixture, mode: "good")
        let signature = try #require(report.signatures.first)
        #expect(report.isValid, "\(String(describing: signature.verification.failure))")
        let entries = signature.verification.signers.first?.revocation?.certificates ?? []
        #expect(entries.map(\.role) == [.signer, .signerCA])
        #expect(entries.map(\.status.state) == [.good, .good])
        #expect(entries.allSatisfy { $0.status.source.contains(fixture.responder.url("good")) })

        // Without a fetcher the same policy cannot be met: revocation unknown, never VALID.
        let offline = try PDFSignatureVerifier.verify(
            pdfAt: pdf,
            trustAnchors: [fixture.pki.root.certificate],
            policy: policy
        )
        #expect(!offline.isValid)
        #expect(offline.signatures.first?.verification.failure?.code == .revocationUnknown)
    }

    @Test("a PDF signed under an intermediate its root's responder calls revoked: INVALID naming it")
    func revokedIntermediate() async throws {
        let fixture = try OCSPPathFixture()
        let report = try await verifyOnline(fixture, mode: "under-revoked-ca").report
        let failure = try #require(report.signatures.first?.verification.failure)
        #expect(failure.code == .signerRevoked, "\(failure)")
        #expect(failure.reason.contains("CN=OCSP Revoked CA"), "\(failure.reason)")
        #expect(!report.isValid)
    }
}
