public import CertificateProviders

/// One `QualificationElement` of a CA/QC service's `Qualifications` extension: qualifiers (`QCWithQSCD`,
/// `NotQualified`, …) for the certificates its criteria select.
public struct TrustServiceQualification: Sendable, Hashable {
    /// The `Qualifier` URIs (`http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/QCWithQSCD`, …).
    public let qualifiers: [String]
    /// Which certificates they apply to.
    public let criteria: TrustServiceCriteria

    /// Creates a qualification.
    public init(qualifiers: [String], criteria: TrustServiceCriteria) {
        self.qualifiers = qualifiers
        self.criteria = criteria
    }

    /// The qualifiers' short names (`QCWithQSCD`): the last path component of each URI.
    public var qualifierNames: Set<String> {
        Set(qualifiers.compactMap { $0.split(separator: "/").last.map(String.init) })
    }
}

/// A `CriteriaList`: key usage criteria and nested lists combined by its `assert` (all, atLeastOne,
/// none). Policy sets and other criteria are kept by name but not evaluated.
public struct TrustServiceCriteria: Sendable, Hashable {
    /// `all`, `atLeastOne` or `none`.
    public let assertion: String
    /// Each `KeyUsage` criterion: the bits named (`nonRepudiation`, …) and whether each must be set.
    public let keyUsage: [[String: Bool]]
    /// Nested `CriteriaList`s.
    public let sublists: [TrustServiceCriteria]
    /// The names of criteria that are not evaluated (`PolicySet`, `otherCriteriaList`, …).
    public let unevaluated: [String]

    /// Creates a criteria list.
    public init(assertion: String, keyUsage: [[String: Bool]], sublists: [TrustServiceCriteria], unevaluated: [String])
    {
        self.assertion = assertion
        self.keyUsage = keyUsage
        self.sublists = sublists
        self.unevaluated = unevaluated
    }

    /// Whether `certificate` meets the list; nil when it holds criteria that are not evaluated or an
    /// unknown `assert`.
    public func matches(_ certificate: Certificate) -> Bool? {
        guard unevaluated.isEmpty else { return nil }
        let names = Set((certificate.keyUsage?.names ?? []).map { $0.lowercased() })
        var results = keyUsage.map { bits in bits.allSatisfy { names.contains($0.key.lowercased()) == $0.value } }
        for sublist in sublists {
            guard let result = sublist.matches(certificate) else { return nil }
            results.append(result)
        }
        switch assertion {
        case "all": return results.allSatisfy { $0 }
        case "atLeastOne": return results.contains(true)
        case "none": return !results.contains(true)
        default: return nil
        }
    }
}
