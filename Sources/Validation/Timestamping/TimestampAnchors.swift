import CMS
import CertificateProviders
import Foundation

/// The anchors a timestamp token's TSA chain is checked against. With anchors given, those. With
/// none at all (no chain is checked: `--no-chain-check`), the token's own TSA certificate: the
/// token's signature, imprint, timeStamping key usage and the certificate's validity are still
/// checked, its chain is not, as the signer's is not (an empty store would make OpenSSL fall back to
/// the system's roots, and a private TSA would then fail for trust alone).
package enum TimestampAnchors {
    /// `anchors`, or when empty the TSA certificate `token` (DER, zero padding allowed) carries.
    package static func anchors(_ anchors: [Certificate], token: [UInt8]) -> [Certificate] {
        guard anchors.isEmpty else { return anchors }
        return TimestampOpenSSL.facts(ofToken: token)?.authorityCertificate.map { [$0] } ?? []
    }
}
