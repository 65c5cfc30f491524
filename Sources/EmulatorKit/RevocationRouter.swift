internal import COpenSSL
internal import COpenSSLShims
import CertificateIssuing
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// Revocation status for the emulator CA's certificates, signed by that CA:
/// - `POST /ocsp` (`application/ocsp-request` → `application/ocsp-response`, RFC 6960): `good`
///   for certificates the emulator issued, `revoked` (with the time) for those revoked with
///   ``DSSEmulator/revoke(_:at:)``, `unknown` for any other serial or issuer; the request's nonce
///   is echoed; thisUpdate now, nextUpdate in one hour.
/// - `GET /crl` (`application/pkix-crl`, DER, RFC 5280): a v2 CRL listing the revoked
///   certificates; thisUpdate now, nextUpdate in one day.
struct RevocationRouter: EmulatorRouter {
    let pki: EmulatorPKI

    static let ocspPath = "/ocsp"
    static let crlPath = "/crl"

    func owns(_ path: String) -> Bool { path == Self.ocspPath || path == Self.crlPath }

    /// Answers a CRL download or an OCSP request (the shared faults only).
    func handle(_ request: ServerRequest, fault: DSSEmulator.Fault?) -> ServerResponse {
        if request.path == Self.crlPath {
            guard request.method == "GET" || request.method == "HEAD" else { return Self.methodNotAllowed("GET") }
            guard let crl = try? makeCRL() else { return Self.text(500, "the CRL could not be made") }
            return ServerResponse(status: 200, headers: [("Content-Type", "application/pkix-crl")], body: crl)
        }
        guard request.method == "POST" else { return Self.methodNotAllowed("POST") }
        guard let answer = try? ocspResponse(to: request.body) else {
            return Self.text(500, "the OCSP response could not be made")
        }
        return ServerResponse(status: 200, headers: [("Content-Type", "application/ocsp-response")], body: answer)
    }

    static func text(_ status: Int, _ message: String) -> ServerResponse {
        ServerResponse(
            status: status,
            headers: [("Content-Type", "text/plain; charset=utf-8")],
            body: Array((message + "\n").utf8)
        )
    }

    private static func methodNotAllowed(_ method: String) -> ServerResponse {
        var response = text(405, "use \(method)")
        response.headers.append(("Allow", method))
        return response
    }

    // MARK: OCSP

    /// The DER OCSPResponse for a DER OCSPRequest (`malformedRequest` for bytes that are not one).
    func ocspResponse(to body: [UInt8]) throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard
            let request = body.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return buffer.count > 0 ? d2i_OCSP_REQUEST(nil, &cursor, buffer.count) : nil
            })
        else {
            return try Self.encode(status: OCSP_RESPONSE_STATUS_MALFORMEDREQUEST, basic: nil)
        }
        defer { OCSP_REQUEST_free(request) }
        guard let basic = OCSP_BASICRESP_new() else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "OCSP_BASICRESP_new")
        }
        defer { OCSP_BASICRESP_free(basic) }
        let ca = pki.authority.certificate.handle.pointer
        let revoked = Dictionary(
            pki.revoked.map { ($0.serialNumber, $0.date) },
            uniquingKeysWith: { first, _ in first }
        )
        guard let thisUpdate = ASN1_TIME_set(nil, time(nil)), let nextUpdate = X509_time_adj_ex(nil, 0, 3600, nil)
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "ASN1_TIME_set")
        }
        defer {
            ASN1_TIME_free(thisUpdate)
            ASN1_TIME_free(nextUpdate)
        }
        let count = OCSP_request_onereq_count(request)
        for index in 0..<count {
            guard let one = OCSP_request_onereq_get0(request, index), let certificateID = OCSP_onereq_get0_id(one)
            else { continue }
            var digestObject: OpaquePointer?
            var serial: UnsafeMutablePointer<ASN1_INTEGER>?
            _ = OCSP_id_get0_info(nil, &digestObject, nil, &serial, certificateID)
            var status = V_OCSP_CERTSTATUS_UNKNOWN
            var revocationTime: ASN1TimeHandle?
            defer { withExtendedLifetime(revocationTime) {} }
            if let digest = EVP_get_digestbyname(OBJ_nid2sn(OBJ_obj2nid(digestObject))),
                let caID = OCSP_cert_to_id(digest, nil, ca)
            {
                defer { OCSP_CERTID_free(caID) }
                if OCSP_id_issuer_cmp(caID, certificateID) == 0, let hex = serial.flatMap(Self.hex) {
                    if let date = revoked[hex] {
                        status = V_OCSP_CERTSTATUS_REVOKED
                        revocationTime = try CertificateProviderError.convertingOpenSSLErrors {
                            try ASN1TimeHandle(date)
                        }
                    } else if pki.knownSerials.contains(hex) {
                        status = V_OCSP_CERTSTATUS_GOOD
                    }
                }
            }
            ERR_clear_error()
            guard
                OCSP_basic_add1_status(
                    basic,
                    certificateID,
                    status,
                    status == V_OCSP_CERTSTATUS_REVOKED ? OCSP_REVOKED_STATUS_UNSPECIFIED : -1,
                    revocationTime.map { UnsafeMutablePointer<ASN1_TIME>($0.pointer) },
                    thisUpdate,
                    nextUpdate
                ) != nil
            else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "OCSP_basic_add1_status")
            }
        }
        _ = OCSP_copy_nonce(basic, request)
        guard let key = pki.authority.key.handle.pointer as OpaquePointer?,
            OCSP_basic_sign(basic, ca, key, EVP_sha256(), nil, 0) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "OCSP_basic_sign")
        }
        return try Self.encode(status: OCSP_RESPONSE_STATUS_SUCCESSFUL, basic: basic)
    }

    private static func encode(status: Int32, basic: OpaquePointer?) throws -> [UInt8] {
        guard let response = OCSP_response_create(status, basic) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "OCSP_response_create")
        }
        defer { OCSP_RESPONSE_free(response) }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_OCSP_RESPONSE(response, &output)
        guard length > 0, let output else { throw OpenSSLErrorQueue.error(.cryptoFailure, "i2d_OCSP_RESPONSE") }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// An ASN.1 INTEGER as normalized upper-case hex.
    private static func hex(_ integer: UnsafeMutablePointer<ASN1_INTEGER>) -> String? {
        guard let number = ASN1_INTEGER_to_BN(integer, nil) else { return nil }
        defer { BN_free(number) }
        guard let text = BN_bn2hex(number) else { return nil }
        defer { COpenSSLShims_OPENSSL_free(text) }
        return EmulatorPKI.normalized(String(cString: text))
    }

    // MARK: CRL

    /// The DER CRL of the revoked certificates, signed by the CA.
    func makeCRL() throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let crl = X509_CRL_new() else { throw OpenSSLErrorQueue.error(.cryptoFailure, "X509_CRL_new") }
        defer { X509_CRL_free(crl) }
        let ca = pki.authority.certificate.handle.pointer
        guard let lastUpdate = ASN1_TIME_set(nil, time(nil)), let nextUpdate = X509_time_adj_ex(nil, 1, 0, nil) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "ASN1_TIME_set")
        }
        defer {
            ASN1_TIME_free(lastUpdate)
            ASN1_TIME_free(nextUpdate)
        }
        guard X509_CRL_set_version(crl, 1) == 1, X509_CRL_set_issuer_name(crl, X509_get_subject_name(ca)) == 1,
            X509_CRL_set1_lastUpdate(crl, lastUpdate) == 1, X509_CRL_set1_nextUpdate(crl, nextUpdate) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not fill the CRL")
        }
        for revocation in pki.revoked {
            guard let entry = X509_REVOKED_new() else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "X509_REVOKED_new")
            }
            var number: OpaquePointer?
            guard BN_hex2bn(&number, revocation.serialNumber) > 0, let number else {
                X509_REVOKED_free(entry)
                throw OpenSSLErrorQueue.error(.cryptoFailure, "BN_hex2bn")
            }
            defer { BN_free(number) }
            guard let serial = BN_to_ASN1_INTEGER(number, nil) else {
                X509_REVOKED_free(entry)
                throw OpenSSLErrorQueue.error(.cryptoFailure, "serial")
            }
            defer { ASN1_INTEGER_free(serial) }
            guard let date = try? ASN1TimeHandle(revocation.date) else {
                X509_REVOKED_free(entry)
                throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the revocation date \(revocation.date)")
            }
            defer { withExtendedLifetime(date) {} }
            guard X509_REVOKED_set_serialNumber(entry, serial) == 1,
                X509_REVOKED_set_revocationDate(entry, UnsafeMutablePointer<ASN1_TIME>(date.pointer)) == 1,
                X509_CRL_add0_revoked(crl, entry) == 1
            else {
                X509_REVOKED_free(entry)
                throw OpenSSLErrorQueue.error(.cryptoFailure, "could not add a CRL entry")
            }
        }
        guard X509_CRL_sort(crl) == 1, X509_CRL_sign(crl, pki.authority.key.handle.pointer, EVP_sha256()) > 0 else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not sign the CRL")
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_CRL(crl, &output)
        guard length > 0, let output else { throw OpenSSLErrorQueue.error(.cryptoFailure, "i2d_X509_CRL") }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
