import CMS
internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// The OpenSSL side of ``RevocationChecker``: OCSP requests and responses (RFC 6960), CRL lookups
/// (RFC 5280), and the URLs a certificate names for both. Each function is one synchronous pass.
package enum RevocationOpenSSL {
    /// An OCSP request (DER) for one certificate, with a nonce.
    package struct OCSPRequest: Sendable {
        package let der: [UInt8]
    }

    /// Whether `der` is a DER OCSPResponse OpenSSL can read (the whole of it).
    package static func isOCSPResponse(_ der: [UInt8]) -> Bool {
        defer { ERR_clear_error() }
        return der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            var cursor: UnsafePointer<UInt8>? = base
            guard let response = d2i_OCSP_RESPONSE(nil, &cursor, buffer.count) else { return false }
            OCSP_RESPONSE_free(response)
            return cursor == base + buffer.count
        }
    }

    /// Whether `issuer` issued `certificate`: names and key identifiers match and its key verifies
    /// the certificate's signature.
    package static func isIssued(_ certificate: Certificate, by issuer: Certificate) -> Bool {
        defer { ERR_clear_error() }
        guard X509_check_issued(issuer.handle.pointer, certificate.handle.pointer) == X509_V_OK,
            let key = X509_get0_pubkey(issuer.handle.pointer)
        else { return false }
        return X509_verify(certificate.handle.pointer, key) == 1
    }

    /// The OCSP responder URLs of a certificate's authorityInfoAccess.
    package static func ocspURLs(of certificate: Certificate) -> [URL] {
        guard let stack = X509_get1_ocsp(certificate.handle.pointer) else {
            ERR_clear_error()
            return []
        }
        defer { X509_email_free(stack) }
        return (0..<COpenSSLShims_sk_OPENSSL_STRING_num(stack)).compactMap { index in
            COpenSSLShims_sk_OPENSSL_STRING_value(stack, index).flatMap { URL(string: String(cString: $0)) }
        }
    }

    /// The URI full names of a certificate's CRL distribution points.
    package static func crlURLs(of certificate: Certificate) -> [URL] {
        guard let raw = X509_get_ext_d2i(certificate.handle.pointer, NID_crl_distribution_points, nil, nil) else {
            ERR_clear_error()
            return []
        }
        let points = OpaquePointer(raw)
        defer { CRL_DIST_POINTS_free(points) }
        var urls: [URL] = []
        for index in 0..<COpenSSLShims_sk_DIST_POINT_num(points) {
            guard let names = COpenSSLShims_DIST_POINT_get0_fullname(COpenSSLShims_sk_DIST_POINT_value(points, index))
            else { continue }
            for nameIndex in 0..<COpenSSLShims_sk_GENERAL_NAME_num(names) {
                guard
                    let uri = COpenSSLShims_GENERAL_NAME_get0_uri(
                        COpenSSLShims_sk_GENERAL_NAME_value(names, nameIndex)
                    ),
                    let data = ASN1_STRING_get0_data(uri)
                else { continue }
                let text = String(
                    decoding: UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(uri))),
                    as: UTF8.self
                )
                if let url = URL(string: text) { urls.append(url) }
            }
        }
        return urls
    }

    /// Builds an OCSP request for `certificate` issued by `issuer` (CertID with SHA-1, as RFC 6960
    /// responders expect), with a random nonce.
    package static func makeOCSPRequest(for certificate: Certificate, issuer: Certificate) throws -> OCSPRequest {
        OpenSSLErrorQueue.clear()
        guard let request = OCSP_REQUEST_new() else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "OCSP_REQUEST_new")
        }
        defer { OCSP_REQUEST_free(request) }
        guard let identifier = OCSP_cert_to_id(EVP_sha1(), certificate.handle.pointer, issuer.handle.pointer) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not make the OCSP certificate id")
        }
        guard OCSP_request_add0_id(request, identifier) != nil else {
            OCSP_CERTID_free(identifier)
            throw OpenSSLErrorQueue.error(.cryptoFailure, "OCSP_request_add0_id")
        }
        guard OCSP_request_add1_nonce(request, nil, -1) == 1 else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "OCSP_request_add1_nonce")
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_OCSP_REQUEST(request, &output)
        guard length > 0, let output else { throw OpenSSLErrorQueue.error(.cryptoFailure, "i2d_OCSP_REQUEST") }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return OCSPRequest(der: Array(UnsafeBufferPointer(start: output, count: Int(length))))
    }

    /// How fresh an OCSP answer must be, and what it must echo.
    package struct OCSPFreshness: Sendable {
        /// The time the answer must be current at (the validation time).
        package var time: Date
        /// Tolerance for thisUpdate / nextUpdate against `time`.
        package var skew: TimeInterval
        /// The oldest an answer without nextUpdate may be (thisUpdate to `time`).
        package var maximumAge: TimeInterval
        /// Whether the answer must carry back the request's nonce.
        package var requiresNonce: Bool
        /// Whether the answer was kept with a signature (B-LT): then its nextUpdate may have passed
        /// and its age does not count; it must still not come from the future or before the
        /// certificate existed.
        package var isEmbedded: Bool
        /// For an embedded answer: the time a signature timestamp proves the signature existed at.
        /// The answer must be issued at or after it, or be current then (nextUpdate not before it);
        /// without it, current at ``time``.
        package var provenTime: Date?
        /// Certificates the responder's may be among when the answer does not carry it (a
        /// signature's certificates, for an embedded answer); they are not trusted for that.
        package var responderCandidates: [Certificate] = []

        package init(
            time: Date,
            skew: TimeInterval,
            maximumAge: TimeInterval,
            requiresNonce: Bool,
            isEmbedded: Bool = false
        ) {
            self.time = time
            self.skew = skew
            self.maximumAge = maximumAge
            self.requiresNonce = requiresNonce
            self.isEmbedded = isEmbedded
        }
    }

    /// Checks an OCSP response to `request` and returns the status of `certificate`.
    ///
    /// Checks: response status successful; a basic response signed by the issuer or by a
    /// responder the issuer delegated (id-kp-OCSPSigning), chaining to `trustAnchors` (plus the
    /// issuer); the nonce (equal when present; present when `freshness.requiresNonce`); a
    /// SingleResponse whose CertID is the certificate's; thisUpdate not after `freshness.time`
    /// plus the skew and not before the certificate's notBefore; nextUpdate not passed, or, without
    /// nextUpdate, thisUpdate not older than `freshness.maximumAge`.
    /// - Throws: `.network` for bytes that are not an OCSP response; `.serverRejected` for an
    ///   unsuccessful response status; `.cryptoFailure` naming any other failed check (the caller
    ///   reports each as an unknown status).
    package static func checkOCSPResponse(
        _ der: [UInt8],
        request: OCSPRequest?,
        certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        freshness: OCSPFreshness,
        source: String
    ) throws -> RevocationStatus {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard
            let response = der.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return buffer.count > 0 ? d2i_OCSP_RESPONSE(nil, &cursor, buffer.count) : nil
            })
        else { throw OpenSSLErrorQueue.error(.network, "the answer is not an OCSP response") }
        defer { OCSP_RESPONSE_free(response) }
        let status = OCSP_response_status(response)
        guard status == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            throw CertificateProviderError(
                .serverRejected,
                "the OCSP responder answered \(String(cString: OCSP_response_status_str(Int(status))))"
            )
        }
        guard let basic = OCSP_response_get1_basic(response) else {
            throw OpenSSLErrorQueue.error(.network, "the OCSP response has no basic response")
        }
        defer { OCSP_BASICRESP_free(basic) }
        if let request { try checkNonce(of: basic, against: request, required: freshness.requiresNonce) }
        try verifySigner(
            of: basic,
            issuer: issuer,
            trustAnchors: trustAnchors,
            at: freshness.time,
            responderCandidates: freshness.responderCandidates
        )
        guard let identifier = OCSP_cert_to_id(EVP_sha1(), certificate.handle.pointer, issuer.handle.pointer) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not make the OCSP certificate id")
        }
        defer { OCSP_CERTID_free(identifier) }
        var certificateStatus: Int32 = -1
        var reason: Int32 = -1
        var revocationTime: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        guard
            OCSP_resp_find_status(
                basic,
                identifier,
                &certificateStatus,
                &reason,
                &revocationTime,
                &thisUpdate,
                &nextUpdate
            ) == 1
        else {
            throw CertificateProviderError(.cryptoFailure, "the OCSP response does not cover this certificate")
        }
        try checkFreshness(
            thisUpdate: thisUpdate.flatMap { ASN1Time.date(of: OpaquePointer($0)) },
            nextUpdate: nextUpdate.map { ASN1Time.date(of: OpaquePointer($0)) },
            certificate: certificate,
            freshness: freshness
        )
        switch certificateStatus {
        case V_OCSP_CERTSTATUS_GOOD:
            return RevocationStatus(state: .good, source: source)
        case V_OCSP_CERTSTATUS_REVOKED:
            guard let revocationTime, let date = ASN1Time.date(of: OpaquePointer(revocationTime)) else {
                throw CertificateProviderError(.cryptoFailure, "the OCSP response says revoked without a readable time")
            }
            return RevocationStatus(state: .revoked, revocationTime: date, source: source)
        default:
            return RevocationStatus(state: .unknown, source: "\(source) does not know the certificate")
        }
    }

    /// The nonce of the request must come back unchanged; when `required`, it must come back.
    private static func checkNonce(of basic: OpaquePointer, against request: OCSPRequest, required: Bool) throws {
        guard
            let parsedRequest = request.der.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_OCSP_REQUEST(nil, &cursor, buffer.count)
            })
        else { throw OpenSSLErrorQueue.error(.cryptoFailure, "could not read back the OCSP request") }
        defer { OCSP_REQUEST_free(parsedRequest) }
        switch OCSP_check_nonce(parsedRequest, basic) {
        case 0:
            throw CertificateProviderError(
                .cryptoFailure,
                "the OCSP response's nonce differs from the request's (a replayed answer)"
            )
        case -1 where required:
            throw CertificateProviderError(
                .cryptoFailure,
                "the OCSP response does not carry back the request's nonce (it could be a replayed answer)"
            )
        default:
            break
        }
    }

    /// The basic response must be signed by the issuer or a responder it delegated
    /// (id-kp-OCSPSigning), chaining to `trustAnchors` at `time`.
    private static func verifySigner(
        of basic: OpaquePointer,
        issuer: Certificate,
        trustAnchors: [Certificate],
        at time: Date,
        responderCandidates: [Certificate]
    ) throws {
        guard let store = X509_STORE_new() else { throw OpenSSLErrorQueue.error(.cryptoFailure, "X509_STORE_new") }
        defer { X509_STORE_free(store) }
        for anchor in trustAnchors { _ = X509_STORE_add_cert(store, anchor.handle.pointer) }
        ERR_clear_error()
        if let parameters = X509_STORE_get0_param(store) {
            X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970))
            X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        }
        let verified = try CertificateProviderError.convertingOpenSSLErrors {
            try withX509Stack(([issuer] + responderCandidates).map(\.handle)) {
                OCSP_basic_verify(basic, $0, store, 0) == 1
            }
        }
        guard verified else {
            throw OpenSSLErrorQueue.error(
                .cryptoFailure,
                "the OCSP response is not signed by the issuer or a responder it authorized (id-kp-OCSPSigning)"
            )
        }
    }

    /// RFC 6960 4.2.2.1 and replay protection: thisUpdate not after the time plus the skew and
    /// not before the certificate's notBefore; nextUpdate (when present) readable, not before
    /// thisUpdate and not passed; without it, thisUpdate not older than the maximum age.
    private static func checkFreshness(
        thisUpdate: Date?,
        nextUpdate: Date??,
        certificate: Certificate,
        freshness: OCSPFreshness
    ) throws {
        func stale(_ reason: String) -> CertificateProviderError {
            CertificateProviderError(.cryptoFailure, "the OCSP response is not current: \(reason)")
        }
        guard let thisUpdate else { throw stale("its thisUpdate is unreadable") }
        let now = freshness.time
        if thisUpdate > now.addingTimeInterval(freshness.skew) {
            throw stale("its thisUpdate \(thisUpdate) lies after the validation time \(now)")
        }
        if thisUpdate < certificate.notValidBefore {
            throw stale(
                "its thisUpdate \(thisUpdate) lies before the certificate existed (notBefore "
                    + "\(certificate.notValidBefore)): an old answer replayed"
            )
        }
        if freshness.isEmbedded {
            try checkEmbedded(thisUpdate: thisUpdate, nextUpdate: nextUpdate, freshness: freshness)
            return
        }
        switch nextUpdate {
        case .some(.none):
            throw stale("its nextUpdate is unreadable")
        case .some(.some(let next)):
            if next < thisUpdate { throw stale("its nextUpdate \(next) lies before its thisUpdate") }
            if next < now.addingTimeInterval(-freshness.skew) { throw stale("its nextUpdate \(next) has passed") }
        case .none:
            let age = now.timeIntervalSince(thisUpdate)
            if age > freshness.maximumAge {
                throw stale(
                    "it has no nextUpdate and its thisUpdate \(thisUpdate) is older than the maximum age of "
                        + "\(Int(freshness.maximumAge)) s (--revocation-max-age)"
                )
            }
        }
    }
}

extension RevocationOpenSSL {
    /// An embedded answer speaks of the proven time (or, without one, of the validation time) when
    /// it was issued at or after it, or was still current then: a CRL is judged the same way.
    private static func checkEmbedded(thisUpdate: Date, nextUpdate: Date??, freshness: OCSPFreshness) throws {
        let reference = freshness.provenTime ?? freshness.time
        if thisUpdate >= reference.addingTimeInterval(-freshness.skew) { return }
        let what = freshness.provenTime == nil ? "the validation time" : "the time the signature timestamp proves"
        switch nextUpdate {
        case .some(.some(let next)) where next >= reference.addingTimeInterval(-freshness.skew):
            return
        case .some(.some(let next)):
            throw CertificateProviderError(
                .cryptoFailure,
                "the OCSP response is not current at \(what) \(reference): issued \(thisUpdate), its nextUpdate "
                    + "\(next) came before"
            )
        default:
            throw CertificateProviderError(
                .cryptoFailure,
                "the OCSP response was issued \(thisUpdate), before \(what) \(reference), and has no nextUpdate: "
                    + "it says nothing of the status then"
            )
        }
    }

    /// The status of `certificate` from an OCSP response a signature carries (B-LT): signed by
    /// `issuer` or a responder it delegated, answering for the certificate, thisUpdate neither in
    /// the future nor before the certificate's notBefore, and issued at or after `provenTime` or
    /// current then (its nextUpdate passing later changes nothing: it is kept evidence). The
    /// responder's certificate (from the answer, else from `certificates`: the signature's) is
    /// checked at `time` (the validation time). No nonce: nobody asked.
    /// - Throws: as ``checkOCSPResponse(_:request:certificate:issuer:trustAnchors:freshness:source:)``;
    ///   `.cryptoFailure` when it does not answer for this certificate.
    package static func checkEmbeddedOCSPResponse(
        _ der: [UInt8],
        certificate: Certificate,
        issuer: Certificate,
        certificates: [Certificate],
        at time: Date,
        provenTime: Date? = nil
    ) throws -> RevocationStatus {
        var freshness = OCSPFreshness(
            time: time,
            skew: 300,
            maximumAge: .infinity,
            requiresNonce: false,
            isEmbedded: true
        )
        freshness.responderCandidates = certificates
        freshness.provenTime = provenTime
        return try checkOCSPResponse(
            der,
            request: nil,
            certificate: certificate,
            issuer: issuer,
            trustAnchors: [issuer],
            freshness: freshness,
            source: "embedded OCSP answer"
        )
    }
}
