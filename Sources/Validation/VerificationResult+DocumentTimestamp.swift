import CMS
public import CertificateProviders
import Foundation

extension SignatureFormat {
    /// An RFC 3161 document timestamp (PAdES `/Type /DocTimeStamp`, `/SubFilter /ETSI.RFC3161`): a
    /// time-stamping authority's token over the document's signed bytes, with no signer of its own.
    public static let documentTimestamp = SignatureFormat("rfc3161")
}

extension VerificationResult {
    /// A document timestamp's check in the shape of a signature's verification: the TSA stands in for
    /// the signer, the imprint's digest for the digest; no SignerInfos.
    ///
    /// - Parameters:
    ///   - check: what ``TimestampVerifier/verifyDocumentTimestamp(contents:coveredBytes:trustAnchors:validationTime:allowedClockSkew:)``
    ///     found.
    ///   - validationTime: the time the TSA's chain was checked at.
    package init(documentTimestamp check: TimestampCheck, validationTime: Date) {
        let tsa = check.token?.authorityCertificate
        self.init(
            failure: check.failureReason.map {
                VerificationFailure(
                    .timestampInvalid,
                    "the document timestamp is not valid: \($0)",
                    timestampKind: check.failureKind
                )
            },
            signerCertificate: tsa,
            signingTime: nil,
            digestAlgorithm: check.token.flatMap { DigestAlgorithm(name: $0.imprintAlgorithm) },
            format: .documentTimestamp,
            isDetached: true,
            chainChecked: check.isValid,
            chain: tsa.map { [$0] } ?? [],
            embeddedContent: nil,
            signers: [],
            validationTime: validationTime
        )
    }
}
