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

    /// Where the emulator's OCSP responder and CRL are, for certificates to name (AIA OCSP, CRL DP).
    struct RevocationURLs: Sendable, Equatable {
        /// `<base>/ocsp`.
        var ocsp: String
        /// `<base>/crl`.
        var crl: String

        /// The routes of the emulator at `baseURL` (see `RevocationRouter`).
        init(baseURL: URL) {
            ocsp = baseURL.appendingPathComponent(String(RevocationRouter.ocspPath.dropFirst())).absoluteString
            crl = baseURL.appendingPathComponent(String(RevocationRouter.crlPath.dropFirst())).absoluteString
        }

        /// The two extensions, in OpenSSL configuration syntax.
        var extensions: [(name: String, value: String)] {
            [("authorityInfoAccess", "OCSP;URI:\(ocsp)"), ("crlDistributionPoints", "URI:\(crl)")]
        }
    }

    /// The CA that signs OCSP responses and the CRL.
    let authority: CertificateIssuer.Authority
    private struct Issued {
        var timestampIdentity: SigningIdentity
        var knownSerials: Set<String>
        var revocationURLs: RevocationURLs?
    }
    private let issued: Mutex<Issued>
    private let revocations = Mutex<[Revocation]>([])

    /// The TSA policy OID of the emulator's tokens (a private test arc).
    static let timestampPolicy = "1.3.6.1.4.1.55555.3161.1"

    /// The TSA's certificate extensions: critical extendedKeyUsage timeStamping.
    static let timestampExtensions: [(name: String, value: String)] = [
        ("basicConstraints", "critical,CA:FALSE"),
        ("keyUsage", "critical,digitalSignature,nonRepudiation"),
        ("extendedKeyUsage", "critical,timeStamping"),
    ]

    /// A signer certificate's extensions, as `CertificateIssuer.issueLeaf` gives them.
    static let signerExtensions: [(name: String, value: String)] = [
        ("basicConstraints", "critical,CA:FALSE"),
        ("keyUsage", "critical,digitalSignature,nonRepudiation"),
        ("extendedKeyUsage", "emailProtection,clientAuth"),
    ]

    /// Builds the services for `seed`.
    /// - Parameters:
    ///   - timestampIdentity: the TSA identity kept from an earlier run; nil issues a new one.
    ///   - knownSerials: serials (hex) of certificates issued in earlier runs, which OCSP still knows.
    ///   - baseURL: the base URL the current certificates' revocation URLs name, if any.
    init(
        seed: EmulatorSeed,
        timestampIdentity: SigningIdentity? = nil,
        knownSerials: [String] = [],
        baseURL: URL? = nil
    ) throws {
        let authority: CertificateIssuer.Authority
        if let key = seed.certificateAuthorityKey {
            authority = CertificateIssuer.Authority(certificate: seed.certificateAuthority, key: key)
        } else {
            authority = try CertificateIssuer(rootSubject: "CN=DSS Emulator Services CA,O=swift-certificate-providers")
                .root
        }
        self.authority = authority
        let timestamp =
            try timestampIdentity
            ?? CertificateIssuer(root: authority).issueLeaf(
                subject: "CN=DSS Emulator TSA,O=swift-certificate-providers",
                keyType: .p256,
                extensions: Self.timestampExtensions
            )
        var serials = Set(knownSerials.map(EmulatorPKI.normalized))
        serials.insert(EmulatorPKI.normalized(timestamp.certificate.serialNumber))
        for user in seed.users {
            for record in user.certificates {
                serials.insert(EmulatorPKI.normalized(record.identity.certificate.serialNumber))
            }
        }
        issued = Mutex(
            Issued(
                timestampIdentity: timestamp,
                knownSerials: serials,
                revocationURLs: baseURL.map(RevocationURLs.init(baseURL:))
            )
        )
    }

    /// The TSA's identity: a P-256 key whose certificate has the critical extendedKeyUsage
    /// timeStamping, issued by ``authority``.
    var timestampIdentity: SigningIdentity { issued.withLock { $0.timestampIdentity } }

    /// The serials (normalized hex) of every certificate the CA issued that the emulator knows:
    /// OCSP answers `good` for these, `unknown` for any other.
    var knownSerials: Set<String> { issued.withLock { $0.knownSerials } }

    /// Issues `identity`'s key a new certificate with the same subject under ``authority`` whose
    /// extensions are `extensions` plus the revocation URLs; OCSP knows it from now on.
    /// - Returns: nil when the key is not a local one (it cannot be re-certified here).
    func reissue(
        _ identity: SigningIdentity,
        extensions: [(name: String, value: String)],
        urls: RevocationURLs
    ) throws -> SigningIdentity? {
        guard let key = identity.key as? LocalSigningKey else { return nil }
        let certificate = try CertificateIssuer(root: authority).issueCertificate(
            subject: identity.certificate.subject,
            publicKey: key,
            extensions: extensions + urls.extensions
        )
        _ = issued.withLock { $0.knownSerials.insert(EmulatorPKI.normalized(certificate.serialNumber)) }
        return SigningIdentity(certificate: certificate, chain: identity.chain, key: key)
    }

    /// Records a certificate the CA issued outside the emulator: OCSP answers `good` for it from now on.
    func recordIssued(_ certificate: Certificate) {
        _ = issued.withLock { $0.knownSerials.insert(EmulatorPKI.normalized(certificate.serialNumber)) }
    }

    /// The revocation URLs the current certificates name; nil when they name none.
    var revocationURLs: RevocationURLs? { issued.withLock { $0.revocationURLs } }

    /// Gives the TSA a certificate naming `urls` (same key) and records that the certificates name them.
    func reissueTimestampCertificate(urls: RevocationURLs) throws {
        let identity = try reissue(timestampIdentity, extensions: Self.timestampExtensions, urls: urls)
        issued.withLock {
            if let identity { $0.timestampIdentity = identity }
            $0.revocationURLs = urls
        }
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
