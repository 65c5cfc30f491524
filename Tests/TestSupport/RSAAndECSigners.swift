public import CertificateProviders
public import CertificateProvidersTesting

/// A test PKI with two signers, RSA 2048 and EC P-256, issued by the root or by one intermediate CA.
/// A test target's suites share one, made once per process (``init(sharedBy:)``): Swift Testing
/// makes a suite value per test, and the keys are not made again for each.
public struct RSAAndECSigners: Sendable {
    /// The PKIs the test targets share.
    public enum Sharing: Sendable {
        /// The Signing suites': the signers straight under the root.
        case signingSuites
        /// The PDF suites': the signers under an intermediate CA.
        case pdfSuites
    }

    /// The CA.
    public let pki: TestPKI
    /// The RSA signer.
    public let rsa: SigningIdentity
    /// The EC signer.
    public let ec: SigningIdentity

    /// Makes the root, the intermediate CA when `intermediateSubject` names one, and the two
    /// signers under the intermediate (or the root).
    public init(rootSubject: String, intermediateSubject: String? = nil, rsaSubject: String, ecSubject: String) throws {
        let pki = try TestPKI(rootSubject: rootSubject)
        let issuer = try intermediateSubject.map { try pki.issueIntermediate(subject: $0) }
        self.pki = pki
        rsa = try pki.issueLeaf(subject: rsaSubject, keyType: .rsa2048, issuer: issuer)
        ec = try pki.issueLeaf(subject: ecSubject, keyType: .p256, issuer: issuer)
    }

    private static let signingSuites = Result { try RSAAndECSigners(making: .signingSuites) }
    private static let pdfSuites = Result { try RSAAndECSigners(making: .pdfSuites) }

    /// The PKI `sharing` names, made on first use.
    public init(sharedBy sharing: Sharing) throws {
        switch sharing {
        case .signingSuites: self = try Self.signingSuites.get()
        case .pdfSuites: self = try Self.pdfSuites.get()
        }
    }

    private init(making sharing: Sharing) throws {
        switch sharing {
        case .signingSuites:
            try self.init(
                rootSubject: "CN=Signing Test Root,O=swift-certificate-providers",
                rsaSubject: "CN=Иванов Иван,O=ООО Ромашка",
                ecSubject: "CN=EC Signer,O=Test"
            )
        case .pdfSuites:
            try self.init(
                rootSubject: "CN=PDF Test Root,O=swift-certificate-providers",
                intermediateSubject: "CN=PDF Test Issuing CA,O=swift-certificate-providers",
                rsaSubject: "CN=Иванов Иван,O=ООО Ромашка",
                ecSubject: "CN=EC PDF Signer,O=Test"
            )
        }
    }

    /// The root certificate.
    public var root: Certificate { pki.root.certificate }

    /// `identity` with its key wrapped so that it is not a `LocalSigningKey`.
    public static func external(_ identity: SigningIdentity) throws -> SigningIdentity { try withExternalKey(identity) }
}
