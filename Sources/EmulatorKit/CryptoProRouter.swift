import CMS
import CertificateProviders
import Dispatch
import Foundation
import JSON

/// The OAuth clients the emulator's CryptoPro STS accepts.
public enum CryptoProEmulatorClients {
    /// A public client (no secret), the default of `CryptoProDSSClient`.
    public static let publicClientID = "cryptopro.cloud.csp"
    /// A confidential client: it must authenticate with HTTP Basic (``confidentialClientSecret``).
    public static let confidentialClientID = "certsign.confidential"
    /// The secret of ``confidentialClientID``.
    public static let confidentialClientSecret = "Conf1dential-Secret"
    /// The only resource the STS issues tokens for.
    public static let resource = "urn:cryptopro:dss:signserver:signserver"
}

/// The CryptoPro DSS route subset of ARCHITECTURE.md ("CryptoPro DSS"), served from the same
/// ``EmulatorStore`` as the FMP routes: same users (platform login and password), same certificates,
/// keys and PINs.
///
/// - `POST /STS/oauth/token` (form, `grant_type=password`): `{"access_token","expires_in","token_type":"Bearer"}`;
///   OAuth errors are `{"error","error_description","Message"}` with 400 (RFC 6749 §5.2) or 401 for a
///   wrong client secret.
/// - `GET /SignServer/rest/api/certificates`: `[{"ID","DName","CertificateBase64","Status","IsDefault","HasPin","FriendlyName"}]`;
///   the user's first certificate is the default.
/// - `POST /SignServer/rest/api/documents`: a JSON string holding the base64 CMS. Types `CAdES`
///   (`CADESType` `BES`) and `CMS`; `IsDetached` and `Hash` are the strings `True`/`False`; with
///   `Hash: True` the `Content` is a SHA-256/384/512 digest (chosen by its length) for RSA and EC
///   certificates, the Streebog digest that fits the key (`DigestAlgorithm.preferred(for:)`) for
///   GOST ones, and the signature is detached.
///
/// Every error is `{"Message": …}` with a 4xx/5xx status. Tokens issued here belong to the pseudo
/// device ``tokenDevice``, so FMP routes refuse them and this router refuses FMP tokens.
struct CryptoProRouter: EmulatorRouter, OAuthTokenRoute {
    let store: EmulatorStore
    let configuration: DSSEmulator.Configuration
    /// The transactions that wait for the user's confirmation.
    let approvals: EmulatorApprovals

    /// The device recorded in CryptoPro tokens.
    static let tokenDevice = "\u{0}cryptopro-sts"
    static let tokenPath = "/STS/oauth/token"
    static let certificatesPath = "/SignServer/rest/api/certificates"
    static let documentsPath = "/SignServer/rest/api/documents"
    static let transactionsPath = "/SignServer/rest/api/transactions"

    /// The routes this router owns start with `/STS/` or `/SignServer/`.
    func owns(_ path: String) -> Bool { path.hasPrefix("/STS/") || path.hasPrefix("/SignServer/") }

    /// Answers one request; the `expired-token` fault makes the presented bearer token expire first.
    func handle(_ request: ServerRequest, fault: DSSEmulator.Fault?) -> ServerResponse {
        let expireToken = fault == .expiredToken
        var path = request.path
        if path.count > 1, path.hasSuffix("/") { path.removeLast() }
        switch path {
        case CryptoProRouter.tokenPath:
            return only("POST", request) { token(request) }
        case CryptoProRouter.certificatesPath:
            return only("GET", request) { authorized(request, expireToken) { certificates($0) } }
        case CryptoProRouter.documentsPath:
            return only("POST", request) { authorized(request, expireToken) { sign(request, $0) } }
        case CryptoProRouter.transactionsPath:
            return only("POST", request) { authorized(request, expireToken) { startTransaction(request, $0) } }
        case _ where path.hasPrefix(CryptoProRouter.transactionsPath + "/"):
            let id = String(path.dropFirst(CryptoProRouter.transactionsPath.count + 1))
            return only("GET", request) { authorized(request, expireToken) { transaction(id, $0) } }
        default:
            return CryptoProRouter.error(404, "no route for \(request.path)")
        }
    }

    /// A CryptoPro error body: `{"Message": …}` (CryptoPro's errors carry no code).
    func error(_ status: Int, code: String, _ message: String) -> ServerResponse {
        CryptoProRouter.error(status, message)
    }

    /// A CryptoPro error body: `{"Message": …}`.
    static func error(_ status: Int, _ message: String) -> ServerResponse {
        Reply.json(status, ["Message": .string(message)])
    }

    private func only(_ method: String, _ request: ServerRequest, _ body: () -> ServerResponse) -> ServerResponse {
        guard request.method == method else {
            var response = CryptoProRouter.error(
                405,
                "The requested resource does not support http method '\(request.method)'; use \(method)"
            )
            response.headers.append(("Allow", method))
            return response
        }
        if request.bodyTooLarge {
            return CryptoProRouter.error(413, "the request body is larger than \(configuration.maxBodyBytes) bytes")
        }
        return body()
    }

    // MARK: STS

    private func oauthError(_ status: Int, _ code: String, _ description: String) -> ServerResponse {
        Reply.json(
            status,
            ["error": .string(code), "error_description": .string(description), "Message": .string(description)]
        )
    }

    private func token(_ request: ServerRequest) -> ServerResponse {
        let form: [String: String]
        do {
            form = try OAuthToken.form(
                of: request,
                grantType: "password",
                required: ["grant_type", "username", "password", "client_id", "resource"]
            )
        } catch {
            return oauthError(error.status, error.code, error.description)
        }
        let clientID = form["client_id"] ?? ""
        switch clientID {
        case CryptoProEmulatorClients.publicClientID:
            break
        case CryptoProEmulatorClients.confidentialClientID:
            guard let basic = OAuthToken.basicCredentials(request.header("Authorization")),
                basic.user == CryptoProEmulatorClients.confidentialClientID,
                Secret(basic.password) == Secret(CryptoProEmulatorClients.confidentialClientSecret)
            else {
                return oauthError(
                    401,
                    "invalid_client",
                    "client '\(clientID)' must authenticate with HTTP Basic and its secret"
                )
            }
        default:
            return oauthError(400, "invalid_client", "unknown client_id '\(clientID)'")
        }
        guard form["resource"] == CryptoProEmulatorClients.resource else {
            return oauthError(
                400,
                "invalid_target",
                "unknown resource '\(form["resource"] ?? "")'; use \(CryptoProEmulatorClients.resource)"
            )
        }
        guard let user = store.user(named: form["username"] ?? ""), user.password == Secret(form["password"] ?? "")
        else {
            return oauthError(400, "invalid_grant", "the user name or password is incorrect")
        }
        return tokenReply(for: user)
    }

    private func authorized(
        _ request: ServerRequest,
        _ expireToken: Bool,
        _ body: (EmulatorSeed.User) -> ServerResponse
    ) -> ServerResponse {
        guard let token = request.bearerToken else {
            return CryptoProRouter.error(
                401,
                "Authorization has been denied for this request: send Authorization: Bearer <token>"
            )
        }
        if expireToken { store.expireAccessToken(token) }
        guard case .valid(let session) = store.lookUpAccessToken(token), session.device == CryptoProRouter.tokenDevice,
            let user = store.user(named: session.username)
        else {
            return CryptoProRouter.error(
                401,
                "Authorization has been denied for this request: the token is unknown or expired"
            )
        }
        return body(user)
    }

    // MARK: SignServer

    private func certificates(_ user: EmulatorSeed.User) -> ServerResponse {
        let list: [JSONValue] = user.certificates.enumerated().map { index, record in
            let certificate = record.identity.certificate
            return [
                "ID": .integer(record.id),
                "DName": .string(certificate.subject),
                "CertificateBase64": .string(Data(certificate.derRepresentation).base64EncodedString()),
                "Status": .string(certificate.isValid() ? "ACTIVE" : "EXPIRED"),
                "IsDefault": .bool(index == 0),
                "HasPin": .bool(record.pin != nil),
                "FriendlyName": .string(certificate.subjectAttribute("CN") ?? certificate.subject),
            ]
        }
        return Reply.json(200, .array(list))
    }

    struct SignRequest {
        var content: [UInt8]
        var format: SignatureFormat
        var detached: Bool
        var isHash: Bool
        var certificateID: Int
        var pin: String?
    }

    func parseSign(_ body: [UInt8]) throws -> SignRequest {
        let reader = try Reply.jsonObject(body)
        for key in reader.members.keys where !["Content", "Signature"].contains(key) {
            throw CertificateProviderError(.malformedInput, "unknown field '\(key)' (known: Content, Signature)")
        }
        let content = try reader.base64("Content")
        let signature = try reader.object("Signature")
        for key in signature.members.keys where !["Type", "Parameters", "CertificateId", "PinCode"].contains(key) {
            throw CertificateProviderError(
                .malformedInput,
                "unknown field 'Signature.\(key)' (known: Type, Parameters, CertificateId, PinCode)"
            )
        }
        let type = try signature.string("Type")
        guard type == "CAdES" || type == "CMS" else {
            throw CertificateProviderError(
                .malformedInput,
                "signature type '\(type)' is not supported (supported: CAdES, CMS)"
            )
        }
        let parameters = try signature.object("Parameters")
        let allowed: Set<String> = type == "CAdES" ? ["CADESType", "IsDetached", "Hash"] : ["IsDetached", "Hash"]
        for key in parameters.members.keys where !allowed.contains(key) {
            throw CertificateProviderError(
                .malformedInput,
                "unknown signature parameter '\(key)' for \(type) (known: \(allowed.sorted().joined(separator: ", ")))"
            )
        }
        func flag(_ key: String) throws -> Bool {
            guard let value = try parameters.optionalString(key) else { return false }
            switch value {
            case "True": return true
            case "False": return false
            default:
                throw CertificateProviderError(
                    .malformedInput,
                    "signature parameter '\(key)' must be \"True\" or \"False\", found \"\(value)\""
                )
            }
        }
        let format: SignatureFormat
        switch type {
        case "CAdES":
            let level = try parameters.string("CADESType")
            guard level == "BES" else {
                throw CertificateProviderError(
                    .malformedInput,
                    "CADESType '\(level)' is not supported by this server (supported: BES)"
                )
            }
            format = .cadesBES
        case "CMS":
            format = .cms
        default:
            throw CertificateProviderError(
                .malformedInput,
                "signature type '\(type)' is not supported (supported: CAdES, CMS)"
            )
        }
        let detached = try flag("IsDetached")
        let isHash = try flag("Hash")
        if isHash, !detached {
            throw CertificateProviderError(
                .malformedInput,
                "a signature of a hash (Hash: True) must be detached (IsDetached: True)"
            )
        }
        return SignRequest(
            content: content,
            format: format,
            detached: detached,
            isHash: isHash,
            certificateID: try signature.int("CertificateId"),
            pin: try signature.optionalString("PinCode")
        )
    }

    private func sign(_ request: ServerRequest, _ user: EmulatorSeed.User) -> ServerResponse {
        switch accepted(request.body, user) {
        case .failure(let refusal): return refusal.response
        case .success(let (parsed, record, digestAlgorithm)):
            return signature(parsed, record: record, digestAlgorithm: digestAlgorithm)
        }
    }

    /// A sign request checked against the user's certificates and PINs: what to sign, with which
    /// certificate and (for `Hash: True`) which digest algorithm, or the refusal to answer.
    func accepted(
        _ body: [UInt8],
        _ user: EmulatorSeed.User,
        pinChecked: Bool = false
    ) -> Result<(SignRequest, EmulatorSeed.CertificateRecord, DigestAlgorithm?), Refusal> {
        func refuse(
            _ status: Int,
            _ message: String
        ) -> Result<(SignRequest, EmulatorSeed.CertificateRecord, DigestAlgorithm?), Refusal> {
            .failure(Refusal(response: CryptoProRouter.error(status, message)))
        }
        let parsed: SignRequest
        do {
            parsed = try parseSign(body)
        } catch {
            return refuse(400, (error as? CertificateProviderError)?.reason ?? "the request body is malformed")
        }
        let record: EmulatorSeed.CertificateRecord?
        if parsed.certificateID == 0 {
            record = user.certificates.first
        } else {
            record = user.certificates.first { $0.id == parsed.certificateID }
        }
        guard let record else {
            return refuse(
                404,
                parsed.certificateID == 0
                    ? "the user has no default certificate"
                    : "certificate \(parsed.certificateID) was not found for this user"
            )
        }
        if let expected = record.pin, !pinChecked {
            guard let pin = parsed.pin, Secret(pin) == expected else {
                return refuse(
                    403,
                    parsed.pin == nil
                        ? "the PIN code of certificate \(record.id) is required (PinCode)"
                        : "the PIN code of certificate \(record.id) is wrong"
                )
            }
        }
        return Self.digestAlgorithm(of: parsed, for: record).map { (parsed, record, $0) }
    }

    /// The CMS the server makes for an accepted request, as the JSON string of its base64.
    func signature(
        _ parsed: SignRequest,
        record: EmulatorSeed.CertificateRecord,
        digestAlgorithm: DigestAlgorithm?
    ) -> ServerResponse {
        let cms: [UInt8]
        do {
            // Synchronous: this runs on a libmicrohttpd thread, which must not wait for the
            // cooperative pool (see EmulatorSigner).
            if let digestAlgorithm {
                let now = Date()
                cms = try CMSSigner.signSynchronously(
                    .detached(
                        digest: parsed.content,
                        format: parsed.format,
                        digestAlgorithm: digestAlgorithm,
                        signingTime: now
                    ),
                    signingTime: now,
                    identity: record.identity
                )
            } else {
                cms = try CMSSigner.signSynchronously(
                    content: parsed.content,
                    identity: record.identity,
                    format: parsed.format,
                    detached: parsed.detached
                )
            }
        } catch {
            return CryptoProRouter.error(500, "the server could not sign: \(error)")
        }
        return Reply.json(200, .string(Data(cms).base64EncodedString()))
    }

    /// A refused request, as the answer to send.
    struct Refusal: Error {
        let response: ServerResponse
    }

    /// The digest algorithm a `Hash: True` request's content is a digest of (nil for a document):
    /// Streebog for a GOST key, else SHA-256/384/512 by length.
    private static func digestAlgorithm(
        of parsed: SignRequest,
        for record: EmulatorSeed.CertificateRecord
    ) -> Result<DigestAlgorithm?, Refusal> {
        guard parsed.isHash else { return .success(nil) }
        let keyAlgorithm = record.identity.certificate.publicKeyAlgorithm
        if keyAlgorithm.isGOST {
            // A GOST key signs one digest: a 32-byte hash is Streebog-256 here, never SHA-256.
            guard let fitting = try? DigestAlgorithm.preferred(for: keyAlgorithm),
                fitting.outputByteCount == parsed.content.count
            else {
                return .failure(
                    Refusal(
                        response: error(
                            400,
                            "a hash for the \(keyAlgorithm.family) certificate \(record.id) must be its GOST R 34.11-2012 "
                                + "digest, not \(parsed.content.count) bytes"
                        )
                    )
                )
            }
            return .success(fitting)
        }
        guard
            let sha = [DigestAlgorithm.sha256, .sha384, .sha512].first(where: {
                $0.outputByteCount == parsed.content.count
            })
        else {
            return .failure(
                Refusal(
                    response: error(
                        400,
                        "a hash must be a SHA-256, SHA-384 or SHA-512 digest (32, 48 or 64 bytes), not "
                            + "\(parsed.content.count) bytes"
                    )
                )
            )
        }
        return .success(sha)
    }
}
