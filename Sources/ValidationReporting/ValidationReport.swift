public import CertificateProviders
public import Foundation
public import Validation

/// An ETSI TS 119 102-2 validation report: one `SignatureValidationReport` per signature verified,
/// and the certificates they name as validation objects, in the XML of the standard's v1.2.1
/// schema (namespace ``namespace``), the one EU DSS and pyHanko
/// (`pyhanko.sign.validation.report`) write and read.
///
/// Build it from what the verifiers returned, then write ``xmlData()`` where archives, courts and
/// auditors keep it:
///
/// ```swift
/// let result = CMSVerifier.verify(signature: signature, content: nil, trustAnchors: anchors)
/// let report = ValidationReport(results: [result])
/// try report.xmlData().write(to: reportURL)
/// ```
///
/// Each ``Signature`` carries the indication and sub-indication of ETSI EN 319 102-1 (as
/// `VerificationResult.indication` gives them), the validation time and the best signature time,
/// the signer's certificate and what identifies the signature (a digest of its signature value, a
/// PDF field's name).
public struct ValidationReport: Sendable {
    /// The namespace of the report's elements: ETSI TS 119 102-2 v1.2.1.
    public static let namespace = "http://uri.etsi.org/19102/v1.2.1#"

    /// The signatures reported on, in order.
    public var signatures: [Signature]

    /// A report on `signatures`.
    public init(signatures: [Signature]) {
        self.signatures = signatures
    }

    /// A report on every signer of every result (``Signature/signatures(of:documentIdentifier:)``).
    public init(results: [VerificationResult]) {
        signatures = results.flatMap { Signature.signatures(of: $0) }
    }

    /// The report as XML (UTF-8, with an XML declaration), built with libxml2.
    /// - Throws: ``ValidationReportError`` with ``ValidationReportError/Code/xmlFailure`` when
    ///   libxml2 cannot build or serialise the document (memory ran out).
    public func xmlData() throws(ValidationReportError) -> Data {
        try ValidationReportXML(self).data()
    }
}

extension ValidationReport {
    /// What the report says about one signature (one CMS SignerInfo, one PDF signature field).
    public struct Signature: Sendable {
        /// The main status (`urn:etsi:019102:mainindication:…`).
        public var indication: Indication
        /// Why the indication is not passed (`urn:etsi:019102:subindication:…`); nil when passed.
        public var subIndication: SubIndication?
        /// The signature value as it stands in the signature: the report identifies the signature by
        /// its SHA-256 digest and carries it as `ds:SignatureValue`. Empty when unknown (a document
        /// timestamp, a signature that could not be read).
        public var signatureValue: [UInt8]
        /// The name of the signature in its container (`DAIdentifier`): a PDF signature field's name;
        /// nil for a CMS signature file.
        public var documentIdentifier: String?
        /// The time the signature was validated at.
        public var validationTime: Date
        /// The earliest time a proof of existence (a valid signature or document timestamp) shows the
        /// signature existed at; nil without one (the report then gives the validation time, as
        /// EN 319 102-1 starts the best signature time at the current time).
        public var bestSignatureTime: Date?
        /// The signer's certificate, when known.
        public var signerCertificate: Certificate?
        /// The other certificates the validation used (the signer's chain, the TSA's certificate):
        /// validation objects of the report beside the signer's.
        public var certificates: [Certificate]
        /// The trusted-list services that anchored the signer's chain and its timestamp's (empty
        /// when the trust came from elsewhere).
        public var trustServices: [TrustService] = []

        /// A signature's report entry.
        /// - Parameters:
        ///   - indication: the main status.
        ///   - subIndication: why it is not passed; nil when passed.
        ///   - validationTime: when it was validated.
        ///   - signatureValue: the signature value (empty when unknown).
        ///   - documentIdentifier: its name in its container (a PDF field), if any.
        ///   - bestSignatureTime: the proven time of existence, if any.
        ///   - signerCertificate: the signer's certificate, if known.
        ///   - certificates: other certificates the validation used.
        public init(
            indication: Indication,
            subIndication: SubIndication?,
            validationTime: Date,
            signatureValue: [UInt8] = [],
            documentIdentifier: String? = nil,
            bestSignatureTime: Date? = nil,
            signerCertificate: Certificate? = nil,
            certificates: [Certificate] = []
        ) {
            self.indication = indication
            self.subIndication = subIndication
            self.validationTime = validationTime
            self.signatureValue = signatureValue
            self.documentIdentifier = documentIdentifier
            self.bestSignatureTime = bestSignatureTime
            self.signerCertificate = signerCertificate
            self.certificates = certificates
        }

        /// One entry per signer of `result`, each with the signer's indication (a failure of the
        /// whole signature, such as content given beside an attached one, counts for every signer);
        /// one entry with the result's indication when it has no signer (it could not be read).
        /// - Parameters:
        ///   - result: a CMS verification (or a PDF signature's).
        ///   - documentIdentifier: the signature's name in its container (a PDF field), if any.
        public static func signatures(of result: VerificationResult, documentIdentifier: String? = nil) -> [Signature] {
            guard !result.signers.isEmpty else {
                let verdict = result.verdict
                return [
                    Signature(
                        indication: verdict.indication,
                        subIndication: verdict.subIndication,
                        validationTime: result.validationTime,
                        documentIdentifier: documentIdentifier,
                        signerCertificate: result.signerCertificate,
                        certificates: result.chain
                    )
                ]
            }
            let whole = result.failure.flatMap { failure in
                result.signers.contains { $0.failure?.code == failure.code }
                    ? nil : IndicationMapping.verdict(for: failure)
            }
            return result.signers.map { signer in
                let verdict = Verdict.worst([whole, signer.verdict].compactMap { $0 })
                return Signature(
                    indication: verdict.indication,
                    subIndication: verdict.subIndication,
                    validationTime: result.validationTime,
                    signatureValue: signer.signatureValue,
                    documentIdentifier: documentIdentifier,
                    bestSignatureTime: signer.timestamp.flatMap { $0.isValid ? $0.time : nil },
                    signerCertificate: signer.signerCertificate,
                    certificates: signer.chain + (signer.timestamp?.tsa.map { [$0] } ?? [])
                )
            }
        }
    }
}
