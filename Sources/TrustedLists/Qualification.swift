public import CertificateProviders
public import Foundation

/// What a signature comes to under EU law (ETSI TS 119 615, EN 319 102-1 §5.6): qualified
/// (QESig, QESeal), advanced with a qualified certificate (AdESig-QC, AdESeal-QC), or advanced.
public struct QualificationLevel: Hashable, Sendable, CustomStringConvertible {
    /// The level's name as ETSI writes it.
    public let rawValue: String
    /// Creates a level.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The level's name.
    public var description: String { rawValue }

    /// A qualified electronic signature: qualified certificate for e-signatures, key on a QSCD.
    public static let qualifiedSignature = QualificationLevel("QESig")
    /// A qualified electronic seal.
    public static let qualifiedSeal = QualificationLevel("QESeal")
    /// An advanced electronic signature with a qualified certificate (key not on a QSCD).
    public static let advancedSignatureQC = QualificationLevel("AdESig-QC")
    /// An advanced electronic seal with a qualified certificate.
    public static let advancedSealQC = QualificationLevel("AdESeal-QC")
    /// An advanced electronic signature (the certificate is not qualified at the time).
    public static let advancedSignature = QualificationLevel("AdESig")
    /// An advanced electronic seal.
    public static let advancedSeal = QualificationLevel("AdESeal")
    /// Not decided (see the reason): a service whose qualifiers are not evaluated, several QcTypes.
    public static let indeterminate = QualificationLevel("INDETERMINATE")
}

/// The qualification of one signer's certificate: its level, the trusted-list service that decided
/// it (if any) and why.
public struct Qualification: Sendable {
    /// The level.
    public let level: QualificationLevel
    /// The granted CA/QC service on the chain that vouches for the certificate, when one does.
    public let service: TrustService?
    /// Why, in a sentence.
    public let reason: String
}

extension TrustedListSet {
    /// The qualification of `certificate` (a signer's, with its verified `chain`, signer first) at
    /// `time`: from its QcStatements (QcCompliance, QcSSCD, QcType) and the CA/QC services of these
    /// lists that are on the chain, granted at `time`, and meant for the certificate's type (their
    /// ForeSignatures / ForeSeals / ForWebSiteAuthentication information). Without such a service
    /// the certificate is not qualified (AdESig / AdESeal).
    public func qualification(of certificate: Certificate, chain: [Certificate], at time: Date) -> Qualification {
        let statements = QcStatements(certificate: certificate)
        guard let type = statements.type else {
            return Qualification(level: .indeterminate, service: nil, reason: "the certificate states several QcTypes")
        }
        let seal = type == QcStatements.eSealType
        let authorities = Array(chain.dropFirst())
        let candidates = services.filter { service in
            service.type == .qualifiedCertificateAuthority && service.status(at: time) == .granted
                && Self.serves(service, type: type)
        }
        let onChain = candidates.filter { service in
            service.certificates.contains { certificate in authorities.contains { Self.sameAuthority(certificate, $0) }
            }
        }
        guard let service = onChain.first else {
            return Qualification(
                level: seal ? .advancedSeal : .advancedSignature,
                service: nil,
                reason: "no CA/QC service of the trusted lists granted at \(TrustedList.isoText(time)) is on the chain"
            )
        }
        guard service.qualifierURIs.isEmpty else {
            return Qualification(
                level: .indeterminate,
                service: service,
                reason: "the service \"\(service.name)\" refines its certificates with qualifiers, not evaluated yet"
            )
        }
        guard statements.isQualifiedCertificate else {
            return Qualification(
                level: seal ? .advancedSeal : .advancedSignature,
                service: service,
                reason: "the certificate has no QcCompliance statement"
            )
        }
        guard statements.isOnQualifiedDevice else {
            return Qualification(
                level: seal ? .advancedSealQC : .advancedSignatureQC,
                service: service,
                reason: "qualified certificate (QcCompliance) under \"\(service.name)\", key not on a QSCD (no QcSSCD)"
            )
        }
        return Qualification(
            level: seal ? .qualifiedSeal : .qualifiedSignature,
            service: service,
            reason: "qualified certificate (QcCompliance, QcSSCD) under \"\(service.name)\""
        )
    }

    /// Whether the service's additional information allows certificates of `type` (none listed: any).
    private static func serves(_ service: TrustService, type: String) -> Bool {
        let base = "http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/"
        let declared: [String: String] = [
            base + "ForeSignatures": QcStatements.eSignatureType,
            base + "ForeSeals": QcStatements.eSealType,
            base + "ForWebSiteAuthentication": QcStatements.webType,
        ]
        let types = service.additionalServiceInformation.compactMap { declared[$0] }
        return types.isEmpty || types.contains(type)
    }

    /// The same CA: equal subject and public key (a re-issued CA certificate counts).
    private static func sameAuthority(_ lhs: Certificate, _ rhs: Certificate) -> Bool {
        lhs.subject == rhs.subject && lhs.publicKeyDERRepresentation == rhs.publicKeyDERRepresentation
    }
}
