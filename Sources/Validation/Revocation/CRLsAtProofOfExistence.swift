import CMS
import CertificateProviders
import Foundation

/// OpenSSL's CRL check of one path, judged against a proof of existence (EN 319 102-1 §5.5 and
/// §5.6.2.4): a signature timestamp proves the signature existed at its time, so a CRL current at
/// that time, or issued at or after it, proves each certificate's status then, whatever its
/// nextUpdate says today. A B-LT signature thus keeps verifying after its embedded CRLs' nextUpdate,
/// as an embedded OCSP answer does; a revocation dated before the proven time still fails it
/// (the caller compares the revocation time with the proven time).
///
/// The path is first checked at the validation time (CRLs fetched or given now decide there); a
/// certificate no CRL decides then is checked again at the proven time and at the thisUpdate of each
/// CRL issued between the proven time and the validation time (OpenSSL takes one time per check).
enum CRLsAtProofOfExistence {
    /// The path's check, with each certificate's verdict from the first time that decides it.
    static func check(
        leaf: Certificate,
        untrusted: [Certificate],
        anchors: [Certificate],
        crls: [CertificateRevocationList],
        validationTime: Date,
        provenTime: Date?
    ) -> RevocationOpenSSL.CRLPathCheck {
        let now = RevocationOpenSSL.checkCRLs(
            leaf: leaf,
            untrusted: untrusted,
            anchors: anchors,
            crls: crls,
            at: validationTime
        )
        guard let provenTime, !crls.isEmpty, now.verdicts.contains(where: { $0.state == .unknown }) else { return now }
        var verdicts = now.verdicts
        for time in times(provenTime: provenTime, crls: crls, validationTime: validationTime) {
            let then = RevocationOpenSSL.checkCRLs(
                leaf: leaf,
                untrusted: untrusted,
                anchors: anchors,
                crls: crls,
                at: time
            )
            guard then.chain == now.chain else { continue }
            for depth in verdicts.indices
            where verdicts[depth].state == .unknown && then.verdicts[depth].state != .unknown {
                verdicts[depth] = then.verdicts[depth]
            }
            if !verdicts.contains(where: { $0.state == .unknown }) { break }
        }
        return RevocationOpenSSL.CRLPathCheck(chain: now.chain, endsInAnchor: now.endsInAnchor, verdicts: verdicts)
    }

    /// The proven time, then the thisUpdate of every CRL issued after it and not after the
    /// validation time, in order: at each of them some CRL is current and speaks of the proven time.
    static func times(provenTime: Date, crls: [CertificateRevocationList], validationTime: Date) -> [Date] {
        let issued = crls.map(\.thisUpdate).filter { $0 > provenTime && $0 <= validationTime }
        return [provenTime] + Set(issued).sorted()
    }
}
