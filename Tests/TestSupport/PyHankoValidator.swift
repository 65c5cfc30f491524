public import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Testing

/// pyHanko's `validate_pdf_signature`: the second opinion on every signature of a PDF.
public enum PyHankoValidator {
    /// pyHanko's judgement of every signature of the PDF at `path` with `root` trusted: one
    /// `field: SUMMARY` line each (`INTACT:TRUSTED,…`).
    public static func validate(_ path: String, root: Certificate, in directory: TemporaryDirectory) throws -> [String]
    {
        let ca = try directory.write("pyhanko-ca-\(UUID().uuidString).pem", text: root.pemRepresentation)
        let script = """
            import sys
            from pyhanko.keys import load_cert_from_pemder
            from pyhanko.pdf_utils.reader import PdfFileReader
            from pyhanko.sign.validation import validate_pdf_signature
            from pyhanko_certvalidator import ValidationContext
            vc = ValidationContext(trust_roots=[load_cert_from_pemder(sys.argv[1])])
            with open(sys.argv[2], 'rb') as f:
                reader = PdfFileReader(f)
                for sig in reader.embedded_signatures:
                    status = validate_pdf_signature(sig, vc)
                    print(f"{sig.field_name}: {status.summary()}")
            """
        let result = try ExternalTool.run("python3", ["-c", script, ca, path])
        try #require(result.status == 0, "pyHanko: \(result.errorOutput)")
        return result.output.split(separator: "\n").map(String.init)
    }
}

extension PyHankoValidator {
    /// pyHanko's long-term judgement of the PDF at `path`, offline, with nothing but `root` and the
    /// document's own DSS: fetching is disabled and revocation is required for every certificate
    /// (`hard-fail`). Lines: `dss CERTS OCSPS CRLS VRI`; with VRI entries, `vri-match FIELD BOOL`
    /// (an entry keyed by the SHA-1 of the signature's `/Contents`); `signature FIELD: SUMMARY` from
    /// `validate_pdf_signature` (a ValidationContext from `DocumentSecurityStore.read_dss(…)
    /// .as_validation_context(…)`); `timestamp FIELD: SUMMARY` from `validate_pdf_timestamp`; and,
    /// with `lta`, `lta FIELD: SUBINDICATION TIME` (EN 319 102-1 §5.6.3, `ades_lta_validation`,
    /// TIME the oldest document timestamp it accepted).
    public static func longTerm(
        _ path: String,
        root: Certificate,
        lta: Bool = false,
        in directory: TemporaryDirectory
    ) throws -> [String] {
        let ca = try directory.write("pyhanko-lt-ca-\(UUID().uuidString).pem", text: root.pemRepresentation)
        let script = """
            import sys, asyncio, hashlib
            from pyhanko.keys import load_cert_from_pemder
            from pyhanko.pdf_utils.reader import PdfFileReader
            from pyhanko.sign.validation import validate_pdf_signature, validate_pdf_timestamp
            from pyhanko.sign.validation.dss import DocumentSecurityStore
            from pyhanko.sign.validation import ades
            from pyhanko.sign.validation.policy_decl import (
                SignatureValidationSpec, PdfSignatureValidationSpec, RevocationInfoGatheringSpec,
                RevinfoOnlineFetchingRule, LocalKnowledge)
            from pyhanko_certvalidator.context import CertValidationPolicySpec
            from pyhanko_certvalidator.policy_decl import (
                CertRevTrustPolicy, RevocationCheckingPolicy, RevocationCheckingRule)
            from pyhanko_certvalidator.registry import SimpleTrustManager
            root = load_cert_from_pemder(sys.argv[1])
            with open(sys.argv[2], 'rb') as f:
                reader = PdfFileReader(f)
                dss = DocumentSecurityStore.read_dss(reader)
                vri = len(dss.vri_entries) if dss.vri_entries else 0
                print(f"dss {len(list(dss.load_certs()))} {len(dss.ocsps)} {len(dss.crls)} {vri}")
                for sig in reader.embedded_regular_signatures if vri else []:
                    key = '/' + hashlib.sha1(bytes(sig.sig_object['/Contents'])).hexdigest().upper()
                    print(f"vri-match {sig.field_name} {key in dss.vri_entries}")
                kwargs = dict(trust_roots=[root], allow_fetching=False, revocation_mode='hard-fail')
                for sig in reader.embedded_regular_signatures:
                    status = validate_pdf_signature(
                        sig, dss.as_validation_context(kwargs),
                        ts_validation_context=dss.as_validation_context(kwargs))
                    print(f"signature {sig.field_name}: {status.summary()} {status.bottom_line}")
                for ts in reader.embedded_timestamp_signatures:
                    status = validate_pdf_timestamp(ts, validation_context=dss.as_validation_context(kwargs))
                    print(f"timestamp {ts.field_name}: {status.summary()} {status.valid and status.trusted}")
                if sys.argv[3] == 'lta':
                    required = RevocationCheckingPolicy(
                        ee_certificate_rule=RevocationCheckingRule.CRL_OR_OCSP_REQUIRED,
                        intermediate_ca_cert_rule=RevocationCheckingRule.CRL_OR_OCSP_REQUIRED)
                    knowledge = LocalKnowledge(
                        known_certs=list(dss.load_certs()),
                        known_ocsps=[], known_crls=[])
                    spec = SignatureValidationSpec(
                        cert_validation_policy=CertValidationPolicySpec(
                            trust_manager=SimpleTrustManager.build(trust_roots=[root]),
                            revinfo_policy=CertRevTrustPolicy(required)),
                        revinfo_gathering_policy=RevocationInfoGatheringSpec(
                            online_fetching_rule=RevinfoOnlineFetchingRule.LOCAL_ONLY))
                    for sig in reader.embedded_regular_signatures:
                        result = asyncio.run(ades.ades_lta_validation(sig, PdfSignatureValidationSpec(spec)))
                        print(f"lta {sig.field_name}: {result.ades_subindic} {result.oldest_evidence_record_timestamp}")
            """
        let result = try ExternalTool.run("python3", ["-c", script, ca, path, lta ? "lta" : "-"])
        try #require(result.status == 0, "pyHanko: \(result.errorOutput)")
        return result.output.split(separator: "\n").map(String.init)
    }
}

extension PyHankoValidator {
    /// pyHanko's ETSI EN 319 102-1 verdict: its indication (`PASSED`, `INDETERMINATE`, `FAILED`) and
    /// sub-indication (nil when passed).
    public struct AdESVerdict: Sendable, Hashable, CustomStringConvertible {
        /// `PASSED`, `INDETERMINATE` or `FAILED`.
        public let indication: String
        /// The standard's name (`HASH_FAILURE`, …), nil when passed.
        public let subIndication: String?
        /// pyHanko's failure message, when it gave one.
        public let message: String?
        /// `INDICATION/SUB (message)`.
        public var description: String {
            indication + (subIndication.map { "/\($0)" } ?? "") + (message.map { " (\($0))" } ?? "")
        }
    }

    /// What pyHanko's `ades_basic_validation` (EN 319 102-1 §5.3) says about a signature:
    /// a detached CMS signature at `signature` over the file at `content`, or, with `content`
    /// nil, every signature of the PDF at `signature` (over its ByteRange digest), in field order.
    /// `root` is the only trust anchor; `at` the validation time (now when nil); with
    /// `revocation`, revocation is required for every certificate and fetched (OCSP, CRL) from the
    /// URLs the certificates name, else it is not checked and nothing is fetched.
    public static func basicADES(
        signature: String,
        content: String?,
        root: Certificate,
        at time: Date? = nil,
        revocation: Bool = false,
        in directory: TemporaryDirectory
    ) throws -> [AdESVerdict] {
        let ca = try directory.write("pyhanko-ades-ca-\(UUID().uuidString).pem", text: root.pemRepresentation)
        let script = """
            import sys, asyncio, json
            from datetime import datetime, timezone
            from asn1crypto import cms
            from pyhanko.keys import load_cert_from_pemder
            from pyhanko.pdf_utils.reader import PdfFileReader
            from pyhanko.sign.validation import ades
            from pyhanko.sign.validation.policy_decl import (
                SignatureValidationSpec, RevocationInfoGatheringSpec, RevinfoOnlineFetchingRule)
            from pyhanko_certvalidator.context import CertValidationPolicySpec
            from pyhanko_certvalidator.ltv.types import ValidationTimingInfo
            from pyhanko_certvalidator.policy_decl import (
                CertRevTrustPolicy, RevocationCheckingPolicy, RevocationCheckingRule)
            from pyhanko_certvalidator.registry import SimpleTrustManager
            ca, path, content, at, revocation = sys.argv[1:6]
            rule = (RevocationCheckingRule.CRL_OR_OCSP_REQUIRED if revocation == 'required'
                    else RevocationCheckingRule.NO_CHECK)
            spec = SignatureValidationSpec(
                cert_validation_policy=CertValidationPolicySpec(
                    trust_manager=SimpleTrustManager.build(trust_roots=[load_cert_from_pemder(ca)]),
                    revinfo_policy=CertRevTrustPolicy(RevocationCheckingPolicy(
                        ee_certificate_rule=rule, intermediate_ca_cert_rule=rule))),
                revinfo_gathering_policy=RevocationInfoGatheringSpec(
                    online_fetching_rule=(RevinfoOnlineFetchingRule.ALWAYS_FETCH if revocation == 'required'
                                          else RevinfoOnlineFetchingRule.LOCAL_ONLY)))
            timing = None
            if at != '-':
                t = datetime.fromisoformat(at)
                timing = ValidationTimingInfo(validation_time=t, best_signature_time=t, point_in_time_validation=True)
            def report(result):
                sub = result.ades_subindic
                status = sub.status.name
                print(json.dumps({'indication': status,
                                  'subIndication': None if status == 'PASSED' else sub.standard_name,
                                  'message': result.failure_msg}))
            if content != '-':
                signed = cms.ContentInfo.load(open(path, 'rb').read())['content']
                from pyhanko.sign.general import get_pyca_cryptography_hash
                from pyhanko.sign.validation.generic_cms import extract_signer_info
                algorithm = extract_signer_info(signed)['digest_algorithm']['algorithm'].native
                h = get_pyca_cryptography_hash(algorithm)
                from cryptography.hazmat.primitives import hashes
                digest = hashes.Hash(h)
                digest.update(open(content, 'rb').read())
                report(asyncio.run(ades.ades_basic_validation(
                    signed, spec, timing_info=timing, raw_digest=digest.finalize())))
            else:
                with open(path, 'rb') as f:
                    reader = PdfFileReader(f)
                    for sig in reader.embedded_regular_signatures:
                        report(asyncio.run(ades.ades_basic_validation(
                            sig.signed_data, spec, timing_info=timing, raw_digest=sig.compute_digest())))
            """
        let iso = time.map { ISO8601DateFormatter().string(from: $0) } ?? "-"
        let result = try ExternalTool.run(
            "python3",
            ["-c", script, ca, signature, content ?? "-", iso, revocation ? "required" : "off"]
        )
        try #require(result.status == 0, "pyHanko ades_basic_validation: \(result.errorOutput)")
        return try result.output.split(separator: "\n").map { line in
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                "pyHanko printed \(line)"
            )
            return AdESVerdict(
                indication: try #require(object["indication"] as? String),
                subIndication: object["subIndication"] as? String,
                message: object["message"] as? String
            )
        }
    }
}
