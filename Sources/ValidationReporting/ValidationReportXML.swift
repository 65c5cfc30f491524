import CertificateProviders
import Foundation
import Validation

/// A ``ValidationReport`` written as the XML of ETSI TS 119 102-2 v1.2.1: elements in the
/// standard's order (`SignatureIdentifier`, `ValidationTimeInfo`, `SignerInformation`,
/// `SignatureValidationStatus` per report; then `SignatureValidationObjects`).
struct ValidationReportXML {
    private static let xmlDSig = "http://www.w3.org/2000/09/xmldsig#"
    private static let sha256URI = "http://www.w3.org/2001/04/xmlenc#sha256"
    private static let vr = ValidationReport.namespace
    private static let tsl = "http://uri.etsi.org/02231/v2#"

    private let report: ValidationReport

    init(_ report: ValidationReport) { self.report = report }

    /// The document, serialised.
    func data() throws(ValidationReportError) -> Data {
        let tree = try XMLTree(
            rootName: "ValidationReport",
            rootNamespace: .init(prefix: "vr", uri: Self.vr),
            declaring: [.init(prefix: "ds", uri: Self.xmlDSig)]
                + (report.signatures.contains { !$0.trustServices.isEmpty }
                    ? [.init(prefix: "tsl", uri: Self.tsl)] : [])
        )
        var objects: [(id: String, certificate: Certificate)] = []
        for signature in report.signatures {
            try addReport(signature, to: tree)
            let certificates =
                [signature.signerCertificate].compactMap({ $0 }) + signature.certificates
                + signature.trustServices.compactMap(\.anchor)
            for certificate in certificates {
                let id = Self.objectID(certificate)
                if !objects.contains(where: { $0.id == id }) { objects.append((id, certificate)) }
            }
        }
        if !objects.isEmpty {
            let list = try tree.add("SignatureValidationObjects", in: Self.vr, to: tree.root)
            for object in objects {
                let element = try tree.add("ValidationObject", in: Self.vr, to: list)
                try tree.setAttribute("id", object.id, of: element)
                try tree.add(
                    "ObjectType",
                    in: Self.vr,
                    to: element,
                    text: "urn:etsi:019102:validationObject:certificate"
                )
                let representation = try tree.add("ValidationObjectRepresentation", in: Self.vr, to: element)
                try tree.add(
                    "base64",
                    in: Self.vr,
                    to: representation,
                    text: Data(object.certificate.derRepresentation).base64EncodedString()
                )
            }
        }
        return try tree.serialised()
    }

    /// One `SignatureValidationReport`.
    private func addReport(_ signature: ValidationReport.Signature, to tree: XMLTree) throws(ValidationReportError) {
        let report = try tree.add("SignatureValidationReport", in: Self.vr, to: tree.root)
        let identifier = try tree.add("SignatureIdentifier", in: Self.vr, to: report)
        if !signature.signatureValue.isEmpty {
            let digest = try tree.add("DigestAlgAndValue", in: Self.vr, to: identifier)
            let method = try tree.add("DigestMethod", in: Self.xmlDSig, to: digest)
            try tree.setAttribute("Algorithm", Self.sha256URI, of: method)
            try tree.add(
                "DigestValue",
                in: Self.xmlDSig,
                to: digest,
                text: Data(DigestAlgorithm.sha256.hash(signature.signatureValue)).base64EncodedString()
            )
            try tree.add(
                "SignatureValue",
                in: Self.xmlDSig,
                to: identifier,
                text: Data(signature.signatureValue).base64EncodedString()
            )
        }
        try tree.add("HashOnly", in: Self.vr, to: identifier, text: "false")
        try tree.add("DocHashOnly", in: Self.vr, to: identifier, text: "false")
        if let name = signature.documentIdentifier {
            try tree.add("DAIdentifier", in: Self.vr, to: identifier, text: name)
        }

        let time = try tree.add("ValidationTimeInfo", in: Self.vr, to: report)
        try tree.add("ValidationTime", in: Self.vr, to: time, text: Self.dateTime(signature.validationTime))
        // EN 319 102-1 starts the best signature time at the validation time; a proof of existence
        // moves it earlier. Either way it was established by this validation.
        let best = try tree.add("BestSignatureTime", in: Self.vr, to: time)
        try tree.add(
            "POETime",
            in: Self.vr,
            to: best,
            text: Self.dateTime(signature.bestSignatureTime ?? signature.validationTime)
        )
        try tree.add("TypeOfProof", in: Self.vr, to: best, text: "urn:etsi:019102:poetype:validation")

        if let certificate = signature.signerCertificate {
            let signer = try tree.add("SignerInformation", in: Self.vr, to: report)
            let reference = try tree.add("SignerCertificate", in: Self.vr, to: signer)
            try tree.setAttribute("VOReference", Self.objectID(certificate), of: reference)
            try tree.add("Signer", in: Self.vr, to: signer, text: certificate.subject)
        }

        let status = try tree.add("SignatureValidationStatus", in: Self.vr, to: report)
        try tree.add("MainIndication", in: Self.vr, to: status, text: Self.mainIndication(signature.indication))
        if let sub = signature.subIndication {
            try tree.add("SubIndication", in: Self.vr, to: status, text: "urn:etsi:019102:subindication:\(sub)")
        }
        for service in signature.trustServices { try addTrustService(service, to: status, in: tree) }
    }

    /// One `AssociatedValidationReportData`: the service's certificate as `TrustAnchor`, the service
    /// (its TS 119 612 type, name and territory) as `ReportData`.
    private func addTrustService(
        _ service: ValidationReport.TrustService,
        to status: XMLTree.Element,
        in tree: XMLTree
    ) throws(ValidationReportError) {
        let data = try tree.add("AssociatedValidationReportData", in: Self.vr, to: status)
        if let anchor = service.anchor {
            let reference = try tree.add("TrustAnchor", in: Self.vr, to: data)
            try tree.setAttribute("VOReference", Self.objectID(anchor), of: reference)
        }
        let additional = try tree.add("AdditionalValidationReportData", in: Self.vr, to: data)
        let entry = try tree.add("ReportData", in: Self.vr, to: additional)
        try tree.add("Type", in: Self.vr, to: entry, text: service.purpose.typeURI)
        let value = try tree.add("Value", in: Self.vr, to: entry)
        try tree.add("ServiceTypeIdentifier", in: Self.tsl, to: value, text: service.typeURI)
        try tree.add("ServiceName", in: Self.tsl, to: value, text: service.name)
        try tree.add("SchemeTerritory", in: Self.tsl, to: value, text: service.territory)
    }

    /// The main indication's URI (TS 119 102-2 §5.1.3: a whole signature's TOTAL-PASSED,
    /// TOTAL-FAILED or INDETERMINATE).
    static func mainIndication(_ indication: Indication) -> String {
        switch indication {
        case .passed: "urn:etsi:019102:mainindication:total-passed"
        case .failed: "urn:etsi:019102:mainindication:total-failed"
        case .indeterminate: "urn:etsi:019102:mainindication:indeterminate"
        }
    }

    /// A validation object's identifier: its type and the SHA-256 of its DER, as pyHanko names them.
    static func objectID(_ certificate: Certificate) -> String {
        let digits = Array("0123456789abcdef")
        return "vo-certificate-"
            + String(certificate.sha256Fingerprint.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    /// `xs:dateTime` in UTC, to the second.
    static func dateTime(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0) ?? .gmt))
    }
}
