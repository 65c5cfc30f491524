import CertificateIssuing
import CertificateProviders
import Foundation
import Synchronization

/// The emulator's certificate authority services: the CA (certificate and key) that signs OCSP
/// responses and the CRL, the TSA identity it issued, and the list of revoked certificates.
///
/// Built once per emulator. With a seed that carries its CA key the services use that CA, so OCSP,
/// CRL and TSA cover the seed's user certificates; otherwise they make a CA of their own.
final class EmulatorPKI: Sendable {
    /// A revoked certificate: its serial (upper-case hex, no leading zeros) and when.
    struct Revocation: Sendable {
        var serialNumber: String
        var date: Date
    }

    /// The CA that signs OCSP responses and the CRL.
    let authority: CertificateIssuer.Authority
    /// The TSA's identity: a P-256 key whose certificate has the critical extendedKeyUsage
    /// timeStamping, issued by ``authority``.
    let timestampIdentity: SigningIdentity
    /// The serials (normalized hex) of every certificate the CA issued that the emulator knows:
    /// OCSP answers `good` for these, `unknown` for any other.
    let knownSerials: Set<String>
    private let revocations = Mutex<[Revocation]>([])

    /// The TSA policy OID of the emulator's tokens (a private test arc).
    static let timestampPolicy = "1.3.6.1.4.1.55555.3161.1"

    init(seed: EmulatorSeed) throws {
        let authority: CertificateIssuer.Authority
        if let key = seed.certificateAuthorityKey {
            authority = CertificateIssuer.Authority(certificate: seed.certificateAuthority, key: key)
        } else {
            authority = try CertificateIssuer(rootSubject: "CN=DSS Emulator Services CA,O=swift-certificate-providers")
                .root
        }
        self.authority = authority
        let pki = CertificateIssuer(root: authority)
        timestampIdentity = try pki.issueLeaf(
            subject: "CN=DSS Emulator TSA,O=swift-certificate-providers",
            keyType: .p256,
            extensions: [
                ("basicConstraints", "critical,CA:FALSE"),
                ("keyUsage", "critical,digitalSignature,nonRepudiation"),
                ("extendedKeyUsage", "critical,timeStamping"),
            ]
        )
        var serials: Set<String> = [EmulatorPKI.normalized(timestampIdentity.certificate.serialNumber)]
        for user in seed.users {
            for record in user.certificates {
                serials.insert(EmulatorPKI.normalized(record.identity.certificate.serialNumber))
            }
        }
        knownSerials = serials
    }

    /// Marks a certificate revoked from `date` on (a second call keeps the first date).
    func revoke(serialNumber: String, at date: Date) {
        let serial = EmulatorPKI.normalized(serialNumber)
        revocations.withLock { list in
            guard !list.contains(where: { $0.serialNumber == serial }) else { return }
            list.append(Revocation(serialNumber: serial, date: date))
        }
    }

    /// The revoked certificates so far.
    var revoked: [Revocation] { revocations.withLock { $0 } }

    /// Upper-case hex without leading zeros (how `Certificate.serialNumber` prints it).
    static func normalized(_ hex: String) -> String {
        let upper = hex.uppercased().filter { $0.isHexDigit }
        let trimmed = upper.drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }
}
