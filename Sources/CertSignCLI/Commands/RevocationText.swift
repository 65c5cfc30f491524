import CertificateProviders
import Foundation
import Signing

extension Commands {
    /// The `revocation:` lines of `verify` for one signer: the summary, then one line per
    /// certificate checked (the signer's path, then the TSA's), trust anchors excepted.
    static func revocationText(_ revocation: RevocationStatus, indent: String) -> [String] {
        guard !revocation.certificates.isEmpty else { return ["\(indent)revocation:   \(revocation)"] }
        let count = revocation.certificates.count
        let since = revocation.revocationTime.map { " since \(Format.localDate($0))" } ?? ""
        // B-LT: every answer came from the signature itself (no network).
        let embedded = revocation.certificates.allSatisfy { $0.status.source.hasPrefix("embedded") }
        let checked = "\(count) certificate\(count == 1 ? "" : "s") checked"
        var lines = [
            "\(indent)revocation:   \(revocation.state)\(since) ("
                + (embedded ? "embedded OCSP and CRL answers, \(checked))" : "\(checked))")
        ]
        for entry in revocation.certificates {
            let time = entry.status.revocationTime.map { " since \(Format.localDate($0))" } ?? ""
            lines.append(
                "\(indent)  \(entry.role): \(entry.certificate.subject): \(entry.status.state)\(time) "
                    + "(\(entry.status.source))"
            )
        }
        return lines
    }
}
