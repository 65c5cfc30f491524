public import CertificateProviders
import Foundation

/// The validation data of a long-term signature (B-LT): the certificates of every path to check
/// (the signer's and each timestamp's TSA's), and a revocation answer for each of their
/// certificates but the trust anchors. Format-neutral: CAdES puts it into SignedData, PAdES into a
/// `/DSS` dictionary.
public struct ValidationData: Sendable {
    /// The certificates, each once, signer's path first.
    public var certificates: [Certificate]
    /// The CRLs, each once.
    public var crls: [CertificateRevocationList]
    /// The OCSP responses (DER OCSPResponse), each once.
    public var ocspResponses: [[UInt8]]

    /// Creates validation data.
    public init(certificates: [Certificate] = [], crls: [CertificateRevocationList] = [], ocspResponses: [[UInt8]] = [])
    {
        self.certificates = certificates
        self.crls = crls
        self.ocspResponses = ocspResponses
    }

    /// Adds what `other` has and this does not.
    public mutating func merge(_ other: ValidationData) {
        for certificate in other.certificates where !certificates.contains(certificate) {
            certificates.append(certificate)
        }
        for crl in other.crls where !crls.contains(where: { $0.derRepresentation == crl.derRepresentation }) {
            crls.append(crl)
        }
        for response in other.ocspResponses where !ocspResponses.contains(response) {
            ocspResponses.append(response)
        }
    }
}

/// A revocation answer for one certificate, as fetched for validation data.
public enum RevocationEvidence: Sendable {
    /// A checked OCSP response (DER OCSPResponse) from the certificate's AIA responder.
    case ocsp([UInt8])
    /// A CRL from the certificate's CRL distribution point that decides its status.
    case crl(CertificateRevocationList)
}
