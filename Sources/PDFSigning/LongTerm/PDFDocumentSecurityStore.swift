import CertificateProviders
import Foundation
import Signing

/// Reads a PDF's Document Security Store (`/DSS` in the catalog, ISO 32000-2 §12.8.4.3): the
/// certificates, OCSP responses and CRLs of its `/Certs`, `/OCSPs` and `/CRLs` streams, for
/// validation offline. An item that cannot be read is left out (the signature then lacks it and
/// says what is missing).
enum PDFDocumentSecurityStore {
    /// The validation data the DSS of `document` holds (empty without a DSS).
    static func validationData(in document: QPDFDocument) -> ValidationData {
        guard let dss = document.key(document.root, "/DSS") else { return ValidationData() }
        func items(_ key: String) -> [[UInt8]] {
            (document.key(dss, key).map(document.items) ?? []).compactMap { item in
                document.isStream(item) ? document.streamData(item, decoded: true) : nil
            }
        }
        return ValidationData(
            certificates: items("/Certs").compactMap { try? Certificate(derEncoded: $0) },
            crls: items("/CRLs").compactMap { try? CertificateRevocationList(derEncoded: $0) },
            ocspResponses: items("/OCSPs")
        )
    }
}
