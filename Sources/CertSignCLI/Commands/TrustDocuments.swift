import CertificateProviders
import Foundation
import TrustedLists

// The documents `trust show --json` prints (field names: the CodingKeys; docs/JSON.md lists them).

/// `{"at", "lists": [...]}`.
struct TrustShowDocument: Encodable {
    var at: String
    var lists: [TrustedListDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case at, lists }

    init(_ set: TrustedListSet, at time: Date) {
        at = Format.isoDate(time)
        lists = set.lists.map { TrustedListDocument($0, at: time) }
    }
}

/// One verified list.
struct TrustedListDocument: Encodable {
    var name: String
    var listOfTheLists: Bool
    var territory: String
    var sequenceNumber: Int
    var issued: String
    var nextUpdate: String
    var signer: String
    var pointers: [TrustedListPointerDocument]
    var services: [TrustServiceDocument]
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, listOfTheLists, territory, sequenceNumber, issued, nextUpdate, signer, pointers, services
    }

    init(_ list: TrustedList, at time: Date) {
        name = list.name
        listOfTheLists = list.isListOfTheLists
        territory = list.territory
        sequenceNumber = list.sequenceNumber
        issued = Format.isoDate(list.issued)
        nextUpdate = Format.isoDate(list.nextUpdate)
        signer = list.signer.subject
        pointers = list.pointers.filter(\.isXML).map {
            TrustedListPointerDocument(
                territory: $0.territory,
                location: $0.location,
                signers: $0.signers.map(\.subject)
            )
        }
        services = list.services.map { TrustServiceDocument($0, at: time) }
    }
}

/// A LOTL's pointer to a TL.
struct TrustedListPointerDocument: Encodable {
    var territory: String
    var location: String
    var signers: [String]
    enum CodingKeys: String, CodingKey, CaseIterable { case territory, location, signers }
}

/// One service: its status at the time asked, and its history.
struct TrustServiceDocument: Encodable {
    var provider: String
    var name: String
    var type: String
    var typeURI: String
    /// The status at the time asked (`granted`, `withdrawn`, …; `unlisted` before its first entry).
    var status: String
    var currentStatus: String
    var certificates: [String]
    var history: [TrustServicePeriodDocument]
    enum CodingKeys: String, CodingKey, CaseIterable {
        case provider, name, type, typeURI, status, currentStatus, certificates, history
    }

    init(_ service: TrustService, at time: Date) {
        provider = service.providerName
        name = service.name
        type = service.type.shortName
        typeURI = service.type.uri
        status = service.status(at: time)?.description ?? "unlisted"
        currentStatus = service.status.description
        certificates = service.certificates.map(\.subject)
        history = service.periods.map {
            TrustServicePeriodDocument(
                status: $0.status.description,
                from: Format.isoDate($0.start),
                until: $0.end.map(Format.isoDate)
            )
        }
    }
}

/// One span of a service's status.
struct TrustServicePeriodDocument: Encodable {
    var status: String
    var from: String
    var until: String?
    enum CodingKeys: String, CodingKey, CaseIterable { case status, from, until }
}

/// One signer's qualification in `verify --json` with `--trusted-list` (`qualifications`).
struct QualificationDocument: Encodable, Sendable {
    /// The signer's position, from 1.
    var signer: Int
    /// `QESig`, `QESeal`, `AdESig-QC`, `AdESeal-QC`, `AdESig`, `AdESeal` or `INDETERMINATE`.
    var level: String
    var reason: String
    /// The CA/QC service that decided it, when one did.
    var service: String?
    /// Whether the signer's valid timestamp is by a QTST service granted at its time (absent: no timestamp).
    var timestampQualified: Bool?
    var timestampService: String?
    /// The trusted-list service whose certificate ends the signer's chain.
    var anchor: TrustServiceReferenceDocument?
    /// The trusted-list service whose certificate is the timestamp's TSA's, when one is.
    var timestampAnchor: TrustServiceReferenceDocument?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case signer, level, reason, service, timestampQualified, timestampService, anchor, timestampAnchor
    }
}

/// A trusted-list service that anchored a chain: `{"service", "type", "typeURI", "territory", "list"}`.
struct TrustServiceReferenceDocument: Encodable, Sendable {
    var service: String
    var type: String
    var typeURI: String
    /// The territory of the list the service is in (`BE`).
    var territory: String
    /// The list's name (its file name).
    var list: String
    enum CodingKeys: String, CodingKey, CaseIterable { case service, type, typeURI, territory, list }

    init(_ service: TrustService, in list: TrustedList) {
        self.service = service.name
        type = service.type.shortName
        typeURI = service.type.uri
        territory = list.territory
        self.list = list.name
    }

    /// `"NAME" (TYPE, TERRITORY, LIST)`.
    var text: String {
        "\"\(Format.printable(service))\" (\(type), \(Format.printable(territory)), \(Format.printable(list)))"
    }
}
