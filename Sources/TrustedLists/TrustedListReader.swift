import CertificateProviders
import Foundation

/// Reads a parsed, verified list's tree into values: the scheme information, pointers and services
/// (ETSI TS 119 612 v2 element names, all in ``TrustedList/namespace``).
struct TrustedListReader {
    /// The scheme information fields a ``TrustedList`` keeps.
    struct Fields {
        let type: String
        let territory: String
        let sequenceNumber: Int
        let schemeOperatorName: String
        let issued: Date
        let nextUpdate: Date?
    }

    /// What the list calls itself in errors.
    let name: String

    func invalid(_ what: String) -> TrustedListError {
        TrustedListError(.invalidList, "\(name): \(what)")
    }

    func required(_ element: TrustedListXML.Element?, _ path: String) throws -> TrustedListXML.Element {
        guard let element else { throw invalid("it has no \(path)") }
        return element
    }

    /// `SchemeInformation`'s fields.
    func fields(_ root: TrustedListXML.Element) throws -> Fields {
        let info = try required(root.child("SchemeInformation"), "SchemeInformation")
        let type = try required(info.child("TSLType"), "SchemeInformation/TSLType").text
        let territory = try required(info.child("SchemeTerritory"), "SchemeInformation/SchemeTerritory").text
        let sequence = try required(info.child("TSLSequenceNumber"), "SchemeInformation/TSLSequenceNumber").text
        guard let sequenceNumber = Int(sequence) else {
            throw invalid("its TSLSequenceNumber \"\(sequence)\" is not a number")
        }
        let issued = try date(try required(info.child("ListIssueDateTime"), "ListIssueDateTime"), "ListIssueDateTime")
        let next = try info.child("NextUpdate")?.child("dateTime").map { try date($0, "NextUpdate") }
        return Fields(
            type: type,
            territory: territory,
            sequenceNumber: sequenceNumber,
            schemeOperatorName: preferredName(info.child("SchemeOperatorName")),
            issued: issued,
            nextUpdate: next
        )
    }

    /// `PointersToOtherTSL`.
    func pointers(_ root: TrustedListXML.Element) throws -> [TrustedListPointer] {
        let holder = root.child("SchemeInformation")?.child("PointersToOtherTSL")
        return try (holder?.children("OtherTSLPointer") ?? []).map { pointer in
            let location = try required(pointer.child("TSLLocation"), "OtherTSLPointer/TSLLocation").text
            var territory: String?
            var type: String?
            var mimeType: String?
            for other in pointer.child("AdditionalInformation")?.children("OtherInformation") ?? [] {
                for item in other.children {
                    switch item.name {
                    case "SchemeTerritory": territory = item.text
                    case "TSLType": type = item.text
                    case "MimeType": mimeType = item.text
                    default: break
                    }
                }
            }
            guard let territory else { throw invalid("the pointer to \(location) has no SchemeTerritory") }
            let identities = pointer.child("ServiceDigitalIdentities")?.children("ServiceDigitalIdentity") ?? []
            return TrustedListPointer(
                location: location,
                territory: territory,
                type: type,
                mimeType: mimeType,
                signers: try identities.flatMap { try certificates($0) }
            )
        }
    }

    /// Every `TSPService` of every `TrustServiceProvider`, in document order.
    func services(_ root: TrustedListXML.Element) throws -> [TrustService] {
        let providers = root.child("TrustServiceProviderList")?.children("TrustServiceProvider") ?? []
        return try providers.flatMap { provider in
            let providerName = preferredName(provider.child("TSPInformation")?.child("TSPName"))
            let services = provider.child("TSPServices")?.children("TSPService") ?? []
            return try services.map { try service($0, providerName: providerName) }
        }
    }

    private func service(_ element: TrustedListXML.Element, providerName: String) throws -> TrustService {
        let information = try required(element.child("ServiceInformation"), "TSPService/ServiceInformation")
        let name = preferredName(information.child("ServiceName"))
        let entry = try statusEntry(information, service: name)
        let history = try (element.child("ServiceHistory")?.children("ServiceHistoryInstance") ?? []).map {
            try statusEntry($0, service: name)
        }
        let extensions = information.child("ServiceInformationExtensions")?.children("Extension") ?? []
        let additional = extensions.compactMap { $0.child("AdditionalServiceInformation")?.child("URI")?.text }
        let qualifications = extensions.compactMap { $0.child("Qualifications") }
            .flatMap { $0.children("QualificationElement") }
            .map { element in
                TrustServiceQualification(
                    qualifiers: (element.child("Qualifiers")?.children("Qualifier") ?? []).compactMap {
                        $0.attribute("uri")
                    },
                    criteria: criteria(element.child("CriteriaList"))
                )
            }
        return TrustService(
            providerName: providerName,
            name: name,
            type: TrustServiceType(
                try required(information.child("ServiceTypeIdentifier"), "ServiceTypeIdentifier").text
            ),
            certificates: try certificates(
                try required(information.child("ServiceDigitalIdentity"), "ServiceDigitalIdentity of \(name)")
            ),
            status: entry.status,
            statusStartingTime: entry.start,
            additionalServiceInformation: additional,
            qualifications: qualifications,
            history: history
        )
    }

    private func statusEntry(
        _ element: TrustedListXML.Element,
        service: String
    ) throws
        -> (status: TrustServiceStatus, start: Date)
    {
        let status = try required(element.child("ServiceStatus"), "ServiceStatus of \(service)").text
        let start = try required(element.child("StatusStartingTime"), "StatusStartingTime of \(service)")
        return (TrustServiceStatus(status), try date(start, "StatusStartingTime of \(service)"))
    }

    /// A `CriteriaList` (a missing one selects nothing: an empty `atLeastOne`).
    private func criteria(_ list: TrustedListXML.Element?) -> TrustServiceCriteria {
        guard let list else {
            return TrustServiceCriteria(assertion: "atLeastOne", keyUsage: [], sublists: [], unevaluated: [])
        }
        var keyUsage: [[String: Bool]] = []
        var sublists: [TrustServiceCriteria] = []
        var unevaluated: [String] = []
        for child in list.children {
            switch child.name {
            case "KeyUsage":
                var bits: [String: Bool] = [:]
                for bit in child.children("KeyUsageBit") {
                    guard let name = bit.attribute("name") else { continue }
                    bits[name] = bit.text == "true" || bit.text == "1"
                }
                keyUsage.append(bits)
            case "CriteriaList": sublists.append(criteria(child))
            case "Description": break
            default: unevaluated.append(child.name)
            }
        }
        return TrustServiceCriteria(
            assertion: list.attribute("assert") ?? "all",
            keyUsage: keyUsage,
            sublists: sublists,
            unevaluated: unevaluated
        )
    }

    /// The X.509 certificates of a `ServiceDigitalIdentity` (its `DigitalId/X509Certificate`s).
    func certificates(_ identity: TrustedListXML.Element) throws -> [Certificate] {
        try identity.children("DigitalId").compactMap { $0.child("X509Certificate")?.text }.map { text in
            guard let der = Data(base64Encoded: text, options: .ignoreUnknownCharacters),
                let certificate = try? Certificate(derEncoded: [UInt8](der))
            else { throw invalid("an X509Certificate of a digital identity is not a base64 DER certificate") }
            return certificate
        }
    }

    /// The English `Name` of a multilingual name list, else its first; "" when there is none.
    func preferredName(_ holder: TrustedListXML.Element?) -> String {
        let names = holder?.children("Name") ?? []
        return (names.first { $0.attribute("xml:lang") == "en" } ?? names.first)?.text ?? ""
    }

    /// An `xsd:dateTime` (`2026-01-01T00:00:00Z`, fractional seconds and offsets allowed).
    func date(_ element: TrustedListXML.Element, _ what: String) throws -> Date {
        let text = element.text
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        throw invalid("its \(what) \"\(text)\" is not an xsd:dateTime")
    }
}
