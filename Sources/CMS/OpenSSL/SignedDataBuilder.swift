internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
package import OpenSSLWrappers

/// Builds CMS SignedData around a precomputed content digest, so that bytes, streamed files and
/// keys OpenSSL cannot hold (remote, HSM) all go through one path.
///
/// The SignerInfo carries the signed attributes contentType, signingTime, messageDigest and, for
/// CAdES-BES, ESS signing-certificate-v2 (added by `CMS_add1_signer` with `CMS_CADES`, as
/// `openssl cms -sign -cades` does). A local key signs the attributes with `CMS_SignerInfo_sign`;
/// any other key receives their DER (the SET OF encoding that RFC 5652 5.4 says is signed) and the
/// result is put into the SignerInfo, then checked with `CMS_SignerInfo_verify`.
package enum SignedDataBuilder {
    /// A SignedData whose SignerInfo still waits for its signature (external keys only).
    package struct Pending {
        package let cms: CMSContentInfoHandle
        package let signerInfo: OpaquePointer
        /// The DER of the signed attributes: what the key must sign.
        package let signedAttributes: [UInt8]
        /// The certificate's public key, to check the external signature.
        package let publicKey: EVPKeyHandle
        package let digestAlgorithm: DigestAlgorithm
        /// The scheme the key signs with (RSA-PSS, or the key's default).
        package let scheme: SignatureScheme
    }

    /// The outcome of ``prepare(…)``.
    package enum Prepared {
        /// Signed by OpenSSL with the local key: the DER ContentInfo.
        case finished([UInt8])
        /// Waits for an external signature over `Pending.signedAttributes`.
        case pending(Pending)
    }

    /// Builds the SignedData; signs it when `localKey` is given.
    ///
    /// - Parameters:
    ///   - digest: the content's digest with `digestAlgorithm`.
    ///   - attachedContent: the content to embed, or nil for a detached signature.
    ///   - localKey: the OpenSSL private key, or nil to prepare for an external signature.
    ///   - scheme: the external key's scheme; `.rsaPSS` makes the SignerInfo's algorithm RSASSA-PSS
    ///     (RFC 4056: MGF1 with the same digest, salt as long as the digest). Ignored for local keys.
    package static func prepare(
        digest: [UInt8],
        attachedContent: [UInt8]?,
        certificate: Certificate,
        chain: [Certificate],
        localKey: EVPKeyHandle?,
        format: SignatureFormat,
        digestAlgorithm: DigestAlgorithm,
        signingTime: Date?,
        signingCertificateAttribute: [UInt8]? = nil,
        scheme: SignatureScheme? = nil
    ) throws -> Prepared {
        try checkRequest(digest: digest, format: format, digestAlgorithm: digestAlgorithm)
        let md = try digestAlgorithm.evpMD()
        OpenSSLErrorQueue.clear()
        var flags = UInt32(CMS_PARTIAL | CMS_BINARY)
        if attachedContent == nil { flags |= UInt32(CMS_DETACHED) }
        guard let raw = CMS_sign(nil, nil, nil, nil, flags) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not create a CMS SignedData structure")
        }
        let cms = CMSContentInfoHandle(takingOwnershipOf: raw)
        let signerKey = try localKey ?? publicKey(of: certificate)
        var signerFlags = UInt32(CMS_PARTIAL | CMS_BINARY | CMS_NOSMIMECAP)
        if format == .cadesBES && signingCertificateAttribute == nil { signerFlags |= UInt32(CMS_CADES) }
        let signerInfo = try addSigner(
            to: cms,
            certificate: certificate,
            key: signerKey,
            md: md,
            flags: signerFlags,
            digestAlgorithm: digestAlgorithm
        )
        if localKey == nil, scheme == .rsaPSS { try setPSSAlgorithm(signerInfo, digestAlgorithm: digestAlgorithm) }
        for issuer in chain where CMS_add1_cert(cms.pointer, issuer.handle.pointer) == 0 {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not add the chain certificate '\(issuer.subject)'")
        }
        try addAttributes(signerInfo, digest: digest, signingTime: signingTime)
        if format == .cadesBES, let signingCertificateAttribute {
            try addSigningCertificate(signingCertificateAttribute, to: signerInfo)
        }
        if let attachedContent { try embed(attachedContent, in: cms) }

        if localKey != nil {
            guard CMS_SignerInfo_sign(signerInfo) == 1 else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "OpenSSL could not sign the CMS signed attributes")
            }
            return .finished(try cms.derBytes())
        }
        return .pending(
            Pending(
                cms: cms,
                signerInfo: signerInfo,
                signedAttributes: try signedAttributesDER(signerInfo),
                publicKey: signerKey,
                digestAlgorithm: digestAlgorithm,
                scheme: scheme ?? SignatureScheme.default(for: certificate.publicKeyAlgorithm)
            )
        )
    }

    /// Refuses a digest of the wrong length and a format this builder does not make.
    private static func checkRequest(digest: [UInt8], format: SignatureFormat, digestAlgorithm: DigestAlgorithm) throws
    {
        try digestAlgorithm.checkLength(of: digest)
        guard format == .cms || format == .cadesBES else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "signature format '\(format)' is not supported; use cms or cades"
            )
        }
    }

    /// The certificate's public key, which stands for a key OpenSSL cannot hold: `CMS_add1_signer`
    /// only compares the public halves (`X509_check_private_key`), and the signature is added later.
    private static func publicKey(of certificate: Certificate) throws -> EVPKeyHandle {
        guard let publicKey = X509_get_pubkey(certificate.handle.pointer) else {
            throw OpenSSLErrorQueue.error(.unsupportedAlgorithm, "the signer certificate's public key cannot be read")
        }
        return EVPKeyHandle(takingOwnershipOf: publicKey)
    }

    /// Adds the signer's SignerInfo (`CMS_add1_signer`).
    /// - Throws: `.keyCertificateMismatch` when the key is not the certificate's; `.unsupportedAlgorithm`
    ///   when OpenSSL cannot sign this digest with this key.
    private static func addSigner(
        to cms: CMSContentInfoHandle,
        certificate: Certificate,
        key: EVPKeyHandle,
        md: OpaquePointer,
        flags: UInt32,
        digestAlgorithm: DigestAlgorithm
    ) throws -> OpaquePointer {
        if let signerInfo = CMS_add1_signer(cms.pointer, certificate.handle.pointer, key.pointer, md, flags) {
            return signerInfo
        }
        let entries = OpenSSLErrorQueue.drainEntries()
        if entries.contains(where: {
            $0.library == ERR_LIB_CMS && $0.reason == CMS_R_PRIVATE_KEY_DOES_NOT_MATCH_CERTIFICATE
        }) {
            throw CertificateProviderError(
                .keyCertificateMismatch,
                "the signing key does not belong to the certificate '\(certificate.subject)'",
                openSSLErrors: entries.map(\.text)
            )
        }
        throw CertificateProviderError(
            .unsupportedAlgorithm,
            "OpenSSL cannot sign \(digestAlgorithm.displayName) digests with a \(certificate.publicKeyAlgorithm) key",
            openSSLErrors: entries.map(\.text)
        )
    }

    /// Puts an external signature into a pending SignerInfo, checks it, and encodes the result.
    /// - Throws: `.cryptoFailure` when the signature does not verify with the certificate's key.
    package static func finish(_ pending: Pending, signature: [UInt8]) throws -> [UInt8] {
        guard verifies(signature, pending) else {
            throw OpenSSLErrorQueue.error(
                .cryptoFailure,
                "the signing key returned a signature that does not verify with the signer certificate"
            )
        }
        return try store(signature, in: pending)
    }

    /// Whether `signature` verifies over the pending SignedData's signed attributes with its
    /// certificate's key and scheme, as a CMS verifier will check it.
    package static func verifies(_ signature: [UInt8], _ pending: Pending) -> Bool {
        isValid(
            signature,
            over: pending.signedAttributes,
            publicKey: pending.publicKey,
            digestAlgorithm: pending.digestAlgorithm,
            pss: pending.scheme == .rsaPSS
        )
    }

    /// Puts a signature the caller has checked with ``verifies(_:_:)`` into the SignerInfo and
    /// returns the DER ContentInfo.
    /// - Throws: `.cryptoFailure` when OpenSSL cannot store or encode it.
    package static func store(_ signature: [UInt8], in pending: Pending) throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        guard !signature.isEmpty, signature.count <= Int(Int32.max),
            let slot = CMS_SignerInfo_get0_signature(pending.signerInfo),
            ASN1_STRING_set(slot, signature, Int32(signature.count)) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not store the key's signature in the CMS structure")
        }
        return try pending.cms.derBytes()
    }

    /// Checks an external signature with the certificate's key (PKCS#1 v1.5, PSS or ECDSA), as a CMS
    /// verifier will.
    private static func isValid(
        _ signature: [UInt8],
        over data: [UInt8],
        publicKey: EVPKeyHandle,
        digestAlgorithm: DigestAlgorithm,
        pss: Bool
    ) -> Bool {
        guard let md = try? digestAlgorithm.evpMD(), let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, md, nil, publicKey.pointer) == 1 else { return false }
        if pss {
            guard let keyContext else { return false }
            do { try RSAPadding.configure(keyContext, pss: true, md: md) } catch { return false }
        }
        return EVP_DigestVerify(context, signature, signature.count, data, data.count) == 1
    }

    /// Makes the SignerInfo's signature algorithm RSASSA-PSS (RFC 4056) with `digestAlgorithm`, MGF1
    /// with the same digest and a salt as long as the digest, encoded by OpenSSL's RSA_PSS_PARAMS.
    private static func setPSSAlgorithm(_ signerInfo: OpaquePointer, digestAlgorithm: DigestAlgorithm) throws {
        func failure() -> CertificateProviderError {
            OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the RSASSA-PSS parameters")
        }
        guard let parameters = RSA_PSS_PARAMS_new() else { throw failure() }
        defer { RSA_PSS_PARAMS_free(parameters) }
        guard let hash = X509_ALGOR_new() else { throw failure() }
        parameters.pointee.hashAlgorithm = hash
        X509_ALGOR_set_md(hash, try digestAlgorithm.evpMD())
        var hashDER: UnsafeMutablePointer<UInt8>?
        let hashLength = i2d_X509_ALGOR(hash, &hashDER)
        guard hashLength > 0, let hashDER else { throw failure() }
        defer { COpenSSLShims_OPENSSL_free(hashDER) }
        guard let mgf = X509_ALGOR_new() else { throw failure() }
        parameters.pointee.maskGenAlgorithm = mgf
        guard let mgfParameter = ASN1_STRING_new() else { throw failure() }
        guard ASN1_STRING_set(mgfParameter, hashDER, hashLength) == 1,
            X509_ALGOR_set0(mgf, OBJ_nid2obj(NID_mgf1), V_ASN1_SEQUENCE, UnsafeMutableRawPointer(mgfParameter)) == 1
        else {
            ASN1_STRING_free(mgfParameter)
            throw failure()
        }
        guard let salt = ASN1_INTEGER_new() else { throw failure() }
        parameters.pointee.saltLength = salt
        guard ASN1_INTEGER_set(salt, digestAlgorithm.outputByteCount) == 1 else { throw failure() }
        var parametersDER: UnsafeMutablePointer<UInt8>?
        let parametersLength = i2d_RSA_PSS_PARAMS(parameters, &parametersDER)
        guard parametersLength > 0, let parametersDER else { throw failure() }
        defer { COpenSSLShims_OPENSSL_free(parametersDER) }
        var algorithm: UnsafeMutablePointer<X509_ALGOR>?
        CMS_SignerInfo_get0_algs(signerInfo, nil, nil, nil, &algorithm)
        guard let algorithm, let sequence = ASN1_STRING_new() else { throw failure() }
        guard ASN1_STRING_set(sequence, parametersDER, parametersLength) == 1,
            X509_ALGOR_set0(algorithm, OBJ_nid2obj(NID_rsassaPss), V_ASN1_SEQUENCE, UnsafeMutableRawPointer(sequence))
                == 1
        else {
            ASN1_STRING_free(sequence)
            throw failure()
        }
    }

    // MARK: Attributes

    /// Adds contentType, messageDigest and (unless nil: PAdES puts the time in the PDF's /M)
    /// signingTime.
    package static func addAttributes(_ signerInfo: OpaquePointer, digest: [UInt8], signingTime: Date?) throws {
        if let signingTime {
            let time = try CertificateProviderError.convertingOpenSSLErrors { try ASN1TimeHandle(signingTime) }
            defer { withExtendedLifetime(time) {} }
            guard
                CMS_signed_add1_attr_by_NID(
                    signerInfo,
                    NID_pkcs9_signingTime,
                    time.type,
                    UnsafeRawPointer(time.pointer),
                    -1
                )
                    == 1
            else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "could not add the CMS signing time")
            }
        }
        guard
            CMS_signed_add1_attr_by_NID(
                signerInfo,
                NID_pkcs9_contentType,
                V_ASN1_OBJECT,
                UnsafeRawPointer(OBJ_nid2obj(NID_pkcs7_data)),
                -1
            ) == 1,
            CMS_signed_add1_attr_by_NID(
                signerInfo,
                NID_pkcs9_messageDigest,
                V_ASN1_OCTET_STRING,
                digest,
                Int32(digest.count)
            ) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not add the CMS signed attributes")
        }
    }

    /// The DER ESS SigningCertificateV2 (RFC 5035) for `certificate` with `digestAlgorithm`, as
    /// `CMS_add1_signer` with `CMS_CADES` makes it (certificate hash and issuer/serial). Batch
    /// signers compute it once per identity instead of once per signature.
    package static func signingCertificateV2(
        for certificate: Certificate,
        digestAlgorithm: DigestAlgorithm
    ) throws -> [UInt8] {
        let md = try digestAlgorithm.evpMD()
        OpenSSLErrorQueue.clear()
        guard let value = OSSL_ESS_signing_cert_v2_new_init(md, certificate.handle.pointer, nil, 1) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not build the ESS signing-certificate-v2 attribute")
        }
        defer { ESS_SIGNING_CERT_V2_free(value) }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ESS_SIGNING_CERT_V2(value, &output)
        guard length > 0, let output else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the ESS signing-certificate-v2 attribute")
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    package static func addSigningCertificate(_ der: [UInt8], to signerInfo: OpaquePointer) throws {
        guard let sequence = ASN1_STRING_new() else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not allocate an ASN.1 string")
        }
        defer { ASN1_STRING_free(sequence) }
        guard ASN1_STRING_set(sequence, der, Int32(der.count)) == 1,
            CMS_signed_add1_attr_by_NID(signerInfo, NID_id_smime_aa_signingCertificateV2, V_ASN1_SEQUENCE, sequence, -1)
                == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not add the ESS signing-certificate-v2 attribute")
        }
    }

    package static func embed(_ content: [UInt8], in cms: CMSContentInfoHandle) throws {
        guard content.count <= Int(Int32.max), let slot = CMS_get0_content(cms.pointer) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not embed the content in the CMS structure")
        }
        if slot.pointee == nil { slot.pointee = ASN1_OCTET_STRING_new() }
        guard let octets = slot.pointee else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not allocate the embedded content")
        }
        // ASN1_STRING_set copies; a zero-length set still needs a valid pointer.
        let stored =
            content.isEmpty ? ASN1_STRING_set(octets, "", 0) : ASN1_STRING_set(octets, content, Int32(content.count))
        guard stored == 1 else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not embed the content in the CMS structure")
        }
        octets.pointee.flags &= ~Int(ASN1_STRING_FLAG_CONT)
    }

    /// The DER SET OF the signed attributes, as signed and verified by CMS (`PKCS7_ATTR_SIGN` has
    /// the same template as CMS's internal `CMS_Attributes_Sign`: an ordered SET OF Attribute).
    /// - Parameter asReceived: encode them as a verifier hashes them (`PKCS7_ATTR_VERIFY`, the same
    ///   template as CMS's internal `CMS_Attributes_Verify`: the received order under a SET tag,
    ///   definite lengths, so BER signed attributes are hashed in DER form).
    package static func signedAttributesDER(_ signerInfo: OpaquePointer, asReceived: Bool = false) throws -> [UInt8] {
        guard let stack = COpenSSLShims_sk_X509_ATTRIBUTE_new_null() else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not allocate an attribute stack")
        }
        // The stack only borrows the attributes; they stay owned by the SignerInfo.
        defer { COpenSSLShims_sk_X509_ATTRIBUTE_free(stack) }
        for index in 0..<CMS_signed_get_attr_count(signerInfo) {
            guard let attribute = CMS_signed_get_attr(signerInfo, index),
                COpenSSLShims_sk_X509_ATTRIBUTE_push(stack, attribute) > 0
            else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "could not collect the signed attributes")
            }
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = ASN1_item_i2d(stack, &output, asReceived ? PKCS7_ATTR_VERIFY_it() : PKCS7_ATTR_SIGN_it())
        guard length > 0, let output else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the signed attributes")
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
