import CMS
internal import COpenSSL
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// The signature value of one SignerInfo: its algorithms fit together, OpenSSL knows them, and the
/// value verifies over the signed attributes with the signer's key.
///
/// RSA, RSASSA-PSS and ECDSA go through OpenSSL's `CMS_SignerInfo_verify`. Ed25519 and Ed448
/// (RFC 8419) are pure EdDSA, which OpenSSL 3.0's CMS code cannot verify (it passes the SignerInfo's
/// digest to `EVP_DigestVerifyInit`): their value is checked here with `EVP_DigestVerify` and no
/// digest over the signed attributes encoded by OpenSSL's own template, as `CMS_SignerInfo_verify`
/// encodes them (`PKCS7_ATTR_VERIFY` is the same template as CMS's internal
/// `CMS_Attributes_Verify`: the received order under a SET tag, definite lengths, so BER signed
/// attributes are hashed in DER form).
package enum SignerSignatureCheck {
    /// Checks the SignerInfo's algorithms and its signature value; nil when the value verifies.
    ///
    /// - Parameters:
    ///   - signerInfo: the `CMS_SignerInfo`.
    ///   - signer: its certificate.
    ///   - digestNID: the NID of the SignerInfo's `digestAlgorithm`.
    ///   - signatureAlgor: its `signatureAlgorithm`.
    /// - Returns: `.algorithmMismatch` when the signature algorithm's hash is not the digest algorithm
    ///   or the algorithm does not fit the key, `.unsupportedAlgorithm` when OpenSSL cannot check it,
    ///   `.signatureInvalid` when the value does not verify.
    static func failure(
        _ signerInfo: OpaquePointer,
        signer: Certificate,
        digestNID: Int32,
        signatureAlgor: UnsafeMutablePointer<X509_ALGOR>?
    ) -> VerificationFailure? {
        let algorithmNID = SignedDataVerifier.algorithmNID(signatureAlgor)
        let algorithm = SignedDataVerifier.algorithmName(signatureAlgor, long: true) ?? "?"
        guard algorithmNID != NID_undef else {
            return VerificationFailure(
                .unsupportedAlgorithm,
                "the signature algorithm \(algorithm) is not known to OpenSSL: the signature cannot be checked"
            )
        }
        if let mismatch = hashMismatch(digestNID: digestNID, signatureAlgor: signatureAlgor, algorithm: algorithm) {
            return mismatch
        }
        let keyNID = edDSAKeyNID(signer)
        let edDSAAlgorithms: Set<Int32> = [NID_ED25519, NID_ED448]
        if keyNID != nil || edDSAAlgorithms.contains(algorithmNID), keyNID != algorithmNID {
            return VerificationFailure(
                .algorithmMismatch,
                "the signature algorithm \(algorithm) does not fit the signer's \(signer.publicKeyAlgorithm) key"
            )
        }
        let hasSignedAttributes = CMS_signed_get_attr_count(signerInfo) >= 0
        if let keyNID {
            guard hasSignedAttributes else {
                return VerificationFailure(
                    .unsupportedAlgorithm,
                    "the \(OBJ_nid2sn(keyNID).map { String(cString: $0) } ?? "EdDSA") signature has no signed "
                        + "attributes (it signs the content itself), which this verifier does not support"
                )
            }
            return verifyEdDSA(signerInfo, signer: signer)
        }
        guard hasSignedAttributes else { return nil }  // the value is checked with the content digest
        ERR_clear_error()
        guard CMS_SignerInfo_verify(signerInfo) == 1 else {
            let entries = OpenSSLErrorQueue.drainEntries()
            if entries.contains(where: isUnsupported) {
                return VerificationFailure(
                    .unsupportedAlgorithm,
                    "OpenSSL cannot check the signature algorithm \(algorithm) with the signer's "
                        + "\(signer.publicKeyAlgorithm) key: the signature is neither shown valid nor altered",
                    openSSLErrors: entries.map(\.text)
                )
            }
            return VerificationFailure(
                .signatureInvalid,
                "the signature value does not verify with the signer's key: the signature was altered",
                openSSLErrors: entries.map(\.text)
            )
        }
        return nil
    }

    /// RFC 5652 5.3 and RFC 4055: a SignerInfo hashes with one algorithm. A signature algorithm that
    /// names a hash (`sha512WithRSAEncryption`, `ecdsa-with-SHA512`, RSASSA-PSS's hashAlgorithm)
    /// must name the `digestAlgorithm`.
    private static func hashMismatch(
        digestNID: Int32,
        signatureAlgor: UnsafeMutablePointer<X509_ALGOR>?,
        algorithm: String
    ) -> VerificationFailure? {
        guard digestNID != NID_undef, let inner = SignedDataVerifier.signatureDigestNID(signatureAlgor),
            inner != digestNID
        else { return nil }
        let digest = SignedDataVerifier.digestName(nid: digestNID)?.uppercased() ?? "?"
        let hash = SignedDataVerifier.digestName(nid: inner)?.uppercased() ?? "?"
        return VerificationFailure(
            .algorithmMismatch,
            "the signature algorithm \(algorithm) hashes with \(hash) but the signer's digest algorithm is "
                + "\(digest): a signer uses one hash for both"
        )
    }

    /// `NID_ED25519` or `NID_ED448` for an EdDSA signer key, else nil.
    private static func edDSAKeyNID(_ signer: Certificate) -> Int32? {
        guard let key = X509_get0_pubkey(signer.handle.pointer) else {
            ERR_clear_error()
            return nil
        }
        let type = EVP_PKEY_get_base_id(key)
        return type == NID_ED25519 || type == NID_ED448 ? type : nil
    }

    /// RFC 8419 3: the EdDSA value over the DER of the signed attributes, with no digest.
    private static func verifyEdDSA(_ signerInfo: OpaquePointer, signer: Certificate) -> VerificationFailure? {
        guard let attributes = try? SignedDataBuilder.signedAttributesDER(signerInfo, asReceived: true) else {
            return VerificationFailure(
                .malformed,
                "the signed attributes cannot be encoded to check the signature",
                openSSLErrors: OpenSSLErrorQueue.drain()
            )
        }
        guard let key = X509_get0_pubkey(signer.handle.pointer), let context = EVP_MD_CTX_new(),
            let value = CMS_SignerInfo_get0_signature(signerInfo)
        else {
            return VerificationFailure(
                .malformed,
                "the signature value or the signer's key cannot be read",
                openSSLErrors: OpenSSLErrorQueue.drain()
            )
        }
        defer { EVP_MD_CTX_free(context) }
        ERR_clear_error()
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else {
            return VerificationFailure(
                .unsupportedAlgorithm,
                "OpenSSL cannot verify with the signer's \(signer.publicKeyAlgorithm) key",
                openSSLErrors: OpenSSLErrorQueue.drain()
            )
        }
        let verified = attributes.withUnsafeBufferPointer { message in
            EVP_DigestVerify(context, value.pointee.data, Int(value.pointee.length), message.baseAddress, message.count)
        }
        guard verified == 1 else {
            return VerificationFailure(
                .signatureInvalid,
                "the signature value does not verify with the signer's key: the signature was altered",
                openSSLErrors: OpenSSLErrorQueue.drain()
            )
        }
        return nil
    }

    /// Whether an OpenSSL error says an algorithm is missing rather than the value being wrong.
    private static func isUnsupported(_ entry: OpenSSLErrorQueue.Entry) -> Bool {
        switch entry.library {
        case ERR_LIB_EVP:
            return [
                EVP_R_UNSUPPORTED_ALGORITHM, EVP_R_OPERATION_NOT_SUPPORTED_FOR_THIS_KEYTYPE, EVP_R_NO_DEFAULT_DIGEST,
                EVP_R_UNSUPPORTED_PRIVATE_KEY_ALGORITHM,
            ]
            .contains(entry.reason)
        case ERR_LIB_CMS:
            return entry.reason == CMS_R_UNKNOWN_DIGEST_ALGORITHM
        default:
            return false
        }
    }
}
