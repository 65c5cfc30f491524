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
    /// `time`, as ETSI TS 119 615 and pyHanko's assessor decide it: the certificate's QcStatements
    /// (QcCompliance, QcSSCD, QcType), refined by the qualifiers of the CA/QC service on the chain
    /// granted at `time` whose criteria select it (`QCWithQSCD`, `NotQualified`, `QCForESeal`, …),
    /// for a service meant for the certificate's type (ForeSignatures / ForeSeals / ForWebSiteAuthentication).
    /// Without such a service the certificate is not qualified (AdESig / AdESeal); a service whose
    /// criteria are not evaluated here (policy sets, other criteria) gives ``QualificationLevel/indeterminate``.
    public func qualification(of certificate: Certificate, chain: [Certificate], at time: Date) -> Qualification {
        let statements = QcStatements(certificate: certificate)
        guard let stated = statements.type else {
            return Qualification(level: .indeterminate, service: nil, reason: "the certificate states several QcTypes")
        }
        let prelim = QualifiedStatus(
            qualified: statements.isQualifiedCertificate,
            onQSCD: statements.isQualifiedCertificate && statements.isOnQualifiedDevice,
            type: stated
        )
        let authorities = Array(chain.dropFirst())
        let onChain = services.filter { service in
            service.type == .qualifiedCertificateAuthority && service.status(at: time) == .granted
                && service.certificates.contains { own in authorities.contains { Self.sameAuthority(own, $0) } }
        }
        for service in onChain {
            guard let status = prelim.applying(service, to: certificate) else {
                return Qualification(
                    level: .indeterminate,
                    service: service,
                    reason: "the qualifiers of \"\(service.name)\" select certificates by criteria not evaluated here"
                )
            }
            guard Self.serves(service, type: status.type) else { continue }
            return Qualification(level: status.level, service: service, reason: status.reason(service))
        }
        return Qualification(
            level: prelim.type == QcStatements.eSealType ? .advancedSeal : .advancedSignature,
            service: nil,
            reason: "no CA/QC service of the trusted lists granted at \(TrustedList.isoText(time)) is on the chain"
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

/// A certificate's qualified status while it is assessed: qualified or not, key on a QSCD or not,
/// its type, and the qualifiers that changed it.
private struct QualifiedStatus {
    var qualified: Bool
    var onQSCD: Bool
    var type: String
    var qualifiers: Set<String> = []

    /// The status once `service`'s qualifiers that select `certificate` are applied (the order of
    /// precedence pyHanko's assessor uses); nil when a criteria list cannot be evaluated.
    func applying(_ service: TrustService, to certificate: Certificate) -> QualifiedStatus? {
        var applicable = Set<String>()
        for qualification in service.qualifications {
            guard let selected = qualification.criteria.matches(certificate) else { return nil }
            if selected { applicable.formUnion(qualification.qualifierNames) }
        }
        var status = self
        status.qualifiers = applicable
        if !applicable.isDisjoint(with: ["NotQualified", "QCForLegalPerson"]) {
            status.qualified = false
        } else if applicable.contains("QCStatement") {
            status.qualified = true
        }
        if applicable.contains("QCForWSA") {
            status.type = QcStatements.webType
        } else if applicable.contains("QCForESig") {
            status.type = QcStatements.eSignatureType
        } else if applicable.contains("QCForESeal") {
            status.type = QcStatements.eSealType
        }
        if !status.qualified || !applicable.isDisjoint(with: ["QCNoSSCD", "QCNoQSCD"]) {
            status.onQSCD = false
        } else if !applicable.isDisjoint(with: ["QCQSCDManagedOnBehalf", "QCWithSSCD", "QCWithQSCD"]) {
            status.onQSCD = true
        }
        return status
    }

    var level: QualificationLevel {
        let seal = type == QcStatements.eSealType
        guard qualified else { return seal ? .advancedSeal : .advancedSignature }
        guard onQSCD else { return seal ? .advancedSealQC : .advancedSignatureQC }
        return seal ? .qualifiedSeal : .qualifiedSignature
    }

    func reason(_ service: TrustService) -> String {
        let by = qualifiers.isEmpty ? "" : " (the list's qualifiers: \(qualifiers.sorted().joined(separator: ", ")))"
        guard qualified else { return "not a qualified certificate under \"\(service.name)\"\(by)" }
        guard onQSCD else { return "qualified certificate under \"\(service.name)\", key not on a QSCD\(by)" }
        return "qualified certificate under \"\(service.name)\", key on a QSCD\(by)"
    }
}
