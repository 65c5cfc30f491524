import CMS
import CertificateProviders
import Foundation

/// How the package's ``VerificationFailure/Code``s and their context become ETSI EN 319 102-1
/// indications. The table is the article "Indications" of this module; each line here names its
/// reason when the standard leaves a choice.
///
/// | Detail (code, context) | Indication | Sub-indication |
/// |---|---|---|
/// | none, chain checked | PASSED | — |
/// | none, chain not checked (no trust anchors) | INDETERMINATE | NO_CERTIFICATE_CHAIN_FOUND |
/// | contentChanged | FAILED | HASH_FAILURE |
/// | signatureInvalid | FAILED | SIG_CRYPTO_FAILURE |
/// | malformed, algorithmMismatch | FAILED | FORMAT_FAILURE |
/// | contentMissing | INDETERMINATE | SIGNED_DATA_NOT_FOUND |
/// | signerCertificateMissing, certificateSwapped | INDETERMINATE | NO_SIGNING_CERTIFICATE_FOUND |
/// | untrustedSigner | INDETERMINATE | NO_CERTIFICATE_CHAIN_FOUND |
/// | signerExpired: signer's certificate, no proof of existence inside its validity | INDETERMINATE | OUT_OF_BOUNDS_NO_POE |
/// | signerExpired: a valid signature timestamp after the certificate expired | INDETERMINATE | EXPIRED |
/// | signerExpired: not yet valid | INDETERMINATE | NOT_YET_VALID |
/// | signerExpired: a CA certificate of the chain | INDETERMINATE | CERTIFICATE_CHAIN_GENERAL_FAILURE |
/// | signerRevoked: signer, no proof of existence before the revocation | INDETERMINATE | REVOKED_NO_POE |
/// | signerRevoked: signer, a valid signature timestamp at or after the revocation | FAILED | REVOKED |
/// | signerRevoked: a CA of the signer's chain | INDETERMINATE | REVOKED_CA_NO_POE |
/// | signerRevoked: the TSA's path | INDETERMINATE | CERTIFICATE_CHAIN_GENERAL_FAILURE |
/// | revocationUnknown | INDETERMINATE | TRY_LATER |
/// | weakAlgorithm | INDETERMINATE | CRYPTO_CONSTRAINTS_FAILURE_NO_POE |
/// | unsupportedAlgorithm | INDETERMINATE | CRYPTO_CONSTRAINTS_FAILURE |
/// | certificateNotForSigning | INDETERMINATE | CHAIN_CONSTRAINTS_FAILURE |
/// | limitExceeded | INDETERMINATE | SIG_CONSTRAINTS_FAILURE |
/// | timestampInvalid | the timestamp's own verdict (below) | |
/// | timestampExpired: the token verifies at its time, its TSA's certificate has expired since | INDETERMINATE | OUT_OF_BOUNDS_NO_POE |
/// | any other code | INDETERMINATE | — |
///
/// A timestamp (signature or document timestamp) is judged by the class of failure its check found
/// (`TimestampFailureKind`, never the reason's wording): imprint mismatch, or data an archive
/// timestamp covers gone or changed FAILED/HASH_FAILURE; signature value FAILED/SIG_CRYPTO_FAILURE;
/// not a token FAILED/FORMAT_FAILURE; no chain to a TSA anchor, or no anchors
/// INDETERMINATE/NO_CERTIFICATE_CHAIN_FOUND; not a time-stamping certificate
/// INDETERMINATE/CHAIN_CONSTRAINTS_FAILURE; the TSA certificate out of its validity
/// INDETERMINATE/OUT_OF_BOUNDS_NO_POE; the TSA certificate revoked INDETERMINATE/REVOKED_NO_POE; no TSA
/// certificate INDETERMINATE/NO_SIGNING_CERTIFICATE_FOUND; a time after the validation time
/// INDETERMINATE/TRY_LATER; anything else INDETERMINATE/CERTIFICATE_CHAIN_GENERAL_FAILURE.
package enum IndicationMapping {
    /// A signer's verdict: its failure in the context of its certificate, timestamp and revocation.
    package static func verdict(for signer: SignerVerification) -> Verdict {
        guard let failure = signer.failure else {
            return signer.chainChecked
                ? .passed
                : Verdict(
                    .indeterminate,
                    .noCertificateChainFound,
                    "the signer's chain was not checked against trust anchors"
                )
        }
        switch failure.code {
        case .signerExpired: return outOfBounds(failure, signer)
        case .signerRevoked: return revoked(failure, signer)
        case .timestampInvalid, .timestampExpired:
            guard let timestamp = signer.timestamp, !timestamp.isValid else { break }
            // As pyHanko's validation with time: the signature's verdict is its timestamp's.
            let stamp = verdict(forTimestamp: failure.timestampKind ?? timestamp.failure?.timestampKind, failure.reason)
            return Verdict(stamp.indication, stamp.subIndication, failure.reason)
        default: break
        }
        return verdict(for: failure)
    }

    /// The verdict of a failure without a signer's context (the structure's, or the content's).
    package static func verdict(for failure: VerificationFailure) -> Verdict {
        let reason = failure.reason
        switch failure.code {
        case .contentChanged: return Verdict(.failed, .hashFailure, reason)
        case .signatureInvalid: return Verdict(.failed, .sigCryptoFailure, reason)
        // EN 319 102-1 lists FORMAT_FAILURE under TOTAL-FAILED: a signature that cannot be processed
        // is not one (pyHanko agrees).
        case .malformed, .algorithmMismatch: return Verdict(.failed, .formatFailure, reason)
        case .contentMissing: return Verdict(.indeterminate, .signedDataNotFound, reason)
        // §5.2.3: a signing-certificate reference that matches no certificate leaves the signer unknown.
        case .signerCertificateMissing, .certificateSwapped:
            return Verdict(.indeterminate, .noSigningCertificateFound, reason)
        case .untrustedSigner: return Verdict(.indeterminate, .noCertificateChainFound, reason)
        case .signerExpired: return Verdict(.indeterminate, .outOfBoundsNoPOE, reason)
        case .signerRevoked: return Verdict(.indeterminate, .revokedNoPOE, reason)
        case .revocationUnknown: return Verdict(.indeterminate, .tryLater, reason)
        // The policy refuses the algorithm now; a proof of existence from before it was refused could
        // still save the signature.
        case .weakAlgorithm: return Verdict(.indeterminate, .cryptoConstraintsFailureNoPOE, reason)
        // Not among the algorithms this verifier accepts (another OpenSSL build may): not proven bad.
        case .unsupportedAlgorithm: return Verdict(.indeterminate, .cryptoConstraintsFailure, reason)
        // Key usage is a constraint on the chain's certificates (pyHanko maps it so too).
        case .certificateNotForSigning: return Verdict(.indeterminate, .chainConstraintsFailure, reason)
        // A limit of this verifier, not a defect of the signature.
        case .limitExceeded: return Verdict(.indeterminate, .sigConstraintsFailure, reason)
        case .timestampInvalid: return verdict(forTimestamp: failure.timestampKind, reason)
        // The token verifies at its own time; its TSA's certificate has expired since, and nothing
        // later (an archive timestamp) proves the token existed before that.
        case .timestampExpired: return Verdict(.indeterminate, .outOfBoundsNoPOE, reason)
        default: return Verdict(.indeterminate, nil, reason)
        }
    }

    /// A timestamp's verdict.
    package static func verdict(for timestamp: VerifiedTimestamp) -> Verdict {
        guard let failure = timestamp.failure else { return .passed }
        return verdict(forTimestamp: failure.timestampKind, failure.reason)
    }

    /// A timestamp failure's verdict, from the class its check found (`kind`; nil, for a failure made
    /// without one, counts as `.other`); `reason` is only carried along.
    package static func verdict(forTimestamp kind: TimestampFailureKind?, _ reason: String) -> Verdict {
        switch kind ?? .other {
        case .imprintMismatch: Verdict(.failed, .hashFailure, reason)
        case .signatureInvalid: Verdict(.failed, .sigCryptoFailure, reason)
        case .notAToken: Verdict(.failed, .formatFailure, reason)
        case .untrustedAuthority: Verdict(.indeterminate, .noCertificateChainFound, reason)
        case .notTimeStampingCertificate: Verdict(.indeterminate, .chainConstraintsFailure, reason)
        case .authorityOutOfValidity: Verdict(.indeterminate, .outOfBoundsNoPOE, reason)
        case .authorityCertificateMissing: Verdict(.indeterminate, .noSigningCertificateFound, reason)
        case .timeAfterValidation: Verdict(.indeterminate, .tryLater, reason)
        case .authorityRevoked: Verdict(.indeterminate, .revokedNoPOE, reason)
        case .other: Verdict(.indeterminate, .certificateChainGeneralFailure, reason)
        }
    }

    /// signerExpired: which certificate, and whether a proof of existence dates the signature.
    private static func outOfBounds(_ failure: VerificationFailure, _ signer: SignerVerification) -> Verdict {
        guard let certificate = signer.signerCertificate else { return verdict(for: failure) }
        let at = signer.checkedAt ?? Date()
        let proof = signer.timestamp.flatMap { $0.isValid ? $0.time : nil }
        if at < certificate.notValidBefore || (proof.map { $0 < certificate.notValidBefore } ?? false) {
            return Verdict(.indeterminate, .notYetValid, failure.reason)
        }
        if at > certificate.notValidAfter {
            // §5.5: a proof of existence after the expiry proves the signature was made too late.
            if let proof, proof > certificate.notValidAfter {
                return Verdict(.indeterminate, .expired, failure.reason)
            }
            return Verdict(.indeterminate, .outOfBoundsNoPOE, failure.reason)
        }
        // The signer's own certificate was valid then: a CA certificate of its chain was not.
        return Verdict(.indeterminate, .certificateChainGeneralFailure, failure.reason)
    }

    /// signerRevoked: whose certificate, and whether a proof of existence dates the signature after
    /// the revocation (EN 319 102-1 §5.5.4: then the signature is proven bad).
    private static func revoked(_ failure: VerificationFailure, _ signer: SignerVerification) -> Verdict {
        let entry = signer.revocation?.certificates.first { $0.status.state == .revoked }
        switch entry?.role ?? .signer {
        case .signerCA: return Verdict(.indeterminate, .revokedCANoPOE, failure.reason)
        case .timestampAuthority, .timestampAuthorityCA:
            // The revoked certificate is not on the signer's path: as pyHanko, not a revocation of
            // the signature.
            return Verdict(.indeterminate, .certificateChainGeneralFailure, failure.reason)
        default:
            let revokedAt = entry?.status.revocationTime ?? signer.revocation?.revocationTime
            if let timestamp = signer.timestamp, timestamp.isValid, let revokedAt, revokedAt <= timestamp.time {
                return Verdict(.failed, .revoked, failure.reason)
            }
            return Verdict(.indeterminate, .revokedNoPOE, failure.reason)
        }
    }
}
