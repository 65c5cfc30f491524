internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// The certificates of a CMS SignedData (a signature or a timestamp token): the ones it carries and
/// the one each SignerInfo names.
package enum CMSCertificates {
    /// What a SignedData carries.
    package struct Found {
        /// The certificate each SignerInfo names, in SignerInfo order (nil when it does not carry it).
        package var signers: [Certificate?]
        /// Every certificate of `SignedData.certificates`.
        package var pool: [Certificate]
    }

    /// Reads the certificates of a DER, BER or PEM SignedData.
    /// - Throws: `.malformedInput` when the bytes are not CMS SignedData.
    package static func find(in signedData: [UInt8]) throws -> Found {
        let cms = try CMSTimestamping.parse(signedData)
        return try find(in: cms)
    }

    /// Reads the certificates of a parsed SignedData.
    package static func find(in cms: CMSContentInfoHandle) throws -> Found {
        var pool: [Certificate] = []
        if let stack = CMS_get1_certs(cms.pointer) {
            defer { COpenSSLShims_sk_X509_pop_free(stack) }
            pool = try X509Handle.handles(inStack: stack).map(Certificate.init(handle:))
        }
        ERR_clear_error()
        let signers = try CMSTimestamping.signerInfos(of: cms).map { info in
            pool.first { CMS_SignerInfo_cert_cmp(info, $0.handle.pointer) == 0 }
        }
        return Found(signers: signers, pool: pool)
    }
}
