import CMS
internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

extension RevocationOpenSSL {
    /// What OpenSSL's CRL check said about one certificate of a path.
    package struct CRLVerdict: Sendable {
        /// `.good`, `.revoked` or `.unknown`.
        package let state: RevocationStatus.State
        /// The revocation date of the CRL entry, for `.revoked`.
        package let revocationTime: Date?
        /// For `.unknown`: what OpenSSL said (`different CRL scope`, `unable to get certificate CRL`, …).
        package let problems: [String]
    }

    /// A path as OpenSSL built it for the CRL check, with one verdict per certificate.
    package struct CRLPathCheck: Sendable {
        /// Leaf first.
        package let chain: [Certificate]
        /// Whether the last certificate of ``chain`` is a trust anchor (it gets no status).
        package let endsInAnchor: Bool
        /// One per certificate of ``chain``.
        package let verdicts: [CRLVerdict]
    }

    /// The OpenSSL errors of the CRL check (RFC 5280 6.3), by depth; the verify callback keeps
    /// them and lets verification go on so that every certificate of the path is judged.
    private final class CRLErrorLog {
        /// What OpenSSL reported, with the CRL it was judging (nil when it had none at hand).
        struct Entry {
            let error: Int32
            let crl: OpaquePointer?
        }
        var entries: [Int32: [Entry]] = [:]
    }

    /// The errors that say a certificate's revocation status cannot be decided from the CRLs.
    private static let undecidedErrors: Set<Int32> = [
        X509_V_ERR_UNABLE_TO_GET_CRL, X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE, X509_V_ERR_CRL_SIGNATURE_FAILURE,
        X509_V_ERR_CRL_NOT_YET_VALID, X509_V_ERR_CRL_HAS_EXPIRED, X509_V_ERR_ERROR_IN_CRL_LAST_UPDATE_FIELD,
        X509_V_ERR_ERROR_IN_CRL_NEXT_UPDATE_FIELD, X509_V_ERR_UNABLE_TO_GET_CRL_ISSUER, X509_V_ERR_KEYUSAGE_NO_CRL_SIGN,
        X509_V_ERR_UNHANDLED_CRITICAL_CRL_EXTENSION, X509_V_ERR_DIFFERENT_CRL_SCOPE,
        X509_V_ERR_CRL_PATH_VALIDATION_ERROR,
    ]

    /// Checks every certificate of the path from `leaf` to `anchors` against `crls` with OpenSSL's
    /// own RFC 5280 CRL processing, as `openssl verify -crl_check_all -extended_crl -use_deltas`
    /// does: the CRL must be signed by the certificate's issuer (or, for an indirect CRL, by the
    /// cRLIssuer of the certificate's distribution point) with the cRLSign key usage, be current
    /// at `time`, cover the certificate (issuing distribution point: onlyContainsUserCerts,
    /// onlyContainsCACerts, onlyContainsAttributeCerts, onlySomeReasons, the distribution point
    /// name), and have no critical extension OpenSSL does not handle (in the CRL or an entry);
    /// a delta CRL counts only beside its base.
    ///
    /// Errors about the chain itself (expiry, trust) are ignored here: the caller verified the
    /// chain at the time that matters.
    package static func checkCRLs(
        leaf: Certificate,
        untrusted: [Certificate],
        anchors: [Certificate],
        crls: [CertificateRevocationList],
        at time: Date
    ) -> CRLPathCheck {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        let log = CRLErrorLog()
        var chain = [leaf]
        var endsInAnchor = false
        let built: Bool? = try? withX509Stack(untrusted.map(\.handle)) { untrustedStack -> Bool in
            guard let store = X509_STORE_new() else { return false }
            defer { X509_STORE_free(store) }
            for anchor in anchors { _ = X509_STORE_add_cert(store, anchor.handle.pointer) }
            guard let context = X509_STORE_CTX_new() else { return false }
            defer { X509_STORE_CTX_free(context) }
            guard let crlStack = COpenSSLShims_sk_X509_CRL_new_null() else { return false }
            defer { COpenSSLShims_sk_X509_CRL_free(crlStack) }
            for crl in crls { _ = COpenSSLShims_sk_X509_CRL_push(crlStack, crl.handle.pointer) }
            guard X509_STORE_CTX_init(context, store, leaf.handle.pointer, untrustedStack) == 1 else { return false }
            X509_STORE_CTX_set0_crls(context, crlStack)
            let parameters = X509_STORE_CTX_get0_param(context)
            X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970))
            let flags =
                X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL
                | X509_V_FLAG_EXTENDED_CRL_SUPPORT | X509_V_FLAG_USE_DELTAS
            X509_VERIFY_PARAM_set_flags(parameters, UInt(flags))
            _ = X509_STORE_CTX_set_purpose(context, X509_PURPOSE_ANY)
            let unmanaged = Unmanaged.passRetained(log)
            defer { unmanaged.release() }
            _ = X509_STORE_CTX_set_ex_data(context, 0, unmanaged.toOpaque())
            X509_STORE_CTX_set_verify_cb(context) { ok, context in
                // Only the outer context carries the log: a nested one (an indirect CRL's own path)
                // keeps OpenSSL's verdict.
                guard ok == 0, let context, let raw = X509_STORE_CTX_get_ex_data(context, 0) else { return ok }
                let log = Unmanaged<CRLErrorLog>.fromOpaque(raw).takeUnretainedValue()
                let error = X509_STORE_CTX_get_error(context)
                // "No CRL" concerns the certificate, not the CRL last looked at.
                let crl = error == X509_V_ERR_UNABLE_TO_GET_CRL ? nil : X509_STORE_CTX_get0_current_crl(context)
                log.entries[X509_STORE_CTX_get_error_depth(context), default: []].append(.init(error: error, crl: crl))
                return 1
            }
            _ = X509_verify_cert(context)
            if let stack = X509_STORE_CTX_get1_chain(context) {
                defer { COpenSSLShims_sk_X509_pop_free(stack) }
                let count = COpenSSLShims_sk_X509_num(stack)
                let copied = (0..<count).compactMap { index in
                    COpenSSLShims_sk_X509_value(stack, index).flatMap {
                        try? Certificate(handle: X509Handle(copying: $0))
                    }
                }
                if copied.count == Int(count), !copied.isEmpty {
                    chain = copied
                    endsInAnchor = X509_STORE_CTX_get_num_untrusted(context) < count
                }
            }
            return true
        }
        guard built == true else {
            let verdict = CRLVerdict(state: .unknown, revocationTime: nil, problems: ["the CRL check could not run"])
            return CRLPathCheck(chain: chain, endsInAnchor: false, verdicts: chain.map { _ in verdict })
        }
        let verdicts = chain.enumerated().map { depth, certificate in
            verdict(for: certificate, entries: log.entries[Int32(depth)] ?? [], crls: crls)
        }
        return CRLPathCheck(chain: chain, endsInAnchor: endsInAnchor, verdicts: verdicts)
    }

    /// One certificate's verdict from what OpenSSL reported at its depth: revoked when a CRL with
    /// no fault of its own lists it (a CRL out of scope, badly signed, out of date or with an
    /// unhandled critical extension is not used, even to revoke); unknown when any fault or no
    /// CRL was reported; good otherwise.
    private static func verdict(
        for certificate: Certificate,
        entries: [CRLErrorLog.Entry],
        crls: [CertificateRevocationList]
    ) -> CRLVerdict {
        let faults = entries.filter { undecidedErrors.contains($0.error) }
        let faulty = Set(faults.compactMap { $0.crl.map(UnsafeRawPointer.init) })
        let listedByUsable = entries.contains { entry in
            guard entry.error == X509_V_ERR_CERT_REVOKED else { return false }
            guard let crl = entry.crl else { return faults.isEmpty }
            return !faulty.contains(UnsafeRawPointer(crl))
        }
        if listedByUsable {
            return CRLVerdict(state: .revoked, revocationTime: revocationDate(of: certificate, in: crls), problems: [])
        }
        guard faults.isEmpty else {
            var problems = Set(faults.map { String(cString: X509_verify_cert_error_string(Int($0.error))) })
            if entries.contains(where: { $0.error == X509_V_ERR_CERT_REVOKED }) {
                problems.insert("a CRL that cannot be used lists it as revoked")
            }
            if crls.contains(where: { $0.isDelta && $0.issuer == certificate.issuer }) {
                problems.insert("a delta CRL counts only beside its base CRL")
            }
            return CRLVerdict(state: .unknown, revocationTime: nil, problems: problems.sorted())
        }
        return CRLVerdict(state: .good, revocationTime: nil, problems: [])
    }

    /// The earliest revocation date any of `crls` gives `certificate`.
    private static func revocationDate(of certificate: Certificate, in crls: [CertificateRevocationList]) -> Date? {
        crls.compactMap { crl -> Date? in
            var entry: OpaquePointer?
            guard X509_CRL_get0_by_cert(crl.handle.pointer, &entry, certificate.handle.pointer) == 1, let entry,
                let revoked = X509_REVOKED_get0_revocationDate(entry)
            else { return nil }
            return ASN1Time.date(of: OpaquePointer(revoked))
        }.min()
    }
}
