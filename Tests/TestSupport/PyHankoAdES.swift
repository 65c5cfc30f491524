public import CertificateProviders
import CertificateProvidersTesting
public import Foundation
import Testing

/// pyHanko's ETSI EN 319 102-1 processes (`pyhanko.sign.validation.ades`) as a second opinion on a
/// long-term signature at a chosen validation time, offline: nothing but the trust roots and the
/// validation data the signature carries (a CAdES signature's SignedData CRLs and RFC 5940 OCSP
/// entries, a PDF's DSS). Its AdES processes are still incubating in 0.38 and answer
/// INDETERMINATE for some files EN 319 102-1 accepts; the tests print the verdict beside ours.
public enum PyHankoAdES {
    /// What to judge.
    public enum Subject: Sendable {
        /// A detached CMS / CAdES signature over the document at `content`.
        case cms(signature: String, content: String)
        /// Every regular signature of the PDF at `path`.
        case pdf(String)
    }

    /// The process: §5.5 validation with time, or §5.6.3 long-term (PDF only).
    public enum Process: String, Sendable {
        /// `ades_with_time_validation`.
        case withTime = "with-time"
        /// `ades_lta_validation`.
        case lta
    }

    /// pyHanko's sub-indication (`AdESPassed.OK`, `AdESIndeterminate.TRY_LATER`, …), one line per
    /// signature, at `time`, with `crls` (DER or PEM files) known beside the signature's own
    /// validation data; never throws for a verdict, only when pyHanko itself fails to run.
    public static func verdicts(
        _ subject: Subject,
        roots: [Certificate],
        at time: Date,
        process: Process = .withTime,
        crls: [String] = [],
        in directory: TemporaryDirectory
    ) throws -> [String] {
        let rootsFile = try directory.write(
            "pyhanko-ades-roots-\(UUID().uuidString).pem",
            text: roots.map(\.pemRepresentation).joined(separator: "\n")
        )
        let moment = time.formatted(Date.ISO8601FormatStyle())
        let arguments: [String]
        switch subject {
        case .cms(let signature, let content): arguments = ["cms", signature, content]
        case .pdf(let path): arguments = ["pdf", path, "-"]
        }
        let result = try ExternalTool.run(
            "python3",
            ["-c", script, rootsFile, moment, process.rawValue] + arguments + crls
        )
        try #require(result.status == 0, "pyHanko AdES: \(result.errorOutput)")
        return result.output.split(separator: "\n").map(String.init)
    }

    private static let script = """
        import sys, asyncio, hashlib, warnings
        warnings.simplefilter('ignore')
        from datetime import datetime
        from asn1crypto import cms, pem, x509
        from pyhanko.sign.validation import ades
        from pyhanko.sign.validation.policy_decl import (
            SignatureValidationSpec, PdfSignatureValidationSpec, RevocationInfoGatheringSpec,
            RevinfoOnlineFetchingRule, LocalKnowledge)
        from pyhanko_certvalidator.context import CertValidationPolicySpec
        from pyhanko_certvalidator.ltv.types import ValidationTimingInfo
        from pyhanko_certvalidator.revinfo.archival import CRLContainer, OCSPContainer
        from pyhanko_certvalidator.policy_decl import (
            CertRevTrustPolicy, RevocationCheckingPolicy, RevocationCheckingRule)
        from pyhanko_certvalidator.registry import SimpleTrustManager
        roots_file, moment, process, kind, path, content = sys.argv[1:7]
        from asn1crypto import crl as asn1_crl
        given = []
        for name in sys.argv[7:]:
            with open(name, 'rb') as f:
                data = f.read()
            given += [asn1_crl.CertificateList.load(der) for _, _, der in pem.unarmor(data, multiple=True)] \
                if pem.detect(data) else [asn1_crl.CertificateList.load(data)]
        with open(roots_file, 'rb') as f:
            roots = [x509.Certificate.load(der) for _, _, der in pem.unarmor(f.read(), multiple=True)]
        at = datetime.fromisoformat(moment.replace('Z', '+00:00'))
        timing = ValidationTimingInfo(validation_time=at, best_signature_time=at, point_in_time_validation=True)
        def spec(certs, ocsps, crls):
            required = RevocationCheckingPolicy(
                ee_certificate_rule=RevocationCheckingRule.CRL_OR_OCSP_REQUIRED,
                intermediate_ca_cert_rule=RevocationCheckingRule.CRL_OR_OCSP_REQUIRED)
            return SignatureValidationSpec(
                cert_validation_policy=CertValidationPolicySpec(
                    trust_manager=SimpleTrustManager.build(trust_roots=roots),
                    revinfo_policy=CertRevTrustPolicy(required)),
                revinfo_gathering_policy=RevocationInfoGatheringSpec(
                    online_fetching_rule=RevinfoOnlineFetchingRule.LOCAL_ONLY),
                local_knowledge=LocalKnowledge(
                    known_certs=certs,
                    known_ocsps=[c for o in ocsps for c in OCSPContainer.load_multi(o)],
                    known_crls=[CRLContainer(c) for c in crls]))
        def run(coroutine):
            try:
                return str(asyncio.run(coroutine).ades_subindic)
            except Exception as error:
                return f'ERROR {type(error).__name__}: {error}'
        if kind == 'cms':
            with open(path, 'rb') as f:
                signed_data = cms.ContentInfo.load(f.read())['content']
            with open(content, 'rb') as f:
                document = f.read()
            certs = [c.chosen for c in signed_data['certificates'] or []]
            crls, ocsps = [], []
            for choice in signed_data['crls'] or []:
                if choice.name == 'crl':
                    crls.append(choice.chosen)
                elif choice.chosen['other_rev_info_format'].native == 'ocsp_response':
                    ocsps.append(choice.chosen['other_rev_info'])
            algorithm = signed_data['signer_infos'][0]['digest_algorithm']['algorithm'].native
            digest = hashlib.new(algorithm, document).digest()
            print(run(ades.ades_with_time_validation(
                signed_data, spec(certs, ocsps, crls + given), timing_info=timing, raw_digest=digest)))
        else:
            from pyhanko.pdf_utils.reader import PdfFileReader
            from pyhanko.sign.validation.dss import DocumentSecurityStore
            with open(path, 'rb') as f:
                reader = PdfFileReader(f)
                from asn1crypto import ocsp as asn1_ocsp
                from pyhanko.sign.validation.errors import NoDSSFoundError
                try:
                    dss = DocumentSecurityStore.read_dss(reader)
                    certs = list(dss.load_certs())
                    ocsps = [asn1_ocsp.OCSPResponse.load(r.get_object().data) for r in dss.ocsps or []]
                    crls = [asn1_crl.CertificateList.load(r.get_object().data) for r in dss.crls or []]
                except NoDSSFoundError:
                    certs, ocsps, crls = [], [], []
                crls += given
                for sig in reader.embedded_regular_signatures:
                    s = spec(certs, ocsps, crls)
                    if process == 'lta':
                        print(run(ades.ades_lta_validation(sig, PdfSignatureValidationSpec(s), timing_info=timing)))
                    else:
                        print(run(ades.ades_with_time_validation(
                            sig.signed_data, s, timing_info=timing, raw_digest=sig.compute_digest())))
        """
}
