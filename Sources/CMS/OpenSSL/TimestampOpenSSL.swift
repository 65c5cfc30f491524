internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// The OpenSSL TS API (RFC 3161) behind ``TimestampAuthorityClient`` and ``TimestampVerifier``:
/// each function is one synchronous pass, so OpenSSL's error queue belongs to it.
package enum TimestampOpenSSL {
    /// A `TimeStampReq` (DER) and the nonce it carries.
    package struct Request: Sendable {
        package let der: [UInt8]
        package let nonce: [UInt8]
    }

    // MARK: Requests

    /// Builds a `TimeStampReq`: version 1, `imprint` (a digest made with `digest`), a random 64-bit
    /// nonce, certReq true, and `policy` when given.
    package static func makeRequest(imprint: [UInt8], digest: DigestAlgorithm, policy: String?) throws -> Request {
        try digest.checkLength(of: imprint)
        OpenSSLErrorQueue.clear()
        var imprint = imprint
        var nonce = [UInt8](repeating: 0, count: 8)
        guard RAND_bytes(&nonce, 8) == 1 else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not make a timestamp nonce")
        }
        nonce[0] = (nonce[0] & 0x7F) | 0x01
        guard let request = TS_REQ_new() else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not allocate a timestamp request")
        }
        defer { TS_REQ_free(request) }
        guard let messageImprint = TS_MSG_IMPRINT_new() else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not allocate an imprint")
        }
        defer { TS_MSG_IMPRINT_free(messageImprint) }
        guard let algorithm = X509_ALGOR_new() else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not allocate an algorithm")
        }
        defer { X509_ALGOR_free(algorithm) }
        X509_ALGOR_set_md(algorithm, try digest.evpMD())
        guard let nonceNumber = BN_bin2bn(nonce, Int32(nonce.count), nil) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "BN_bin2bn")
        }
        defer { BN_free(nonceNumber) }
        guard let nonceInteger = BN_to_ASN1_INTEGER(nonceNumber, nil) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "BN_to_ASN1_INTEGER")
        }
        defer { ASN1_INTEGER_free(nonceInteger) }
        guard TS_REQ_set_version(request, 1) == 1,
            TS_MSG_IMPRINT_set_algo(messageImprint, algorithm) == 1,
            TS_MSG_IMPRINT_set_msg(messageImprint, &imprint, Int32(imprint.count)) == 1,
            TS_REQ_set_msg_imprint(request, messageImprint) == 1,
            TS_REQ_set_nonce(request, nonceInteger) == 1,
            TS_REQ_set_cert_req(request, 1) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not build the timestamp request")
        }
        if let policy {
            guard let object = OBJ_txt2obj(policy, 1) else {
                throw CertificateProviderError.invalidParameter("the TSA policy '\(policy)' is not an OID")
            }
            defer { ASN1_OBJECT_free(object) }
            guard TS_REQ_set_policy_id(request, object) == 1 else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "could not set the TSA policy")
            }
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_TS_REQ(request, &output)
        guard length > 0, let output else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the timestamp request")
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Request(der: Array(UnsafeBufferPointer(start: output, count: Int(length))), nonce: nonce)
    }

    // MARK: Responses

    /// Checks a `TimeStampResp` against the request it answers and returns its token.
    ///
    /// Checks: status granted (or granted with modifications), version, the nonce and imprint of
    /// the request, the token's signature, the TSA certificate (ESS binding, critical timeStamping
    /// EKU as the only one) and its chain to `trustAnchors` (and the system store when
    /// `addingSystemStore`, or when there are none) at `time`, and that `genTime` lies in `window`.
    package static func checkResponse(
        _ response: [UInt8],
        request: Request,
        trustAnchors: [Certificate],
        addingSystemStore: Bool = false,
        at time: Date,
        window: ClosedRange<Date>
    ) throws -> TimestampToken {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard
            let reply = response.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_TS_RESP(nil, &cursor, buffer.count)
            })
        else {
            throw OpenSSLErrorQueue.error(
                .network,
                "the TSA's answer is not an RFC 3161 TimeStampResp (\(response.count) bytes)"
            )
        }
        defer { TS_RESP_free(reply) }
        if let statusInfo = TS_RESP_get_status_info(reply) {
            let status = ASN1_INTEGER_get(TS_STATUS_INFO_get0_status(statusInfo))
            guard status == 0 || status == 1 else {
                throw CertificateProviderError(
                    .serverRejected,
                    "the TSA refused the request: status \(statusName(status))\(failureInfo(statusInfo))"
                )
            }
        }
        guard let token = TS_RESP_get_token(reply) else {
            throw CertificateProviderError(.timestampInvalid, "the TSA granted the request but sent no token")
        }
        guard
            let parsedRequest = request.der.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_TS_REQ(nil, &cursor, buffer.count)
            })
        else { throw OpenSSLErrorQueue.error(.cryptoFailure, "could not read back the timestamp request") }
        defer { TS_REQ_free(parsedRequest) }
        guard let context = TS_REQ_to_TS_VERIFY_CTX(parsedRequest, nil) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not create a timestamp verification context")
        }
        defer { TS_VERIFY_CTX_free(context) }
        _ = TS_VERIFY_CTX_add_flags(context, Int32(TS_VFY_SIGNATURE | TS_VFY_VERSION))
        try installStore(context, trustAnchors: trustAnchors, addingSystemStore: addingSystemStore, at: time)
        guard TS_RESP_verify_response(context, reply) == 1 else {
            let entries = OpenSSLErrorQueue.drainEntries()
            let tsa = (try? tokenFacts(token))?.authorityCertificate
            throw verificationFailure(
                entries,
                what: "the TSA's token",
                validity: tsa.map { (certificates: [$0] + trustAnchors, time: time) }
            ).error
        }
        let facts = try tokenFacts(token)
        try checkSigner(facts.authorityCertificate)
        guard window.contains(facts.time) else {
            throw CertificateProviderError(
                .timestampInvalid,
                "the TSA's genTime \(facts.time) is outside \(window.lowerBound) … \(window.upperBound): its clock "
                    + "is wrong or the answer was replayed"
            )
        }
        return facts
    }

    // MARK: Tokens

    /// Verifies a token over `data` (the imprint is recomputed with the token's algorithm).
    /// - Parameters:
    ///   - what: the token's role in messages ("the signature timestamp", "the document timestamp").
    ///   - covering: what `data` is, in messages ("the signature value").
    package static func verifyToken(
        _ der: [UInt8],
        data: [UInt8],
        trustAnchors: [Certificate],
        at time: Date,
        skew: TimeInterval,
        what: String = "the signature timestamp",
        covering: String = "the signature value"
    ) -> TimestampCheck {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let token = parsePKCS7(der) else {
            return TimestampCheck(
                token: nil,
                failing: .notAToken,
                "the timestamp token is not a CMS SignedData (corrupt or truncated)"
            )
        }
        defer { PKCS7_free(token) }
        let facts: TimestampToken
        do {
            facts = try tokenFacts(token, der: der)
        } catch let error as CertificateProviderError {
            return TimestampCheck(token: nil, failing: .notAToken, error.reason)
        } catch {
            return TimestampCheck(token: nil, failing: .notAToken, "\(error)")
        }
        do {
            guard let context = TS_VERIFY_CTX_new() else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "TS_VERIFY_CTX_new")
            }
            defer { TS_VERIFY_CTX_free(context) }
            _ = TS_VERIFY_CTX_set_flags(context, Int32(TS_VFY_VERSION | TS_VFY_SIGNATURE | TS_VFY_DATA))
            // The BIO reads `data` in place; the context frees the BIO (not the bytes) before `data` goes.
            try data.withUnsafeBytes { buffer in
                let dummy: [UInt8] = [0]
                try dummy.withUnsafeBytes { fallback in
                    guard
                        let bio = BIO_new_mem_buf(
                            buffer.count > 0 ? buffer.baseAddress : fallback.baseAddress,
                            Int32(buffer.count)
                        )
                    else {
                        throw OpenSSLErrorQueue.error(.cryptoFailure, "could not allocate a memory BIO")
                    }
                    _ = TS_VERIFY_CTX_set_data(context, bio)
                    try installStore(context, trustAnchors: trustAnchors, at: time)
                    guard TS_RESP_verify_token(context, token) == 1 else {
                        throw verificationFailure(
                            OpenSSLErrorQueue.drainEntries(),
                            what: what,
                            covering: covering,
                            validity: facts.authorityCertificate.map {
                                (
                                    certificates: [$0] + ((try? CMSCertificates.find(in: der).pool) ?? [])
                                        + trustAnchors,
                                    time: time
                                )
                            }
                        )
                    }
                }
            }
            if let failure = signerFailure(facts.authorityCertificate) { throw failure }
            guard facts.time <= time.addingTimeInterval(skew) else {
                throw TimestampFailure(
                    .timeAfterValidation,
                    CertificateProviderError(
                        .timestampInvalid,
                        "\(what)'s time \(facts.time) lies after the validation time \(time)"
                    )
                )
            }
        } catch let failure as TimestampFailure {
            return TimestampCheck(token: facts, failing: failure.kind, failure.error.reason)
        } catch let error as CertificateProviderError {
            return TimestampCheck(token: facts, failing: .other, error.reason)
        } catch {
            return TimestampCheck(token: facts, failing: .other, "\(error)")
        }
        return TimestampCheck(token: facts, failureReason: nil)
    }

    /// Verifies a token that zero bytes may follow (a PDF's `/Contents`) over `data`; any other
    /// trailing byte is refused.
    package static func verifyPaddedToken(
        _ contents: [UInt8],
        data: [UInt8],
        trustAnchors: [Certificate],
        at time: Date,
        skew: TimeInterval,
        what: String,
        covering: String
    ) -> TimestampCheck {
        let length = contents.withUnsafeBufferPointer { buffer -> Int? in
            var cursor = buffer.baseAddress
            guard buffer.count > 0, let token = d2i_PKCS7(nil, &cursor, buffer.count), let cursor,
                let base = buffer.baseAddress
            else {
                ERR_clear_error()
                return nil
            }
            PKCS7_free(token)
            return cursor - base
        }
        guard let length else {
            return TimestampCheck(
                token: nil,
                failing: .notAToken,
                "\(what) is not an RFC 3161 token (corrupt or truncated)"
            )
        }
        guard contents[length...].allSatisfy({ $0 == 0 }) else {
            return TimestampCheck(
                token: nil,
                failing: .notAToken,
                "\(what) is followed by bytes that are not part of it (only zero padding may follow)"
            )
        }
        return verifyToken(
            Array(contents.prefix(length)),
            data: data,
            trustAnchors: trustAnchors,
            at: time,
            skew: skew,
            what: what,
            covering: covering
        )
    }

    /// The facts of a token (no checks).
    static func tokenFacts(_ token: UnsafeMutablePointer<PKCS7>, der: [UInt8]? = nil) throws -> TimestampToken {
        guard let info = PKCS7_to_TS_TST_INFO(token) else {
            throw OpenSSLErrorQueue.error(
                .timestampInvalid,
                "the token holds no TSTInfo: it is not an RFC 3161 timestamp token"
            )
        }
        defer { TS_TST_INFO_free(info) }
        guard let genTime = TS_TST_INFO_get_time(info), let time = ASN1Time.date(of: OpaquePointer(genTime)) else {
            throw CertificateProviderError(.timestampInvalid, "the timestamp token has no readable genTime")
        }
        var certificate: Certificate?
        if let signers = PKCS7_get0_signers(token, nil, 0) {
            defer { COpenSSLShims_sk_X509_free(signers) }
            if COpenSSLShims_sk_X509_num(signers) > 0, let x509 = COpenSSLShims_sk_X509_value(signers, 0) {
                certificate = try? Certificate(handle: X509Handle(copying: x509))
            }
        }
        ERR_clear_error()
        var algorithmName = "unknown"
        if let imprint = TS_TST_INFO_get_msg_imprint(info), let algorithm = TS_MSG_IMPRINT_get_algo(imprint) {
            var object: OpaquePointer?
            X509_ALGOR_get0(&object, nil, nil, algorithm)
            if let name = OBJ_nid2sn(OBJ_obj2nid(object)) {
                algorithmName = String(cString: name).lowercased().replacingOccurrences(of: "-", with: "")
            }
        }
        var serial = ""
        if let number = TS_TST_INFO_get_serial(info), let bn = ASN1_INTEGER_to_BN(number, nil) {
            if let hex = BN_bn2hex(bn) {
                serial = String(cString: hex)
                COpenSSLShims_OPENSSL_free(hex)
            }
            BN_free(bn)
        }
        let policy = TS_TST_INFO_get_policy_id(info).flatMap(ASN1Object.dotted) ?? ""
        let authority = certificate?.subject ?? tsaName(info) ?? "unknown TSA"
        let encoded: [UInt8]
        if let der {
            encoded = der
        } else {
            var output: UnsafeMutablePointer<UInt8>?
            let length = i2d_PKCS7(token, &output)
            guard length > 0, let output else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the timestamp token")
            }
            defer { COpenSSLShims_OPENSSL_free(output) }
            encoded = Array(UnsafeBufferPointer(start: output, count: Int(length)))
        }
        return TimestampToken(
            derRepresentation: encoded,
            time: time,
            authority: authority,
            authorityCertificate: certificate,
            imprintAlgorithm: algorithmName,
            serialNumber: serial,
            policy: policy
        )
    }

    /// The facts of a DER token without checking it, or nil when it cannot be read.
    package static func facts(ofToken der: [UInt8]) -> TimestampToken? {
        guard let token = parsePKCS7(der) else {
            ERR_clear_error()
            return nil
        }
        defer { PKCS7_free(token) }
        return try? tokenFacts(token, der: der)
    }

    /// Parses a DER token (PKCS7 ContentInfo), refusing trailing bytes.
    static func parsePKCS7(_ der: [UInt8]) -> UnsafeMutablePointer<PKCS7>? {
        der.withUnsafeBufferPointer { buffer -> UnsafeMutablePointer<PKCS7>? in
            guard buffer.count > 0 else { return nil }
            var cursor = buffer.baseAddress
            guard let token = d2i_PKCS7(nil, &cursor, buffer.count) else { return nil }
            guard let cursor, let base = buffer.baseAddress, cursor - base == buffer.count else {
                PKCS7_free(token)
                return nil
            }
            return token
        }
    }

    // MARK: Helpers

    /// A store holding `trustAnchors` and, when they are empty or with `addingSystemStore`, the
    /// system default paths, checking at `time`, with partial chains allowed (an intermediate may be
    /// the anchor); the context owns it.
    private static func installStore(
        _ context: OpaquePointer,
        trustAnchors: [Certificate],
        addingSystemStore: Bool = false,
        at time: Date
    ) throws {
        guard let store = X509_STORE_new() else { throw OpenSSLErrorQueue.error(.cryptoFailure, "X509_STORE_new") }
        if trustAnchors.isEmpty || addingSystemStore { _ = X509_STORE_set_default_paths(store) }
        for anchor in trustAnchors { _ = X509_STORE_add_cert(store, anchor.handle.pointer) }
        ERR_clear_error()
        if let parameters = X509_STORE_get0_param(store) {
            X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970))
            X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        }
        _ = TS_VERIFY_CTX_set_store(context, store)
    }

    /// RFC 3161 2.3: the TSA certificate's extendedKeyUsage is critical and is timeStamping only.
    /// (OpenSSL's timestamp purpose checks the same; this says it in words.)
    private static func checkSigner(_ certificate: Certificate?) throws {
        if let failure = signerFailure(certificate) { throw failure.error }
    }

    /// Why `certificate` cannot be a TSA's (missing, or not a time-stamping certificate), or nil.
    private static func signerFailure(_ certificate: Certificate?) -> TimestampFailure? {
        guard let certificate else {
            return TimestampFailure(
                .authorityCertificateMissing,
                CertificateProviderError(.timestampInvalid, "the timestamp token does not carry the TSA's certificate")
            )
        }
        let x509 = certificate.handle.pointer
        let location = X509_get_ext_by_NID(x509, NID_ext_key_usage, -1)
        guard location >= 0, let ext = X509_get_ext(x509, location), X509_EXTENSION_get_critical(ext) == 1,
            (X509_get_extension_flags(x509) & UInt32(EXFLAG_XKUSAGE)) != 0,
            X509_get_extended_key_usage(x509) == UInt32(XKU_TIMESTAMP)
        else {
            return TimestampFailure(
                .notTimeStampingCertificate,
                CertificateProviderError(
                    .timestampInvalid,
                    "the TSA certificate '\(certificate.subject)' is not a time-stamping certificate (critical "
                        + "extendedKeyUsage timeStamping required)"
                )
            )
        }
        return nil
    }

    /// The first certificate of the TSA's path (`certificates[0]` up through the others by issuer)
    /// that is not valid at `time`, said with its dates: OpenSSL refused the path, and it breaks it.
    private static func validityReason(_ certificates: [Certificate], at time: Date) -> String? {
        // The path by issuer names from the TSA's certificate (the first), so an unrelated expired anchor
        // is never blamed.
        guard var current = certificates.first else { return nil }
        var path = [current]
        while !current.isSelfIssued, path.count < 10,
            let issuer = certificates.first(where: { $0.subject == current.issuer && !path.contains($0) })
        {
            path.append(issuer)
            current = issuer
        }
        guard let certificate = path.first(where: { !$0.isValid(at: time) }) else { return nil }
        let format = Date.ISO8601FormatStyle()
        if time > certificate.notValidAfter {
            return
                "the TSA's certificate '\(certificate.subject)' expired on \(certificate.notValidAfter.formatted(format)) "
                + "and is checked at \(time.formatted(format))"
        }
        return "the TSA's certificate '\(certificate.subject)' is valid only from "
            + "\(certificate.notValidBefore.formatted(format)) and is checked at \(time.formatted(format))"
    }

    /// What OpenSSL's refusal of a token (its error queue `entries`) means: its class and the sentence.
    private static func verificationFailure(
        _ entries: [OpenSSLErrorQueue.Entry],
        what: String,
        covering: String = "the signature value",
        validity: (certificates: [Certificate], time: Date)? = nil
    ) -> TimestampFailure {
        let texts = entries.map(\.text)
        let reasons = Set(entries.filter { $0.library == ERR_LIB_TS }.map(\.reason))
        let kind: TimestampFailureKind
        let reason: String
        if reasons.contains(TS_R_NONCE_MISMATCH) || reasons.contains(TS_R_NONCE_NOT_RETURNED) {
            (kind, reason) = (
                .other, "\(what) does not answer this request: its nonce differs (a replayed or misrouted answer)"
            )
        } else if reasons.contains(TS_R_MESSAGE_IMPRINT_MISMATCH) {
            (kind, reason) = (
                .imprintMismatch, "\(what) covers other data: its message imprint does not match \(covering)"
            )
        } else if reasons.contains(TS_R_CERTIFICATE_VERIFY_ERROR), let validity,
            let expired = validityReason(validity.certificates, at: validity.time)
        {
            (kind, reason) = (.authorityOutOfValidity, expired)
        } else if reasons.contains(TS_R_CERTIFICATE_VERIFY_ERROR) {
            let detail = texts.first { $0.contains("Verify error") || $0.contains("verify error") } ?? texts.last ?? ""
            kind = .untrustedAuthority
            reason =
                "the TSA certificate does not chain to a trusted TSA anchor or is not a time-stamping certificate "
                + "(\(detail))"
        } else if reasons.contains(TS_R_SIGNATURE_FAILURE) || reasons.contains(TS_R_ESS_SIGNING_CERTIFICATE_ERROR) {
            (kind, reason) = (.signatureInvalid, "\(what)'s signature does not verify with the TSA certificate")
        } else if reasons.contains(TS_R_UNSUPPORTED_VERSION) {
            (kind, reason) = (.notAToken, "\(what) has an unsupported version")
        } else if reasons.contains(TS_R_WRONG_CONTENT_TYPE) || reasons.contains(TS_R_BAD_PKCS7_TYPE) {
            (kind, reason) = (.notAToken, "\(what) is not a timestamp token")
        } else {
            (kind, reason) = (.other, "\(what) does not verify")
        }
        return TimestampFailure(kind, CertificateProviderError(.timestampInvalid, reason, openSSLErrors: texts))
    }

    /// A token's failure: its class, and the error said to the caller.
    private struct TimestampFailure: Error {
        let kind: TimestampFailureKind
        let error: CertificateProviderError
        init(_ kind: TimestampFailureKind, _ error: CertificateProviderError) {
            self.kind = kind
            self.error = error
        }
    }

    private static func statusName(_ status: Int) -> String {
        switch status {
        case 2: return "rejection"
        case 3: return "waiting"
        case 4: return "revocationWarning"
        case 5: return "revocationNotification"
        default: return "\(status)"
        }
    }

    private static func failureInfo(_ statusInfo: OpaquePointer) -> String {
        guard let bits = TS_STATUS_INFO_get0_failure_info(statusInfo) else { return "" }
        let names: [(Int32, String)] = [
            (TS_INFO_BAD_ALG, "badAlg"), (TS_INFO_BAD_REQUEST, "badRequest"),
            (TS_INFO_BAD_DATA_FORMAT, "badDataFormat"), (TS_INFO_TIME_NOT_AVAILABLE, "timeNotAvailable"),
            (TS_INFO_UNACCEPTED_POLICY, "unacceptedPolicy"), (TS_INFO_UNACCEPTED_EXTENSION, "unacceptedExtension"),
            (TS_INFO_ADD_INFO_NOT_AVAILABLE, "addInfoNotAvailable"), (TS_INFO_SYSTEM_FAILURE, "systemFailure"),
        ]
        let set = names.filter { ASN1_BIT_STRING_get_bit(bits, $0.0) == 1 }.map(\.1)
        return set.isEmpty ? "" : " (\(set.joined(separator: ", ")))"
    }

    private static func tsaName(_ info: OpaquePointer) -> String? {
        guard let name = TS_TST_INFO_get_tsa(info), name.pointee.type == GEN_DIRNAME,
            let directory = name.pointee.d.directoryName
        else { return nil }
        return X509Name.rfc2253(directory)
    }
}
