import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

@Suite("SignedDataLimits: a SignedData over the documented counts is refused before it is read")
struct SignedDataLimitsTests {
    /// Writes, with python's `cryptography`, a detached SignedData over `content` by a self-signed
    /// P-256 leaf with `signers` SignerInfos and `extraCertificates` more certificates (copies of the
    /// leaf with other serial numbers); prints the leaf's PEM.
    static let script = """
        import sys, datetime
        from cryptography import x509
        from cryptography.x509.oid import NameOID
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.serialization import pkcs7
        out, signers, extra = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'limits')])
        now = datetime.datetime.now(datetime.timezone.utc)
        leaf = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(0x7000000000000000).not_valid_before(now - datetime.timedelta(days=1))
                .not_valid_after(now + datetime.timedelta(days=30)).sign(key, hashes.SHA256()))
        der = leaf.public_bytes(serialization.Encoding.DER)
        serial = (0x7000000000000000).to_bytes(8, 'big')
        builder = pkcs7.PKCS7SignatureBuilder().set_data(b'limits')
        for _ in range(signers):
            builder = builder.add_signer(leaf, key, hashes.SHA256())
        for index in range(extra):
            copy = der.replace(serial, (0x7100000000000000 + index).to_bytes(8, 'big'), 1)
            builder = builder.add_certificate(x509.load_der_x509_certificate(copy))
        with open(out, 'wb') as f:
            f.write(builder.sign(serialization.Encoding.DER, [pkcs7.PKCS7Options.DetachedSignature]))
        print(leaf.public_bytes(serialization.Encoding.PEM).decode())
        """

    func make(signers: Int = 1, extraCertificates: Int) throws -> (signature: [UInt8], leaf: Certificate) {
        let directory = try TemporaryDirectory()
        let path = directory.path("signature.der")
        let result = try ExternalTool.run(
            "python3",
            ["-c", Self.script, path, String(signers), String(extraCertificates)]
        ).requireSuccess()
        let signature = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        return (signature, try Certificate(pemEncoded: result.output))
    }

    @Test("one certificate over the limit is limitExceeded, naming the count and the limit")
    func certificates() throws {
        let (signature, leaf) = try make(extraCertificates: SignedDataLimits.maximumCertificates)
        let result = CMSVerifier.verify(signature: signature, content: Array("limits".utf8), trustAnchors: [leaf])
        #expect(result.failure?.code == .limitExceeded, "\(result)")
        #expect(
            result.failure?.reason.contains(
                "\(SignedDataLimits.maximumCertificates + 1) certificates; at most \(SignedDataLimits.maximumCertificates)"
            ) == true,
            "\(result)"
        )
        // The same signature with a few extra certificates verifies: the limit is what refused it.
        let (small, smallLeaf) = try make(extraCertificates: 20)
        let accepted = CMSVerifier.verify(signature: small, content: Array("limits".utf8), trustAnchors: [smallLeaf])
        #expect(accepted.isValid, "\(accepted)")
    }

    @Test("one signer over the limit is limitExceeded")
    func signers() throws {
        let (signature, leaf) = try make(signers: SignedDataLimits.maximumSigners + 1, extraCertificates: 0)
        let result = CMSVerifier.verify(signature: signature, content: Array("limits".utf8), trustAnchors: [leaf])
        #expect(result.failure?.code == .limitExceeded, "\(result)")
        #expect(result.failure?.reason.contains("\(SignedDataLimits.maximumSigners + 1) signers") == true, "\(result)")
    }
}
