public import Foundation
import Testing

/// pyHanko's ETSI TS 119 102-2 bindings (`pyhanko.generated.etsi.ts_11910202`, xsdata classes made
/// from the standard's v1.2.1 schema) reading a validation report back: the parser refuses an
/// element or attribute the schema does not have, or one in the wrong namespace.
public enum PyHankoReport {
    /// What the report says about one signature, as pyHanko's bindings read it.
    public struct SignatureEntry: Sendable, Equatable {
        /// `PASSED`, `INDETERMINATE` or `FAILED`, from the `MainIndication` URI.
        public let indication: String
        /// The sub-indication's name from the `SubIndication` URI, nil without one.
        public let subIndication: String?
        /// `DAIdentifier` (a PDF field's name), nil without one.
        public let documentIdentifier: String?
        /// Whether `DigestAlgAndValue` holds the SHA-256 of `ds:SignatureValue` (nil without them).
        public let digestMatchesSignatureValue: Bool?
        /// The DER of the validation object `SignerInformation/SignerCertificate` names (nil
        /// without SignerInformation, empty when the reference names no object).
        public let signerCertificate: Data?
        /// `ValidationTime` and `BestSignatureTime/POETime`, as written.
        public let validationTime: String
        /// The best signature time, as written.
        public let bestSignatureTime: String?
    }

    /// Every `SignatureValidationReport` of the report at `path`, in order.
    public static func read(_ path: String) throws -> [SignatureEntry] {
        let result = try ExternalTool.run("python3", ["-c", script, path])
        try #require(result.status == 0, "pyHanko's TS 119 102-2 parser: \(result.errorOutput)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]])
        return rows.map { row in
            SignatureEntry(
                indication: row["indication"] as? String ?? "?",
                subIndication: row["subIndication"] as? String,
                documentIdentifier: row["daIdentifier"] as? String,
                digestMatchesSignatureValue: row["digestMatches"] as? Bool,
                signerCertificate: (row["signerCertificate"] as? String).flatMap { Data(base64Encoded: $0) },
                validationTime: row["validationTime"] as? String ?? "",
                bestSignatureTime: row["bestSignatureTime"] as? String
            )
        }
    }

    private static let script = """
        import sys, json, hashlib, base64, warnings
        warnings.simplefilter('ignore')
        from xsdata.formats.dataclass.parsers import XmlParser
        from xsdata.formats.dataclass.parsers.config import ParserConfig
        from pyhanko.generated.etsi.ts_11910202 import ValidationReport
        parser = XmlParser(config=ParserConfig(fail_on_unknown_properties=True,
                                               fail_on_unknown_attributes=True))
        from pathlib import Path
        report = parser.from_path(Path(sys.argv[1]), ValidationReport)
        objects = {}
        if report.signature_validation_objects is not None:
            for vo in report.signature_validation_objects.validation_object:
                rep = vo.validation_object_representation
                objects[vo.id] = base64.b64encode(rep.base64).decode() if rep and rep.base64 else ''
        main = {'urn:etsi:019102:mainindication:total-passed': 'PASSED',
                'urn:etsi:019102:mainindication:total-failed': 'FAILED',
                'urn:etsi:019102:mainindication:indeterminate': 'INDETERMINATE'}
        rows = []
        for entry in report.signature_validation_report:
            status = entry.signature_validation_status
            ident = entry.signature_identifier
            row = {'indication': main.get(status.main_indication, status.main_indication)}
            subs = [s.rsplit(':', 1)[-1] for s in status.sub_indication]
            if subs:
                row['subIndication'] = subs[0]
            if ident.daidentifier is not None:
                row['daIdentifier'] = ident.daidentifier
            if ident.digest_alg_and_value is not None and ident.signature_value is not None:
                algorithm = ident.digest_alg_and_value.digest_method.algorithm
                digest = ident.digest_alg_and_value.digest_value.value
                row['digestMatches'] = (algorithm == 'http://www.w3.org/2001/04/xmlenc#sha256'
                    and hashlib.sha256(ident.signature_value.value).digest() == digest)
            if entry.signer_information is not None:
                refs = entry.signer_information.signer_certificate.voreference
                row['signerCertificate'] = objects.get(refs[0], '') if refs else ''
            times = entry.validation_time_info
            row['validationTime'] = times.validation_time.to_datetime().isoformat()
            if times.best_signature_time is not None:
                row['bestSignatureTime'] = times.best_signature_time.poetime.to_datetime().isoformat()
            rows.append(row)
        print(json.dumps(rows))
        """
}
