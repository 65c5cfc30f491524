public import CertificateIssuing
public import CertificateProviders
public import Foundation

/// What a test of long-term signatures (CAdES B-T, B-LT, B-LTA) needs, served in this process over
/// loopback HTTP: an RFC 3161 TSA, an OCSP responder and a CRL (a started ``DSSEmulator``), and the
/// CA whose signer certificates name them in their authorityInfoAccess (OCSP) and CRL distribution
/// points, as B-LT needs.
///
/// Each instance has its own emulator, port and CA; nothing is shared between instances. The TSA
/// certificate names the same OCSP responder and CRL, so the TSA's path gets its revocation data too.
///
/// ```swift
/// let services = try LongTermTestServices()
/// defer { services.stop() }
/// let signer = try services.issueSigner(subject: "CN=Long-term Test Signer")
/// // services.timestampURL, services.trustAnchors: the TSA client's configuration
/// ```
public final class LongTermTestServices: Sendable {
    /// The running emulator: its request log shows the TSA, OCSP and CRL requests, and
    /// ``DSSEmulator/revoke(_:at:)`` revokes a certificate this CA issued.
    public let emulator: DSSEmulator
    /// The TSA (`<base>/tsa`).
    public let timestampURL: URL
    /// The OCSP responder the signer certificates name (`<base>/ocsp`).
    public let ocspURL: URL
    /// The CRL the signer certificates name (`<base>/crl`).
    public let crlURL: URL
    private let urls: EmulatorPKI.RevocationURLs

    /// A signer certificate's extensions besides the revocation URLs: critical basicConstraints
    /// CA:FALSE, critical keyUsage digitalSignature and nonRepudiation, extendedKeyUsage
    /// emailProtection and clientAuth.
    public static var signerExtensions: [(name: String, value: String)] { EmulatorPKI.signerExtensions }

    /// Starts the services on an ephemeral loopback port.
    /// - Parameter seed: the emulator's data (default nil: ``EmulatorSeed/standard()``, fresh keys).
    /// - Throws: `.network` when no loopback port can be bound; `.cryptoFailure` when the CA or the
    ///   TSA certificate cannot be made.
    public init(seed: EmulatorSeed? = nil) throws {
        let emulator = try DSSEmulator(configuration: .init(issuesRevocationURLs: true), seed: seed)
        let base = try emulator.start()
        self.emulator = emulator
        timestampURL = base.appendingPathComponent("tsa")
        let urls = EmulatorPKI.RevocationURLs(baseURL: base)
        guard let ocsp = URL(string: urls.ocsp), let crl = URL(string: urls.crl) else {
            emulator.stop()
            throw CertificateProviderError.invalidParameter("the emulator's URL \(base) gives no OCSP or CRL URL")
        }
        ocspURL = ocsp
        crlURL = crl
        self.urls = urls
    }

    /// The CA (`TestPKI` in `CertificateProvidersTesting` is this type): it issues the signers, the
    /// TSA certificate, and signs the OCSP answers and the CRL. Certificates issued with it directly
    /// name no revocation URLs and are `unknown` to the OCSP responder: use
    /// ``issueSigner(subject:keyType:extensions:)``.
    public var pki: CertificateIssuer { CertificateIssuer(root: emulator.pki.authority) }

    /// The trust anchors of the signers and of the TSA: the CA's certificate.
    public var trustAnchors: [Certificate] { [emulator.pki.authority.certificate] }

    /// The extensions that name the services (OpenSSL configuration syntax): authorityInfoAccess
    /// with the OCSP URL and crlDistributionPoints with the CRL URL.
    public var revocationExtensions: [(name: String, value: String)] {
        urls.extensions
    }

    /// Issues a signer under the CA whose certificate names the OCSP responder and the CRL; the
    /// responder answers `good` for it until ``DSSEmulator/revoke(_:at:)``.
    /// - Parameters:
    ///   - subject: the subject, RFC 2253 (Cyrillic is fine).
    ///   - keyType: the key (default P-256).
    ///   - extensions: the extensions besides ``revocationExtensions`` (default
    ///     ``signerExtensions``).
    /// - Returns: the identity; its chain is the CA's certificate.
    /// - Throws: `.cryptoFailure` when the key or certificate cannot be made.
    public func issueSigner(
        subject: String,
        keyType: LocalSigningKey.GenerationParameters = .p256,
        extensions: [(name: String, value: String)] = LongTermTestServices.signerExtensions
    ) throws -> SigningIdentity {
        let identity = try pki.issueLeaf(
            subject: subject,
            keyType: keyType,
            extensions: extensions + revocationExtensions
        )
        emulator.pki.recordIssued(identity.certificate)
        return identity
    }

    /// Stops the services (and closes their connections); verifying afterwards proves that nothing
    /// more was fetched. The emulator also stops when this instance is released.
    public func stop() { emulator.stop() }
}
