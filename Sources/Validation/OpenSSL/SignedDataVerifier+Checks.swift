import CMS
internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// The policy checks of ``SignedDataVerifier``'s per-signer pipeline: algorithms and key sizes,
/// the signing purpose, the ESS binding of the signer certificate, its validity and its chain.
extension SignedDataVerifier {
    /// The chain the store built, or why it could not.
    package enum ChainOutcome {
        case success([Certificate])
        case failure(VerificationFailure)
    }

    /// A refused digest or signature algorithm, or a weak signer key.
    static func weakAlgorithm(
        digestNID: Int32,
        digestName name: String?,
        signatureAlgor: UnsafeMutablePointer<X509_ALGOR>?,
        signer: Certificate,
        policy: AlgorithmPolicy
    ) -> VerificationFailure? {
        if let name, policy.refusedDigests.contains(name) {
            return VerificationFailure(
                .weakAlgorithm,
                "the signature uses the message digest \(name.uppercased()), which is no longer secure (collisions "
                    + "can be made)"
            )
        }
        if let nid = signatureDigestNID(signatureAlgor), let inner = digestName(nid: nid),
            policy.refusedDigests.contains(inner)
        {
            let algorithm = algorithmName(signatureAlgor, long: true) ?? inner
            return VerificationFailure(
                .weakAlgorithm,
                "the signature algorithm \(algorithm) uses \(inner.uppercased()), which is no longer secure"
            )
        }
        return weakKey(signer, role: "the signer's", policy: policy)
    }

    package static func weakKey(
        _ certificate: Certificate,
        role: String,
        policy: AlgorithmPolicy
    ) -> VerificationFailure? {
        let algorithm = certificate.publicKeyAlgorithm
        let bits = certificate.publicKeySize
        if algorithm.isRSA, bits < policy.minimumRSAKeyBits {
            return VerificationFailure(
                .weakAlgorithm,
                "\(role) RSA key has \(bits) bits ('\(certificate.subject)'); at least \(policy.minimumRSAKeyBits) "
                    + "are required"
            )
        }
        if algorithm.isEC || algorithm.rawValue == "EC", bits < policy.minimumECKeyBits {
            return VerificationFailure(
                .weakAlgorithm,
                "\(role) \(algorithm) key has \(bits) bits ('\(certificate.subject)'); at least "
                    + "\(policy.minimumECKeyBits) are required"
            )
        }
        return nil
    }

    /// Weak keys and certificate signatures in a verified chain (signer first). The trust anchor at
    /// the end is the caller's choice and is not judged; every certificate below it is.
    package static func weakChainAlgorithm(_ chain: [Certificate], policy: AlgorithmPolicy) -> VerificationFailure? {
        for (index, certificate) in chain.dropLast().enumerated() {
            if index > 0, let weak = weakKey(certificate, role: "an issuing certificate's", policy: policy) {
                return weak
            }
            var digest: Int32 = NID_undef
            guard X509_get_signature_info(certificate.handle.pointer, &digest, nil, nil, nil) == 1 else {
                ERR_clear_error()
                continue
            }
            if let name = digestName(nid: digest), policy.refusedDigests.contains(name) {
                return VerificationFailure(
                    .weakAlgorithm,
                    "the certificate '\(certificate.subject)' is signed with \(name.uppercased()), which is no "
                        + "longer secure"
                )
            }
        }
        return nil
    }

    /// keyUsage (when present) must allow digitalSignature or nonRepudiation; extendedKeyUsage
    /// (when present) must include emailProtection, documentSigning or anyExtendedKeyUsage.
    package static func signingPurposeFailure(_ certificate: Certificate) -> VerificationFailure? {
        if let usage = certificate.keyUsage, usage.isDisjoint(with: [.digitalSignature, .nonRepudiation]) {
            return VerificationFailure(
                .certificateNotForSigning,
                "the signer certificate '\(certificate.subject)' is not meant for signing: its key usage is "
                    + "\(usage.names.joined(separator: ", ")) (digitalSignature or nonRepudiation is needed)"
            )
        }
        let extended = certificate.extendedKeyUsage
        let signing: Set<ExtendedKeyUsage> = [
            .emailProtection, ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.36"), ExtendedKeyUsage(oid: "2.5.29.37.0"),
        ]
        if !extended.isEmpty, signing.isDisjoint(with: extended) {
            return VerificationFailure(
                .certificateNotForSigning,
                "the signer certificate '\(certificate.subject)' is not meant for signing documents: its extended "
                    + "key usage is \(extended.map(\.description).joined(separator: ", ")) (emailProtection, "
                    + "documentSigning or anyExtendedKeyUsage is needed)"
            )
        }
        return nil
    }

    /// Checks ESS signing-certificate(-v2): the signer signed a hash of its own certificate, so a
    /// certificate swapped into the signature (same key or same issuer and serial) is detected.
    /// Only the first ESSCertID(v2) must identify the signer (RFC 5035): later ones (the issuer, …)
    /// are allowed and not required to be present.
    package static func checkESS(_ signerInfo: OpaquePointer, signer: Certificate) -> VerificationFailure? {
        var v1: OpaquePointer?
        var v2: OpaquePointer?
        defer {
            ESS_SIGNING_CERT_free(v1)
            ESS_SIGNING_CERT_V2_free(v2)
        }
        for (nid, isV2) in [(NID_id_smime_aa_signingCertificateV2, true), (NID_id_smime_aa_signingCertificate, false)] {
            guard CMS_signed_get_attr_by_NID(signerInfo, nid, -1) >= 0 else { continue }
            guard let raw = CMS_signed_get0_data_by_OBJ(signerInfo, OBJ_nid2obj(nid), -3, V_ASN1_SEQUENCE),
                let firstOnly = firstCertificateIDOnly(raw.assumingMemoryBound(to: ASN1_STRING.self))
            else {
                return failure(.malformed, "the signing-certificate attribute is damaged")
            }
            firstOnly.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                if isV2 {
                    v2 = d2i_ESS_SIGNING_CERT_V2(nil, &cursor, buffer.count)
                } else {
                    v1 = d2i_ESS_SIGNING_CERT(nil, &cursor, buffer.count)
                }
            }
            if (isV2 ? v2 : v1) == nil { return failure(.malformed, "the signing-certificate attribute is damaged") }
        }
        guard v1 != nil || v2 != nil else { return nil }
        let matches =
            (try? withX509Stack([signer.handle]) { OSSL_ESS_check_signing_certs(v1, v2, $0, 1) == 1 }) ?? false
        guard matches else {
            return failure(
                .certificateSwapped,
                "the certificate in the signature is not the one the signer signed (ESS signing-certificate "
                    + "mismatch): it was swapped"
            )
        }
        return nil
    }

    /// The DER of a SigningCertificate(V2) value reduced to its first ESSCertID(v2), re-encoded by
    /// OpenSSL's generic ASN.1 codec: `SEQUENCE { certs SEQUENCE OF ESSCertID, policies OPTIONAL }`.
    static func firstCertificateIDOnly(_ value: UnsafeMutablePointer<ASN1_STRING>) -> [UInt8]? {
        var cursor = UnsafePointer(value.pointee.data)
        guard let outer = d2i_ASN1_SEQUENCE_ANY(nil, &cursor, Int(value.pointee.length)) else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_sk_ASN1_TYPE_pop_free(outer) }
        guard COpenSSLShims_sk_ASN1_TYPE_num(outer) >= 1, let certs = COpenSSLShims_sk_ASN1_TYPE_value(outer, 0),
            certs.pointee.type == V_ASN1_SEQUENCE, let certsString = certs.pointee.value.sequence
        else { return nil }
        var inner = UnsafePointer(certsString.pointee.data)
        guard let identifiers = d2i_ASN1_SEQUENCE_ANY(nil, &inner, Int(certsString.pointee.length)) else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_sk_ASN1_TYPE_pop_free(identifiers) }
        guard COpenSSLShims_sk_ASN1_TYPE_num(identifiers) >= 1 else { return nil }
        while COpenSSLShims_sk_ASN1_TYPE_num(identifiers) > 1 {
            ASN1_TYPE_free(COpenSSLShims_sk_ASN1_TYPE_pop(identifiers))
        }
        while COpenSSLShims_sk_ASN1_TYPE_num(outer) > 1 { ASN1_TYPE_free(COpenSSLShims_sk_ASN1_TYPE_pop(outer)) }
        guard let reduced = encode({ i2d_ASN1_SEQUENCE_ANY(identifiers, &$0) }),
            ASN1_STRING_set(certsString, reduced, Int32(reduced.count)) == 1
        else { return nil }
        return encode { i2d_ASN1_SEQUENCE_ANY(outer, &$0) }
    }

    package static func encode(_ body: (inout UnsafeMutablePointer<UInt8>?) -> Int32) -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        let length = body(&output)
        guard length > 0, let output else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    package static func validityReason(
        _ certificate: Certificate,
        at date: Date,
        proven: Bool,
        claimed: Date?
    ) -> String {
        let when = proven ? "at the time its signature timestamp proves (\(date))" : "at the validation time \(date)"
        if date < certificate.notValidBefore {
            return
                "the signer certificate '\(certificate.subject)' was not yet valid \(when); it is valid from "
                + "\(certificate.notValidBefore)"
        }
        var reason =
            "the signer certificate '\(certificate.subject)' had expired \(when); it was valid until "
            + "\(certificate.notValidAfter)"
        if let claimed, certificate.isValid(at: claimed), !proven {
            reason +=
                ". The signature claims to be made on \(claimed), but a claimed signing time proves nothing: only a "
                + "trusted signature timestamp does"
        }
        return reason
    }

    package static func verifyChain(
        signer: Certificate,
        untrusted: [Certificate],
        anchors: [Certificate],
        at date: Date,
        proven: Bool
    ) -> ChainOutcome {
        guard let store = X509_STORE_new() else {
            return .failure(failure(.untrustedSigner, "could not create a certificate store"))
        }
        defer { X509_STORE_free(store) }
        for anchor in anchors { _ = X509_STORE_add_cert(store, anchor.handle.pointer) }
        ERR_clear_error()
        guard let context = X509_STORE_CTX_new() else {
            return .failure(failure(.untrustedSigner, "could not create a verification context"))
        }
        defer { X509_STORE_CTX_free(context) }
        let outcome: ChainOutcome? = try? withX509Stack(untrusted.map(\.handle)) { stack in
            guard X509_STORE_CTX_init(context, store, signer.handle.pointer, stack) == 1 else {
                return .failure(failure(.untrustedSigner, "could not start the chain verification"))
            }
            let parameters = X509_STORE_CTX_get0_param(context)
            X509_VERIFY_PARAM_set_time(parameters, time_t(date.timeIntervalSince1970))
            X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
            // Key usage and extended key usage of the signer are judged by the policy, not here.
            _ = X509_STORE_CTX_set_purpose(context, X509_PURPOSE_ANY)
            if X509_verify_cert(context) == 1 {
                guard let chain = X509_STORE_CTX_get1_chain(context) else { return .success([signer]) }
                defer { COpenSSLShims_sk_X509_pop_free(chain) }
                return .success((try? X509Handle.handles(inStack: chain).map(Certificate.init(handle:))) ?? [signer])
            }
            let code = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let text = String(cString: X509_verify_cert_error_string(Int(code)))
            let subject =
                X509_STORE_CTX_get_current_cert(context).flatMap {
                    try? Certificate(handle: X509Handle(copying: $0)).subject
                } ?? "?"
            let what = depth == 0 ? "the signer certificate" : "the issuing certificate '\(subject)'"
            let when = proven ? "the time its signature timestamp proves (\(date))" : "the validation time \(date)"
            switch code {
            case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
                return .failure(
                    VerificationFailure(
                        .signerExpired,
                        "\(what) was not valid at \(when) (\(text))",
                        openSSLErrors: OpenSSLErrorQueue.drain()
                    )
                )
            default:
                return .failure(
                    VerificationFailure(
                        .untrustedSigner,
                        "the signer's chain does not lead to a trusted certificate: \(what): \(text)",
                        openSSLErrors: OpenSSLErrorQueue.drain()
                    )
                )
            }
        }
        return outcome ?? .failure(failure(.untrustedSigner, "could not build the chain"))
    }
}
