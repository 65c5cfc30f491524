internal import COpenSSL
internal import COpenSSLShims
import CertificateIssuing
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// `POST /tsa`: an RFC 3161 time-stamping authority on OpenSSL's `TS_RESP_CTX`
/// (`application/timestamp-query` → `application/timestamp-reply`), signing with the emulator's
/// TSA certificate (critical extendedKeyUsage timeStamping, under the emulator CA). It accepts
/// SHA-256, SHA-384 and SHA-512 imprints and puts the TSA certificate and CA into the token when
/// the request asks for certificates.
///
/// With ``DSSEmulator/Configuration/faultsEnabled`` the path picks a fault:
/// `/tsa/reject` (status rejection, failure info badRequest), `/tsa/wrong-nonce` (a token with
/// another nonce), `/tsa/wrong-imprint` (a token over another imprint), `/tsa/slow` or
/// `/tsa/slow=<ms>` (answers after a delay; default 2 000 ms, at most
/// ``DSSEmulator/Configuration/maxFaultDelayMilliseconds``).
struct TSARouter: EmulatorRouter {
    let pki: EmulatorPKI
    let configuration: DSSEmulator.Configuration
    /// Whether the emulator is stopping (a slow answer then ends early).
    let isStopping: @Sendable () -> Bool

    static let path = "/tsa"

    /// Faults selected by the path.
    enum Fault: Equatable {
        case reject, wrongNonce, wrongImprint
        case slow(milliseconds: Int)

        init?(pathComponent: String) {
            switch pathComponent {
            case "reject": self = .reject
            case "wrong-nonce": self = .wrongNonce
            case "wrong-imprint": self = .wrongImprint
            case "slow": self = .slow(milliseconds: 2000)
            default:
                guard pathComponent.hasPrefix("slow="), let milliseconds = Int(pathComponent.dropFirst(5)),
                    milliseconds >= 0
                else { return nil }
                self = .slow(milliseconds: milliseconds)
            }
        }
    }

    func owns(_ path: String) -> Bool { path == TSARouter.path || path.hasPrefix(TSARouter.path + "/") }

    /// Answers a timestamp request; the path's last component selects a TSA fault (`/tsa/reject`).
    func handle(_ request: ServerRequest, fault _: DSSEmulator.Fault?) -> ServerResponse {
        var fault: Fault?
        if request.path != TSARouter.path {
            let component = String(request.path.dropFirst(TSARouter.path.count + 1)).trimmingCharacters(
                in: CharacterSet(charactersIn: "/")
            )
            guard configuration.faultsEnabled, let parsed = Fault(pathComponent: component) else {
                return RevocationRouter.text(
                    404,
                    "no route for \(request.path) (TSA faults need the emulator's faults enabled)"
                )
            }
            fault = parsed
        }
        guard request.method == "POST" else {
            var response = RevocationRouter.text(405, "the TSA takes POST \(Self.queryType)")
            response.headers.append(("Allow", "POST"))
            return response
        }
        if request.bodyTooLarge {
            return RevocationRouter.text(413, "the request body is larger than \(configuration.maxBodyBytes) bytes")
        }
        guard (request.header("Content-Type") ?? "").lowercased().hasPrefix(Self.queryType) else {
            return RevocationRouter.text(415, "the TSA takes Content-Type \(Self.queryType)")
        }
        if case .slow(let milliseconds)? = fault {
            let deadline = Date().addingTimeInterval(
                Double(min(milliseconds, configuration.maxFaultDelayMilliseconds)) / 1000
            )
            while Date() < deadline, !isStopping() { usleep(10_000) }
        }
        guard let reply = try? respond(to: request.body, fault: fault) else {
            return RevocationRouter.text(400, "the body is not an RFC 3161 TimeStampReq")
        }
        return ServerResponse(status: 200, headers: [("Content-Type", Self.replyType)], body: reply)
    }

    static let queryType = "application/timestamp-query"
    static let replyType = "application/timestamp-reply"

    /// The DER TimeStampResp for a DER TimeStampReq (OpenSSL's own status answers for bad requests).
    func respond(to query: [UInt8], fault: Fault?) throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        if fault == .reject { return try Self.rejection() }
        var query = query
        if fault == .wrongNonce || fault == .wrongImprint {
            query = try Self.tamper(query, nonce: fault == .wrongNonce)
        }
        guard let context = TS_RESP_CTX_new() else { throw OpenSSLErrorQueue.error(.cryptoFailure, "TS_RESP_CTX_new") }
        defer { TS_RESP_CTX_free(context) }
        guard let policy = OBJ_txt2obj(EmulatorPKI.timestampPolicy, 1) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "policy OID")
        }
        defer { ASN1_OBJECT_free(policy) }
        let identity = pki.timestampIdentity
        guard let key = identity.key as? LocalSigningKey,
            TS_RESP_CTX_set_signer_cert(context, identity.certificate.handle.pointer) == 1,
            TS_RESP_CTX_set_signer_key(context, key.handle.pointer) == 1,
            TS_RESP_CTX_set_signer_digest(context, EVP_sha256()) == 1,
            TS_RESP_CTX_set_ess_cert_id_digest(context, EVP_sha256()) == 1,
            TS_RESP_CTX_set_def_policy(context, policy) == 1,
            TS_RESP_CTX_add_md(context, EVP_sha256()) == 1, TS_RESP_CTX_add_md(context, EVP_sha384()) == 1,
            TS_RESP_CTX_add_md(context, EVP_sha512()) == 1,
            TS_RESP_CTX_set_accuracy(context, 1, 0, 0) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not set up the TSA")
        }
        try CertificateProviderError.convertingOpenSSLErrors {
            try withX509Stack([pki.authority.certificate.handle]) { stack in
                guard TS_RESP_CTX_set_certs(context, stack) == 1 else {
                    throw OpenSSLErrorQueue.error(.cryptoFailure, "TS_RESP_CTX_set_certs")
                }
            }
        }
        TS_RESP_CTX_set_serial_cb(
            context,
            { _, _ in
                // A random positive 64-bit serial per token (RFC 3161 2.4.2: unique per TSA).
                var bytes = [UInt8](repeating: 0, count: 8)
                guard RAND_bytes(&bytes, 8) == 1, let number = BN_bin2bn(bytes, 8, nil) else { return nil }
                defer { BN_free(number) }
                return BN_to_ASN1_INTEGER(number, nil)
            },
            nil
        )
        let response: OpaquePointer? = try CertificateProviderError.convertingOpenSSLErrors {
            try MemoryBIO.withReadBIO(query) { TS_RESP_create_response(context, $0) }
        }
        guard let response else { throw OpenSSLErrorQueue.error(.cryptoFailure, "TS_RESP_create_response") }
        defer { TS_RESP_free(response) }
        return try Self.encode(response)
    }

    private static func encode(_ response: OpaquePointer) throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_TS_RESP(response, &output)
        guard length > 0, let output else { throw OpenSSLErrorQueue.error(.cryptoFailure, "i2d_TS_RESP") }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// A TimeStampResp with status rejection and failure info badRequest, no token.
    private static func rejection() throws -> [UInt8] {
        guard let response = TS_RESP_new(), let status = TS_STATUS_INFO_new() else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "TS_RESP_new")
        }
        defer {
            TS_RESP_free(response)
            TS_STATUS_INFO_free(status)
        }
        guard TS_STATUS_INFO_set_status(status, Int32(TS_STATUS_REJECTION)) == 1,
            TS_RESP_set_status_info(response, status) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "TS_STATUS_INFO_set_status")
        }
        return try encode(response)
    }

    /// The query with its nonce (or first imprint byte) changed, so the token answers another request.
    private static func tamper(_ query: [UInt8], nonce: Bool) throws -> [UInt8] {
        guard
            let request = query.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_TS_REQ(nil, &cursor, buffer.count)
            })
        else { return query }
        defer { TS_REQ_free(request) }
        if nonce {
            guard let number = BN_new() else { throw OpenSSLErrorQueue.error(.cryptoFailure, "BN_new") }
            defer { BN_free(number) }
            _ = BN_set_word(number, 0x5EED_0BAD)
            guard let integer = BN_to_ASN1_INTEGER(number, nil) else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "BN_to_ASN1_INTEGER")
            }
            defer { ASN1_INTEGER_free(integer) }
            _ = TS_REQ_set_nonce(request, integer)
        } else if let imprint = TS_REQ_get_msg_imprint(request), let message = TS_MSG_IMPRINT_get_msg(imprint),
            let data = message.pointee.data, message.pointee.length > 0
        {
            data[0] ^= 0xFF
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_TS_REQ(request, &output)
        guard length > 0, let output else { throw OpenSSLErrorQueue.error(.cryptoFailure, "i2d_TS_REQ") }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
