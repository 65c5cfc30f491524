public import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Testing

/// CMS signatures other tools write, made by Python (`asn1crypto` for the structure, `cryptography`
/// for the signature value) and the openssl command line, and pyHanko's verdict on them.
public enum CMSInteropFixtures {
    /// Builds a detached SignedData over `content` (signed attributes: contentType, messageDigest,
    /// ESS signing-certificate-v2, in DER order) with `mode`:
    /// - `ed25519` / `ed448`: pure EdDSA (RFC 8419) over the DER signed attributes, SHA-512 digest;
    /// - `ed448-shake256`: Ed448 with the digest RFC 8419 gives it, SHAKE256 at 512 bits;
    /// - `ed25519-content`: Ed25519 over the content itself, without signed attributes;
    /// - `matched-rsa`: sha256WithRSAEncryption, SHA-256 digest (the control);
    /// - `mixed-rsa` / `mixed-ecdsa`: SHA-256 digest and value, labelled sha512WithRSAEncryption /
    ///   ecdsa-with-SHA512 (only the algorithm identifier differs from a valid signature);
    /// - `mixed-pss`: SHA-256 digest, RSASSA-PSS whose parameters (and value) use SHA-512;
    /// - `unknown-algorithm`: the control with the signature algorithm OID 1.2.3.4.5;
    /// - `content-type-mismatch`: the control whose contentType attribute says TSTInfo (the content is
    ///   id-data);
    /// - `duplicate-digest`: the control with a second, identical messageDigest attribute.
    public static func build(
        _ mode: String,
        certificatePath: String,
        keyPath: String,
        content: [UInt8],
        in directory: TemporaryDirectory
    ) throws -> [UInt8] {
        let contentPath = try directory.write("\(mode)-\(UUID().uuidString).bin", content)
        return try run(builder, named: "CMS builder \(mode)", in: directory) { output in
            [mode, certificatePath, keyPath, contentPath, output]
        }
    }

    /// Re-encodes a DER SignedData (one signer) in BER: indefinite lengths for the ContentInfo,
    /// SignedData, its SETs, the embedded content (as a constructed OCTET STRING in 3-byte chunks),
    /// the SignerInfo and its signed attributes; the certificates stay DER (their signatures cover
    /// it). `reorderAttributes` also reverses the signed attributes, which is no longer the order
    /// the signer signed.
    public static func reencodeBER(
        _ der: [UInt8],
        reorderAttributes: Bool = false,
        in directory: TemporaryDirectory
    ) throws -> [UInt8] {
        let input = try directory.write("ber-in-\(UUID().uuidString).p7s", der)
        return try run(berScript, named: "BER re-encoder", in: directory) { output in
            [input, output, reorderAttributes ? "reorder" : "keep"]
        }
    }

    /// Runs a Python `script` with the arguments `arguments(outputPath)` and returns what it wrote there.
    private static func run(
        _ script: String,
        named name: String,
        in directory: TemporaryDirectory,
        arguments: (String) -> [String]
    ) throws -> [UInt8] {
        let file = "out-\(UUID().uuidString).p7s"
        let result = try ExternalTool.run("python3", ["-c", script] + arguments(directory.path(file)))
        try #require(result.status == 0, "\(name): \(result.errorOutput)")
        return try directory.read(file)
    }

    /// pyHanko's verdict (`async_validate_detached_cms` with `content`, or
    /// `async_validate_cms_signature` for an attached signature): `VALID` when intact, valid and
    /// trusted under `root`, else `intact=… valid=… trusted=…` or `error …`.
    public static func pyhankoVerdict(
        _ signature: [UInt8],
        content: [UInt8]?,
        root: Certificate,
        in directory: TemporaryDirectory
    ) throws -> String {
        let name = "pyhanko-\(UUID().uuidString)"
        let ca = try directory.write("\(name)-ca.pem", text: root.pemRepresentation)
        let signaturePath = try directory.write("\(name).p7s", signature)
        var arguments = ["-c", pyhankoScript, ca, signaturePath]
        if let content { arguments.append(try directory.write("\(name).bin", content)) }
        let result = try ExternalTool.run("python3", arguments)
        try #require(result.status == 0, "pyHanko: \(result.errorOutput)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static let builder = """
        import sys, hashlib
        from asn1crypto import cms, x509, algos, tsp, pem
        from cryptography.hazmat.primitives import serialization, hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding
        mode, cert_path, key_path, content_path, out_path = sys.argv[1:6]
        data = open(cert_path, 'rb').read()
        if pem.detect(data):
            _, _, data = pem.unarmor(data)
        cert = x509.Certificate.load(data)
        key = serialization.load_pem_private_key(open(key_path, 'rb').read(), None)
        digest = {'ed25519': 'sha512', 'ed25519-content': 'sha512', 'ed448': 'sha512',
                  'ed448-shake256': 'shake256'}.get(mode, 'sha256')
        content = open(content_path, 'rb').read()
        message_digest = hashlib.shake_256(content).digest(64) if digest == 'shake256' else \
            hashlib.new(digest, content).digest()
        attrs = [
            cms.CMSAttribute({'type': 'content_type', 'values': ['data']}),
            cms.CMSAttribute({'type': 'message_digest', 'values': [message_digest]}),
            cms.CMSAttribute({'type': 'signing_certificate_v2', 'values': [
                tsp.SigningCertificateV2({'certs': [{'cert_hash': hashlib.sha256(cert.dump()).digest()}]})]}),
        ]
        if mode == 'content-type-mismatch':
            attrs[0] = cms.CMSAttribute({'type': 'content_type', 'values': ['tst_info']})
        if mode == 'duplicate-digest':
            attrs.append(cms.CMSAttribute({'type': 'message_digest', 'values': [message_digest]}))
        attrs.sort(key=lambda a: a.dump())
        signed_attrs = cms.CMSAttributes(attrs)
        tbs = signed_attrs.dump()
        if mode in ('ed25519', 'ed448', 'ed448-shake256', 'ed25519-content'):
            value, algorithm = key.sign(tbs), {'algorithm': mode.split('-')[0]}
        elif mode in ('matched-rsa', 'unknown-algorithm', 'content-type-mismatch', 'duplicate-digest'):
            value = key.sign(tbs, padding.PKCS1v15(), hashes.SHA256())
            algorithm = {'algorithm': '1.2.3.4.5' if mode == 'unknown-algorithm' else 'sha256_rsa'}
        elif mode == 'mixed-rsa':
            value, algorithm = key.sign(tbs, padding.PKCS1v15(), hashes.SHA256()), {'algorithm': 'sha512_rsa'}
        elif mode == 'mixed-ecdsa':
            value, algorithm = key.sign(tbs, ec.ECDSA(hashes.SHA256())), {'algorithm': 'sha512_ecdsa'}
        elif mode == 'mixed-pss':
            value = key.sign(tbs, padding.PSS(padding.MGF1(hashes.SHA512()), 64), hashes.SHA512())
            algorithm = {'algorithm': 'rsassa_pss', 'parameters': algos.RSASSAPSSParams({
                'hash_algorithm': {'algorithm': 'sha512'},
                'mask_gen_algorithm': {'algorithm': 'mgf1', 'parameters': {'algorithm': 'sha512'}},
                'salt_length': 64})}
        else:
            raise SystemExit('unknown mode ' + mode)
        if mode == 'ed25519-content':
            # RFC 8419 without signed attributes: the value signs the content itself.
            signed_attrs, value, algorithm = None, key.sign(content), {'algorithm': 'ed25519'}
        signer_info = cms.SignerInfo({
            'version': 'v1',
            'sid': cms.SignerIdentifier({'issuer_and_serial_number': cms.IssuerAndSerialNumber({
                'issuer': cert.issuer, 'serial_number': cert.serial_number})}),
            'digest_algorithm': {'algorithm': digest},
            'signed_attrs': signed_attrs,
            'signature_algorithm': algorithm,
            'signature': value,
        })
        signed_data = cms.SignedData({
            'version': 'v1',
            'digest_algorithms': [{'algorithm': digest}],
            'encap_content_info': {'content_type': 'data'},
            'certificates': [cert],
            'signer_infos': [signer_info],
        })
        open(out_path, 'wb').write(cms.ContentInfo({'content_type': 'signed_data', 'content': signed_data}).dump())
        """

    private static let berScript = """
        import sys
        from asn1crypto import cms, core
        def indefinite(identifier, parts):
            return identifier + b'\\x80' + b''.join(parts) + b'\\x00\\x00'
        info = cms.ContentInfo.load(open(sys.argv[1], 'rb').read())
        sd = info['content']
        si = sd['signer_infos'][0]
        attrs = [a.dump() for a in si['signed_attrs']]
        if sys.argv[3] == 'reorder':
            attrs.reverse()
        si_parts = [si['version'].dump(), si['sid'].dump(), si['digest_algorithm'].dump(),
                    indefinite(b'\\xa0', attrs), si['signature_algorithm'].dump(), si['signature'].dump()]
        if si['unsigned_attrs'].native is not None:
            si_parts.append(si['unsigned_attrs'].dump())
        eci = sd['encap_content_info']
        eci_parts = [eci['content_type'].dump()]
        if eci['content'].native is not None:
            octets = eci['content'].native
            chunks = [core.OctetString(octets[i:i + 3]).dump() for i in range(0, len(octets), 3)]
            eci_parts.append(indefinite(b'\\xa0', [indefinite(b'\\x24', chunks)]))
        sd_parts = [sd['version'].dump(), indefinite(b'\\x31', [a.dump() for a in sd['digest_algorithms']]),
                    indefinite(b'\\x30', eci_parts), indefinite(b'\\xa0', [c.dump() for c in sd['certificates']]),
                    indefinite(b'\\x31', [indefinite(b'\\x30', si_parts)])]
        out = indefinite(b'\\x30', [info['content_type'].dump(), indefinite(b'\\xa0', [indefinite(b'\\x30', sd_parts)])])
        open(sys.argv[2], 'wb').write(out)
        """

    private static let pyhankoScript = """
        import sys, asyncio, logging
        logging.disable(logging.CRITICAL)
        from asn1crypto import cms
        from pyhanko.keys import load_cert_from_pemder
        from pyhanko.sign.validation.generic_cms import async_validate_detached_cms, async_validate_cms_signature
        from pyhanko.sign.validation.status import StandardCMSSignatureStatus
        from pyhanko_certvalidator import ValidationContext
        vc = ValidationContext(trust_roots=[load_cert_from_pemder(sys.argv[1])])
        try:
            sd = cms.ContentInfo.load(open(sys.argv[2], 'rb').read(), strict=False)['content']
            if len(sys.argv) > 3:
                status = asyncio.run(async_validate_detached_cms(open(sys.argv[3], 'rb').read(), sd,
                                                                 signer_validation_context=vc))
            else:
                status = asyncio.run(async_validate_cms_signature(sd, StandardCMSSignatureStatus,
                                                                  validation_context=vc))
            if status.intact and status.valid and status.trusted:
                print('VALID')
            else:
                print(f'intact={status.intact} valid={status.valid} trusted={status.trusted}')
        except Exception as e:
            print(f'error {type(e).__name__}: {e}')
        """
}
