internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders

extension SignedDataLimits {
    /// Why a parsed SignedData is over the limits, or nil when it is within them. Counting reads only
    /// the parsed structure's lists: no certificate is copied and no chain is built.
    package static func excess(of cms: CMSContentInfoHandle) -> String? {
        defer { ERR_clear_error() }
        var certificates: Int32 = 0
        if let stack = CMS_get1_certs(cms.pointer) {
            certificates = COpenSSLShims_sk_X509_num(stack)
            COpenSSLShims_sk_X509_pop_free(stack)
        }
        if certificates > maximumCertificates {
            return "the signature carries \(certificates) certificates; at most \(maximumCertificates) are read"
        }
        var crls: Int32 = 0
        if let stack = CMS_get1_crls(cms.pointer) {
            crls = OPENSSL_sk_num(stack)
            OPENSSL_sk_pop_free(stack) { X509_CRL_free(OpaquePointer($0)) }
        }
        if crls > maximumCRLs {
            return "the signature carries \(crls) CRLs; at most \(maximumCRLs) are read"
        }
        guard let infos = CMS_get0_SignerInfos(cms.pointer) else { return nil }
        let signers = COpenSSLShims_sk_CMS_SignerInfo_num(infos)
        if signers > maximumSigners {
            return "the signature has \(signers) signers; at most \(maximumSigners) are read"
        }
        for index in 0..<signers {
            guard let info = COpenSSLShims_sk_CMS_SignerInfo_value(infos, index) else { continue }
            for (kind, count) in [
                ("signed", CMS_signed_get_attr_count(info)), ("unsigned", CMS_unsigned_get_attr_count(info)),
            ] where count > maximumAttributesPerSigner {
                return "signer \(index + 1) has \(count) \(kind) attributes; at most \(maximumAttributesPerSigner) "
                    + "are read"
            }
        }
        return nil
    }
}
