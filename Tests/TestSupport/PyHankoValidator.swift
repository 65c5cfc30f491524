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
