public import CertificateProviders
public import Foundation

/// A trust service's type (ETSI TS 119 612 `ServiceTypeIdentifier`): an open set of URIs.
public struct TrustServiceType: Hashable, Sendable, CustomStringConvertible {
    /// The URI.
    public let uri: String
    /// Creates a type from its URI.
    public init(_ uri: String) { self.uri = uri }
    /// The URI.
    public var description: String { uri }
    /// The URI's last path component (`CA/QC` → `QC`), for short displays.
    public var shortName: String {
        uri.replacingOccurrences(of: "http://uri.etsi.org/TrstSvc/Svctype/", with: "")
    }

    /// A CA issuing qualified certificates (`…/Svctype/CA/QC`).
    public static let qualifiedCertificateAuthority = TrustServiceType("http://uri.etsi.org/TrstSvc/Svctype/CA/QC")
    /// A CA issuing non-qualified certificates (`…/Svctype/CA/PKC`).
    public static let certificateAuthority = TrustServiceType("http://uri.etsi.org/TrstSvc/Svctype/CA/PKC")
    /// A qualified time-stamping authority (`…/Svctype/TSA/QTST`).
    public static let qualifiedTimestamping = TrustServiceType("http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST")
    /// A non-qualified time-stamping authority (`…/Svctype/TSA`).
    public static let timestamping = TrustServiceType("http://uri.etsi.org/TrstSvc/Svctype/TSA")
}

/// A trust service's status (ETSI TS 119 612 `ServiceStatus`): an open set of URIs.
public struct TrustServiceStatus: Hashable, Sendable, CustomStringConvertible {
    /// The URI.
    public let uri: String
    /// Creates a status from its URI.
    public init(_ uri: String) { self.uri = uri }
    /// The URI's last path component (`granted`, `withdrawn`, …).
    public var description: String { uri.split(separator: "/").last.map(String.init) ?? uri }

    /// Granted: the supervisory body says the service is qualified.
    public static let granted = TrustServiceStatus("http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted")
    /// Withdrawn: the service is no longer qualified.
    public static let withdrawn = TrustServiceStatus("http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn")
}

/// One span of a service's status: from its `StatusStartingTime` until the next entry's (nil: still so).
public struct TrustServiceStatusPeriod: Hashable, Sendable {
    /// The status during the period.
    public let status: TrustServiceStatus
    /// When it began.
    public let start: Date
    /// When the next status began, or nil for the current one.
    public let end: Date?

    /// Creates a period.
    public init(status: TrustServiceStatus, start: Date, end: Date?) {
        self.status = status
        self.start = start
        self.end = end
    }

    /// Whether `date` lies in the period (its start included, its end not).
    public func contains(_ date: Date) -> Bool { date >= start && end.map { date < $0 } ?? true }
}

/// A trust service of a trusted list: who provides it, what it is, its certificates (its service
/// digital identity) and its status over time (the current one and the service history).
public struct TrustService: Sendable {
    /// The trust service provider's name (`TSPName`, English when given).
    public let providerName: String
    /// The service's name (`ServiceName`, English when given).
    public let name: String
    /// The service's type.
    public let type: TrustServiceType
    /// The certificates of its service digital identity.
    public let certificates: [Certificate]
    /// The current status.
    public let status: TrustServiceStatus
    /// When the current status began.
    public let statusStartingTime: Date
    /// The `AdditionalServiceInformation` URIs of its extensions (`…/SvcInfoExt/ForeSignatures`, …).
    public let additionalServiceInformation: [String]
    /// Its `Qualifications` extension's elements, which refine the qualification of the
    /// certificates their criteria select.
    public let qualifications: [TrustServiceQualification]
    /// Every known status period, oldest first: the service history's entries, then the current one.
    public let periods: [TrustServiceStatusPeriod]

    /// Creates a service; `history` holds the past (status, start) entries in any order.
    public init(
        providerName: String,
        name: String,
        type: TrustServiceType,
        certificates: [Certificate],
        status: TrustServiceStatus,
        statusStartingTime: Date,
        additionalServiceInformation: [String] = [],
        qualifications: [TrustServiceQualification] = [],
        history: [(status: TrustServiceStatus, start: Date)] = []
    ) {
        self.providerName = providerName
        self.name = name
        self.type = type
        self.certificates = certificates
        self.status = status
        self.statusStartingTime = statusStartingTime
        self.additionalServiceInformation = additionalServiceInformation
        self.qualifications = qualifications
        let entries = (history.filter { $0.start < statusStartingTime } + [(status, statusStartingTime)])
            .sorted { $0.start < $1.start }
        periods = entries.enumerated().map { index, entry in
            TrustServiceStatusPeriod(
                status: entry.status,
                start: entry.start,
                end: index + 1 < entries.count ? entries[index + 1].start : nil
            )
        }
    }

    /// The status at `date` from the history, or nil before the first known entry.
    public func status(at date: Date) -> TrustServiceStatus? { periods.last { $0.contains(date) }?.status }

    /// The periods in which the service was granted.
    public var grantedPeriods: [TrustServiceStatusPeriod] { periods.filter { $0.status == .granted } }
}
