import CertificateProvidersTesting
import Foundation
import Testing

/// Independent checks of long-term CAdES signatures in Python (asn1crypto), written from ETSI
/// EN 319 122-1 and RFC 5940, not from this package's code.
public enum LongTermOracles {
    /// Prints what SignedData (argv[1]) carries: `certificates N`, `crls N`, `ocsp N`, then one
    /// `ocsp-status STATUS` per RFC 5940 entry (asn1crypto parses each OCSPResponse), and writes the
    /// embedded CRLs as PEM to argv[2].
    public static let contents = """
        import sys
        from asn1crypto import cms, ocsp, pem
        signed = cms.ContentInfo.load(open(sys.argv[1], 'rb').read())['content']
        certificates = list(signed['certificates'] or [])
        entries = list(signed['crls'] or [])
        crls = [e.chosen for e in entries if e.name == 'crl']
        others = [e.chosen for e in entries if e.name == 'other']
        responses = [o for o in others if o['other_rev_info_format'].dotted == '1.3.6.1.5.5.7.16.2']
        print('certificates', len(certificates))
        print('crls', len(crls))
        print('ocsp', len(responses))
        for other in responses:
            response = ocsp.OCSPResponse.load(other['other_rev_info'].dump())
            basic = response['response_bytes']['response'].parsed
            for single in basic['tbs_response_data']['responses']:
                print('ocsp-status', response['response_status'].native, single['cert_status'].name)
        with open(sys.argv[2], 'wb') as out:
            for crl in crls:
                out.write(pem.armor('X509 CRL', crl.dump()))
        """

    /// Recomputes the ats-hash-index-v3 and the message imprint of the last archive-time-stamp-v3
    /// of SignerInfo 0 of argv[1] over the detached document argv[2] (EN 319 122-1 §5.5.3), and
    /// prints `index-match`, `imprint-match`, `algorithm-written`, `archive-timestamps N`.
    public static let archiveTimestamp = """
        import sys, hashlib
        from asn1crypto import cms, core, algos, tsp
        class Hashes(core.SequenceOf):
            _child_spec = core.OctetString
        class Index(core.Sequence):
            _fields = [('algorithm', algos.DigestAlgorithm), ('certificates', Hashes), ('crls', Hashes),
                       ('unsigned_attrs', Hashes)]
        class Children(core.SequenceOf):
            _child_spec = core.Any
        ATS, INDEX = '0.4.0.1733.2.4', '0.4.0.19122.1.5'
        info = cms.ContentInfo.load(open(sys.argv[1], 'rb').read())
        document = open(sys.argv[2], 'rb').read()
        signed = info['content']
        signer = signed['signer_infos'][0]
        attributes = list(signer['unsigned_attrs'])
        archives = [i for i, a in enumerate(attributes) if a['type'].dotted == ATS]
        print('archive-timestamps', len(archives))
        last = archives[-1]
        token = cms.ContentInfo.load(attributes[last]['values'][0].dump())
        token_signer = token['content']['signer_infos'][0]
        raw_index = [a for a in token_signer['unsigned_attrs'] if a['type'].dotted == INDEX][0]['values'][0].dump()
        index = Index.load(raw_index)
        print('algorithm-written', len(Children.load(raw_index)) == 4)
        name = index['algorithm']['algorithm'].native
        h = lambda data: hashlib.new(name, data).digest()
        certificates = [h(c.dump()) for c in (signed['certificates'] or [])]
        crls = [h(c.dump()) for c in (signed['crls'] or [])]
        unsigned = [h(a['type'].dump() + v.dump()) for i, a in enumerate(attributes) if i != last for v in a['values']]
        same = lambda mine, theirs: sorted(mine) == sorted(x.native for x in theirs)
        print('index-match', same(certificates, index['certificates']) and same(crls, index['crls'])
              and same(unsigned, index['unsigned_attrs']))
        data = (signed['encap_content_info']['content_type'].dump() + h(document) + signer['version'].dump()
                + signer['sid'].dump() + signer['digest_algorithm'].dump() + signer['signed_attrs'].dump()
                + signer['signature_algorithm'].dump() + signer['signature'].dump() + raw_index)
        tst = token['content']['encap_content_info']['content'].parsed
        print('imprint-match', tst['message_imprint']['hashed_message'].native == h(data))
        """

    /// Runs one of the scripts.
    public static func run(_ script: String, _ arguments: [String]) throws -> ExternalTool.Result {
        let result = try ExternalTool.run("python3", ["-c", script] + arguments)
        try #require(result.succeeded, "python3 (asn1crypto; run `make deps`): \(result.errorOutput)")
        return result
    }
}
