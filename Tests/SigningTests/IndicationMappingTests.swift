import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import Testing

@testable import Validation

/// The context-dependent rows of the ETSI EN 319 102-1 mapping (the article "Indications"): the
/// same failure code gives another sub-indication depending on whose certificate it is and on what
/// a valid signature timestamp proves. The matrix against pyHanko (IndicationMatrixTests) covers
/// the rows both judges reach from real files; these are the rows it cannot build.
@Suite struct IndicationMappingTests {
    static let year: TimeInterval = 365 * 86_400
    let pki: TestPKI
    let signer: Certificate
    let intermediate: Certificate

    init() throws {
        pki = try TestPKI(rootSubject: "CN=Indication Root")
        let now = Date()
        signer = try pki.issueLeaf(
            subject: "CN=Indication Signer",
            validity: now.addingTimeInterval(-2 * Self.year)...now.addingTimeInterval(-Self.year)
        ).certificate
        intermediate = try pki.issueLeaf(subject: "CN=Indication CA").certificate
    }

    func signer(
        _ failure: VerificationFailure?,
        checkedAt: Date? = Date(),
        timestamp: VerifiedTimestamp? = nil,
        revocation: RevocationStatus? = nil,
        chainChecked: Bool = true
    ) -> SignerVerification {
        SignerVerification(
            failure: failure,
            signerCertificate: signer,
            signingTime: nil,
            digestAlgorithm: .sha256,
            digestAlgorithmName: "sha256",
            signatureAlgorithmName: "ecdsa-with-SHA256",
            format: .cadesBES,
            chainChecked: chainChecked,
            chain: [signer],
            checkedAt: checkedAt,
            timestamp: timestamp,
            revocation: revocation
        )
    }

    func revoked(_ role: CertificateRevocationStatus.Role, at time: Date) -> RevocationStatus {
        let status = RevocationStatus(state: .revoked, revocationTime: time, source: "CRL file")
        return RevocationStatus(
            state: .revoked,
            revocationTime: time,
            source: "CRL file",
            certificates: [
                CertificateRevocationStatus(
                    certificate: role == .signer ? signer : intermediate,
                    role: role,
                    status: status
                )
            ]
        )
    }

    @Test("a chain left unchecked is INDETERMINATE/NO_CERTIFICATE_CHAIN_FOUND, never PASSED")
    func uncheckedChain() {
        let verdict = signer(nil, chainChecked: false)
        #expect(verdict.indication == .indeterminate && verdict.subIndication == .noCertificateChainFound)
        #expect(signer(nil).indication == .passed && signer(nil).subIndication == nil)
    }

    @Test(
        "signerRevoked: no POE REVOKED_NO_POE; a valid timestamp after the revocation FAILED/REVOKED; a CA REVOKED_CA_NO_POE"
    )
    func revocation() {
        let failure = VerificationFailure(.signerRevoked, "revoked")
        let revokedAt = Date().addingTimeInterval(-Self.year * 1.5)
        let noPOE = signer(failure, revocation: revoked(.signer, at: revokedAt))
        #expect(noPOE.indication == .indeterminate && noPOE.subIndication == .revokedNoPOE)
        let later = VerifiedTimestamp(time: revokedAt.addingTimeInterval(86_400), tsa: nil, failure: nil)
        let proven = signer(failure, timestamp: later, revocation: revoked(.signer, at: revokedAt))
        #expect(proven.indication == .failed && proven.subIndication == .revoked)
        let invalidStamp = VerifiedTimestamp(
            time: revokedAt.addingTimeInterval(86_400),
            tsa: nil,
            failure: VerificationFailure(
                .timestampInvalid,
                "the TSA certificate does not chain to a trusted TSA anchor"
            )
        )
        let unproven = signer(failure, timestamp: invalidStamp, revocation: revoked(.signer, at: revokedAt))
        #expect(unproven.subIndication == .revokedNoPOE, "an invalid timestamp proves nothing")
        let ca = signer(failure, revocation: revoked(.signerCA, at: revokedAt))
        #expect(ca.indication == .indeterminate && ca.subIndication == .revokedCANoPOE)
        let tsa = signer(failure, revocation: revoked(.timestampAuthority, at: revokedAt))
        #expect(tsa.subIndication == .certificateChainGeneralFailure)
    }

    @Test("signerExpired: OUT_OF_BOUNDS_NO_POE, EXPIRED with a POE after expiry, NOT_YET_VALID, a CA's")
    func outOfBounds() {
        let failure = VerificationFailure(.signerExpired, "expired")
        let noPOE = signer(failure)
        #expect(noPOE.indication == .indeterminate && noPOE.subIndication == .outOfBoundsNoPOE)
        let afterExpiry = VerifiedTimestamp(time: Date().addingTimeInterval(-86_400), tsa: nil, failure: nil)
        #expect(signer(failure, timestamp: afterExpiry).subIndication == .expired)
        let early = signer(failure, checkedAt: Date().addingTimeInterval(-3 * Self.year))
        #expect(early.subIndication == .notYetValid)
        let inside = signer(failure, checkedAt: Date().addingTimeInterval(-1.5 * Self.year))
        #expect(inside.subIndication == .certificateChainGeneralFailure, "the signer was valid: a CA was not")
    }

    @Test("a result is its worst signer's verdict, named; a failure of the whole signature counts too")
    func worstSigner() {
        let good = signer(nil)
        let changed = signer(VerificationFailure(.contentChanged, "changed"))
        let untrusted = signer(VerificationFailure(.untrustedSigner, "untrusted"))
        let result = VerificationResult(
            failure: VerificationFailure(.untrustedSigner, "signer 2 of 3: untrusted"),
            signerCertificate: signer,
            signingTime: nil,
            digestAlgorithm: .sha256,
            format: .cadesBES,
            isDetached: true,
            chainChecked: true,
            chain: [signer],
            embeddedContent: nil,
            signers: [good, untrusted, changed],
            validationTime: Date()
        )
        #expect(result.indication == .failed && result.subIndication == .hashFailure)
        #expect(result.verdict.reason == "signer 3 of 3: changed")
        let mismatch = VerificationResult(
            failure: VerificationFailure(.contentChanged, "the document given beside it differs"),
            signerCertificate: signer,
            signingTime: nil,
            digestAlgorithm: .sha256,
            format: .cadesBES,
            isDetached: false,
            chainChecked: true,
            chain: [signer],
            embeddedContent: [1],
            signers: [good],
            validationTime: Date()
        )
        #expect(mismatch.indication == .failed && mismatch.subIndication == .hashFailure)
    }

    @Test("a signer's and a timestamp's description speak the verdict's words, not valid/invalid")
    func descriptions() {
        let unchecked = signer(nil, chainChecked: false)
        #expect(
            unchecked.description.hasPrefix("INDETERMINATE: NO_CERTIFICATE_CHAIN_FOUND — "),
            "\(unchecked.description)"
        )
        #expect(unchecked.description.hasSuffix("; signer: CN=Indication Signer"), "\(unchecked.description)")
        let changed = signer(VerificationFailure(.contentChanged, "the content's digest does not match"))
        #expect(changed.description.hasPrefix("FAILED: HASH_FAILURE — "), "\(changed.description)")
        #expect(!changed.description.contains("invalid") && !unchecked.description.contains("valid;"))
    }

    @Test("a timestamp's verdict follows its failure's class, never words of its TSA's subject in the reason")
    func timestampVerdictIsTyped() {
        // A TSA may call itself anything: the reason names its certificate by subject.
        let reason =
            "the signature timestamp is not valid: the TSA's certificate 'CN=Archive TSA, OU=signature does not verify "
            + "on revoked keys' expired on 2025-01-01T00:00:00Z and is checked at 2026-01-01T00:00:00Z"
        let stamp = VerifiedTimestamp(
            time: Date().addingTimeInterval(-Self.year),
            tsa: nil,
            failure: VerificationFailure(.timestampExpired, reason, timestampKind: .authorityOutOfValidity)
        )
        #expect(stamp.indication == .indeterminate && stamp.subIndication == .outOfBoundsNoPOE)
        let signed = signer(
            VerificationFailure(.timestampInvalid, reason, timestampKind: .authorityOutOfValidity),
            timestamp: stamp
        )
        #expect(signed.indication == .indeterminate && signed.subIndication == .outOfBoundsNoPOE)
        let revoked = VerificationFailure(
            .timestampInvalid,
            "the signature timestamp's authority certificate 'CN=TSA for certificates expired before 2020' was revoked",
            timestampKind: .authorityRevoked
        )
        #expect(signer(revoked).subIndication == .revokedNoPOE)
    }
}
