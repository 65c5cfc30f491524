import CertificateProviders
import Foundation
import JSON
import Synchronization

/// What the emulator's CSC API v2 routes serve, over the emulator's users and keys.
///
/// - OAuth 2.0 clients: `client_id` is a user name and `client_secret` that user's platform
///   password (`Leonid` / `123123`); the secret goes in the form or as HTTP Basic.
/// - Credentials: one per certificate of the user, its ID the certificate id as a string. A
///   credential whose key has a PIN asks for it (`auth.mode` `explicit`, object `PIN`); the others
///   are `implicit`. ``scal2CredentialID`` (Leonid's RSA key) has SCAL 2; ``otpCredentialID``
///   (Maria's key) asks for the PIN and the one-time password ``otp``.
public enum CSCEmulatorCredentials {
    /// The credential with SCAL 2 (Leonid's RSA-2048 key, no PIN).
    public static let scal2CredentialID = String(StandardSeed.secondCertificateID)
    /// The credential that asks for a PIN and an OTP (Maria's EC key, PIN `456`).
    public static let otpCredentialID = "12900"
    /// The one-time password the emulator accepts (it never changes: a development server).
    public static let otp = "246810"
    /// How many signatures one authorization allows (`multisign`) unless
    /// ``DSSEmulator/Configuration/cscSignaturesPerAuthorization`` says otherwise.
    public static let multisign = 100
    /// Seconds a SAD stays valid (`expiresIn`).
    public static let sadLifetime = 300
}

/// The emulator's signature activation data (SADs), shared by every request.
final class CSCSADStore: Sendable {
    struct Entry: Sendable {
        var username: String
        var credentialID: String
        var remaining: Int
        /// The authorized hashes (SCAL 2), base64; nil for SCAL 1.
        var hashes: Set<String>?
        var expiresAt: Date
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// The SAD issued for each approved authorization handle, so that asking again gives the same one.
    private let issuedForHandles = Mutex<[String: String]>([:])

    func issue(_ entry: Entry) -> String {
        var generator = SystemRandomNumberGenerator()
        let sad = (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        entries.withLock { entries in
            if entries.count >= 4096 {
                let now = Date()
                entries = entries.filter { $0.value.expiresAt > now }
            }
            entries[sad] = entry
        }
        return sad
    }

    /// The SAD of an approved authorization: issued the first time `handle` asks, the same one after
    /// (a client that lost the answer, or a new client polling the same handle, gets it again).
    func issue(_ entry: Entry, forHandle handle: String) -> (sad: String, expiresAt: Date) {
        issuedForHandles.withLock { issued in
            if let sad = issued[handle], let expiresAt = entries.withLock({ $0[sad]?.expiresAt }) {
                return (sad, expiresAt)
            }
            let sad = issue(entry)
            issued[handle] = sad
            return (sad, entry.expiresAt)
        }
    }

    /// Uses `hashes.count` signatures of a SAD: the entry before use, or why it cannot be used.
    func consume(
        _ sad: String,
        username: String,
        credentialID: String,
        hashes: [String],
        expireFirst: Bool
    ) -> Result<Entry, CSCRouter.Failure> {
        entries.withLock { entries in
            if expireFirst { entries[sad]?.expiresAt = .distantPast }
            guard let entry = entries[sad], entry.username == username, entry.credentialID == credentialID else {
                return .failure(.init(400, "invalid_request", "Invalid parameter SAD: unknown SAD for this credential"))
            }
            guard entry.expiresAt > Date() else {
                entries[sad] = nil
                return .failure(.init(400, "invalid_request", "SAD expired"))
            }
            guard entry.remaining >= hashes.count else {
                return .failure(
                    .init(
                        400,
                        "invalid_request",
                        "SAD used up: it allows \(entry.remaining) more signatures, not \(hashes.count)"
                    )
                )
            }
            if let authorized = entry.hashes, let stray = hashes.first(where: { !authorized.contains($0) }) {
                return .failure(
                    .init(
                        400,
                        "invalid_request",
                        "Invalid parameter hashes: hash \(stray) was not authorized by the SAD (SCAL 2)"
                    )
                )
            }
            var updated = entry
            updated.remaining -= hashes.count
            if let authorized = entry.hashes { updated.hashes = authorized.subtracting(hashes) }
            // A used-up SAD is kept until it expires, so a reuse is told apart from an unknown SAD.
            entries[sad] = updated
            return .success(entry)
        }
    }
}

/// The CSC API v2 subset of ARCHITECTURE.md ("CSC API v2"; the field table is in the CSC issue),
/// served from the same ``EmulatorStore`` as the other APIs (see ``CSCEmulatorCredentials``):
///
/// - `POST /csc/v2/info` (no token): `{specs, name, region, lang, authType, oauth2, methods, signAlgorithms}`;
/// - `POST /oauth2/token` (form, `grant_type=client_credentials`): `{access_token, token_type, expires_in}`;
/// - `POST /csc/v2/credentials/list`, `…/credentials/info`, `…/credentials/authorize`,
///   `…/credentials/authorizeCheck`, `POST /csc/v2/signatures/signHash`, `…/signatures/signPolling`
///   with `Authorization: Bearer`.
///
/// Errors are `{"error", "error_description"}`: 400 `invalid_request` (unknown fields, wrong
/// values, an unknown, expired or used-up SAD), `invalid_pin`, `invalid_otp`; 401 `invalid_token` /
/// `expired_token`; 401 `invalid_client` at the token endpoint. Faults: `expired-token` expires the
/// presented token first; `sad-expired` makes signHash find its SAD expired; `wrong-hash` makes
/// signHash sign another hash than the one sent.
struct CSCRouter: EmulatorRouter, OAuthTokenRoute {
    /// An error answer.
    struct Failure: Error {
        var status: Int
        var code: String
        var description: String
        init(_ status: Int, _ code: String, _ description: String) {
            self.status = status
            self.code = code
            self.description = description
        }
    }

    let store: EmulatorStore
    let configuration: DSSEmulator.Configuration
    let sads: CSCSADStore
    /// The operations of asynchronous `signHash` calls, waiting for a person.
    let approvals: EmulatorApprovals
    /// The emulator's base URL, for `info.oauth2`.
    let baseURL: URL?

    /// The device recorded in CSC tokens (so no other API accepts them, and this one no other's).
    static let tokenDevice = "\u{0}csc"
    static let tokenPath = "/oauth2/token"
    static let methodPrefix = "/csc/v2/"

    func owns(_ path: String) -> Bool { path.hasPrefix(CSCRouter.methodPrefix) || path == CSCRouter.tokenPath }

    func handle(_ request: ServerRequest, fault: DSSEmulator.Fault?) -> ServerResponse {
        guard request.method == "POST" else {
            var response = CSCRouter.reply(Failure(405, "invalid_request", "use POST for \(request.path)"))
            response.headers.append(("Allow", "POST"))
            return response
        }
        if request.bodyTooLarge {
            return CSCRouter.reply(
                Failure(413, "invalid_request", "the request body is larger than \(configuration.maxBodyBytes) bytes")
            )
        }
        do {
            if request.path == CSCRouter.tokenPath { return try token(request) }
            let method = String(request.path.dropFirst(CSCRouter.methodPrefix.count))
            let body = try CSCRouter.object(request.body)
            if method == "info" { return info(body) }
            let user = try authorized(request, expireFirst: fault == .expiredToken)
            switch method {
            case "credentials/list": return try list(body, user)
            case "credentials/info": return try credentialInfo(body, user)
            case "credentials/authorize": return try authorize(body, user)
            case "signatures/signHash":
                return try signHash(body, user, sadExpired: fault == .sadExpired, wrongHash: fault == .wrongHash)
            case "signatures/signPolling": return try signPolling(body, user)
            case "credentials/authorizeCheck": return try authorizeCheck(body, user)
            default: throw Failure(404, "invalid_request", "no CSC method \(method)")
            }
        } catch let failure as Failure {
            return CSCRouter.reply(failure)
        } catch {
            return CSCRouter.reply(
                Failure(
                    400,
                    "invalid_request",
                    (error as? CertificateProviderError)?.reason ?? "the request is malformed"
                )
            )
        }
    }

    static func reply(_ failure: Failure) -> ServerResponse {
        Reply.json(failure.status, ["error": .string(failure.code), "error_description": .string(failure.description)])
    }

    // MARK: OAuth 2.0

    private func token(_ request: ServerRequest) throws -> ServerResponse {
        let form: [String: String]
        do {
            form = try OAuthToken.form(of: request, grantType: "client_credentials")
        } catch {
            throw Failure(error.status, error.code, error.description)
        }
        var clientID = form["client_id"]
        var secret = form["client_secret"]
        if let basic = OAuthToken.basicCredentials(request.header("Authorization")) {
            guard clientID == nil || clientID == basic.user else {
                throw Failure(400, "invalid_request", "client_id differs from the HTTP Basic user")
            }
            clientID = basic.user
            secret = basic.password
        }
        guard let clientID, !clientID.isEmpty else {
            throw Failure(400, "invalid_request", "form field 'client_id' is missing")
        }
        guard let user = store.user(named: clientID), let secret, user.password == Secret(secret) else {
            throw Failure(401, "invalid_client", "client authentication failed")
        }
        return tokenReply(for: user)
    }

    private func authorized(_ request: ServerRequest, expireFirst: Bool) throws -> EmulatorSeed.User {
        guard let token = request.bearerToken else {
            throw Failure(401, "invalid_token", "send Authorization: Bearer <access token>")
        }
        if expireFirst { store.expireAccessToken(token) }
        switch store.lookUpAccessToken(token) {
        case .valid(let session) where session.device == CSCRouter.tokenDevice:
            guard let user = store.user(named: session.username) else {
                throw Failure(401, "invalid_token", "the token's client is gone")
            }
            return user
        case .expired: throw Failure(401, "expired_token", "the access token has expired")
        default: throw Failure(401, "invalid_token", "the access token is unknown")
        }
    }

    // MARK: Methods

    private func info(_ body: JSONObjectReader) -> ServerResponse {
        let oauth2 = (baseURL?.absoluteString ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        return Reply.json(
            200,
            [
                "specs": "2.0.0.0", "name": "DSS Emulator (swift-certificate-providers)", "region": "RU",
                "lang": "en-US",
                "description": "a development CSC service with real keys and no real users",
                "authType": ["oauth2client"], "oauth2": .string(oauth2),
                "methods": [
                    "info", "oauth2/token", "credentials/list", "credentials/info", "credentials/authorize",
                    "credentials/authorizeCheck", "signatures/signHash", "signatures/signPolling",
                ],
                "signAlgorithms": [
                    "algos": .array((CSCRouter.rsaAlgorithms + CSCRouter.ecdsaAlgorithms).map { .string($0) })
                ],
            ]
        )
    }

    private func list(_ body: JSONObjectReader, _ user: EmulatorSeed.User) throws -> ServerResponse {
        try CSCRouter.allowOnly(
            body,
            [
                "userID", "credentialInfo", "certificates", "certInfo", "authInfo", "onlyValid", "lang", "clientData",
                "maxResults", "pageToken",
            ]
        )
        let ids = CSCRouter.credentials(of: user).map { String($0.id) }
        var answer: [String: JSONValue] = ["credentialIDs": .array(ids.map { .string($0) })]
        if try CSCRouter.flag(body, "credentialInfo") {
            answer["credentialInfos"] = .array(
                try CSCRouter.credentials(of: user).map { record in
                    var info = try describe(
                        record,
                        certificates: try body.optionalString("certificates") ?? "single",
                        certInfo: try CSCRouter.flag(body, "certInfo"),
                        authInfo: try CSCRouter.flag(body, "authInfo")
                    )
                    info["credentialID"] = .string(String(record.id))
                    return .object(info)
                }
            )
        }
        return Reply.json(200, .object(answer))
    }

    private func credentialInfo(_ body: JSONObjectReader, _ user: EmulatorSeed.User) throws -> ServerResponse {
        try CSCRouter.allowOnly(body, ["credentialID", "certificates", "certInfo", "authInfo", "lang", "clientData"])
        let record = try credential(try body.string("credentialID"), of: user)
        return Reply.json(
            200,
            .object(
                try describe(
                    record,
                    certificates: try body.optionalString("certificates") ?? "single",
                    certInfo: try CSCRouter.flag(body, "certInfo"),
                    authInfo: try CSCRouter.flag(body, "authInfo")
                )
            )
        )
    }

    private func authorize(_ body: JSONObjectReader, _ user: EmulatorSeed.User) throws -> ServerResponse {
        try CSCRouter.allowOnly(
            body,
            ["credentialID", "numSignatures", "hashes", "hashAlgorithmOID", "authData", "description", "clientData"]
        )
        let credentialID = try body.string("credentialID")
        let record = try credential(credentialID, of: user)
        let count = try body.int("numSignatures")
        let multisign = configuration.cscSignaturesPerAuthorization
        guard (1...multisign).contains(count) else {
            throw Failure(400, "invalid_request", "Invalid parameter numSignatures: 1…\(multisign), not \(count)")
        }
        var hashes: Set<String>?
        if CSCRouter.scal(of: record) == 2 {
            guard body.value("hashes") != nil else {
                throw Failure(400, "invalid_request", "Missing parameter hashes: the credential has SCAL 2")
            }
            let list = try CSCRouter.hashes(body, algorithm: try CSCRouter.digest(body))
            guard list.count == count else {
                throw Failure(
                    400,
                    "invalid_request",
                    "Invalid parameter hashes: \(list.count) hashes for numSignatures \(count)"
                )
            }
            hashes = Set(list.map { Data($0).base64EncodedString() })
        } else if body.value("hashes") != nil {
            _ = try CSCRouter.hashes(body, algorithm: try CSCRouter.digest(body))
        }
        var given: [String: String] = [:]
        if body.value("authData") != nil {
            for entry in try body.objects("authData") {
                let id = try entry.string("id")
                guard id == "PIN" || id == "OTP", given[id] == nil else {
                    throw Failure(400, "invalid_request", "Invalid parameter authData: id '\(id)'")
                }
                given[id] = try entry.string("value")
            }
        }
        if let pin = record.pin {
            guard let value = given["PIN"] else {
                throw Failure(400, "invalid_request", "Missing parameter authData: the credential asks for its PIN")
            }
            guard Secret(value) == pin else { throw Failure(400, "invalid_pin", "Invalid PIN") }
        } else if given["PIN"] != nil {
            throw Failure(400, "invalid_request", "Invalid parameter authData: the credential has no PIN")
        }
        if CSCRouter.asksForOTP(record) {
            guard let value = given["OTP"] else {
                throw Failure(400, "invalid_request", "Missing parameter authData: the credential asks for an OTP")
            }
            guard Secret(value) == Secret(CSCEmulatorCredentials.otp) else {
                throw Failure(400, "invalid_otp", "Invalid OTP")
            }
        } else if given["OTP"] != nil {
            throw Failure(400, "invalid_request", "Invalid parameter authData: the credential takes no OTP")
        }
        if let validity = configuration.authorizationApprovalValidity, record.pin == nil,
            !CSCRouter.asksForOTP(record)
        {
            return try startAuthorization(
                user,
                credentialID: credentialID,
                count: count,
                hashes: hashes,
                validity: validity
            )
        }
        let sad = sads.issue(
            .init(
                username: user.username,
                credentialID: credentialID,
                remaining: count,
                hashes: hashes,
                expiresAt: Date().addingTimeInterval(TimeInterval(CSCEmulatorCredentials.sadLifetime))
            )
        )
        return Reply.json(200, ["SAD": .string(sad), "expiresIn": .integer(CSCEmulatorCredentials.sadLifetime)])
    }

    private func signHash(
        _ body: JSONObjectReader,
        _ user: EmulatorSeed.User,
        sadExpired: Bool,
        wrongHash: Bool
    ) throws -> ServerResponse {
        try CSCRouter.allowOnly(
            body,
            [
                "credentialID", "SAD", "hashes", "hashAlgorithmOID", "signAlgo", "signAlgoParams", "operationMode",
                "validity_period", "response_uri", "clientData",
            ]
        )
        let credentialID = try body.string("credentialID")
        let record = try credential(credentialID, of: user)
        let algorithm = try CSCRouter.digest(body)
        let hashes = try CSCRouter.hashes(body, algorithm: algorithm)
        guard !hashes.isEmpty else { throw Failure(400, "invalid_request", "Invalid parameter hashes: empty") }
        let signAlgo = try body.string("signAlgo")
        guard let key = record.identity.key as? LocalSigningKey else {
            throw Failure(500, "server_error", "the credential's key is not here")
        }
        let scheme = try CSCRouter.scheme(of: key, signAlgo: signAlgo, algorithm: algorithm)
        let encoded = hashes.map { Data($0).base64EncodedString() }
        // Checked before the SAD is used, so a malformed request costs no authorization.
        let validity = try CSCRouter.asynchronousValidity(body)
        switch sads.consume(
            try body.string("SAD"),
            username: user.username,
            credentialID: credentialID,
            hashes: encoded,
            expireFirst: sadExpired
        ) {
        case .failure(let failure): throw failure
        case .success: break
        }
        if let validity {
            return try startAsynchronous(
                user,
                credentialID: credentialID,
                hashes: encoded,
                digestOID: algorithm.oid,
                signAlgo: signAlgo,
                validity: validity
            )
        }
        let signatures = try CSCRouter.sign(
            hashes,
            key: key,
            algorithm: algorithm,
            scheme: scheme,
            wrongHash: wrongHash
        )
        return Reply.json(200, ["signatures": .array(signatures)])
    }

    // MARK: Credentials

    static let rsaAlgorithms = ["1.2.840.113549.1.1.11", "1.2.840.113549.1.1.12", "1.2.840.113549.1.1.13"]
    static let ecdsaAlgorithms = ["1.2.840.10045.4.3.2", "1.2.840.10045.4.3.3", "1.2.840.10045.4.3.4"]

    static func scal(of record: EmulatorSeed.CertificateRecord) -> Int {
        String(record.id) == CSCEmulatorCredentials.scal2CredentialID ? 2 : 1
    }

    static func asksForOTP(_ record: EmulatorSeed.CertificateRecord) -> Bool {
        String(record.id) == CSCEmulatorCredentials.otpCredentialID
    }

    /// The user's keys served as CSC credentials: every key but the GOST ones, which the
    /// FMP and CryptoPro surfaces serve; CSC v2 here names only RSA and ECDSA algorithms.
    static func credentials(of user: EmulatorSeed.User) -> [EmulatorSeed.CertificateRecord] {
        user.certificates.filter { !$0.identity.certificate.publicKeyAlgorithm.isGOST }
    }

    func credential(_ id: String, of user: EmulatorSeed.User) throws -> EmulatorSeed.CertificateRecord {
        guard let record = CSCRouter.credentials(of: user).first(where: { String($0.id) == id }) else {
            throw Failure(
                400,
                "invalid_request",
                "Invalid parameter credentialID: '\(id)' is not a credential of this client"
            )
        }
        return record
    }

    private func describe(
        _ record: EmulatorSeed.CertificateRecord,
        certificates: String,
        certInfo: Bool,
        authInfo: Bool
    ) throws -> [String: JSONValue] {
        let certificate = record.identity.certificate
        let isRSA = certificate.publicKeyAlgorithm.isRSA
        var key: [String: JSONValue] = [
            "status": "enabled",
            "algo": .array((isRSA ? CSCRouter.rsaAlgorithms : CSCRouter.ecdsaAlgorithms).map { .string($0) }),
            "len": .integer(certificate.publicKeySize),
        ]
        let curves: [PublicKeyAlgorithm: String] = [
            .ecP256: "1.2.840.10045.3.1.7", .ecP384: "1.3.132.0.34", .ecP521: "1.3.132.0.35",
        ]
        if let curve = curves[certificate.publicKeyAlgorithm] { key["curve"] = .string(curve) }
        var cert: [String: JSONValue] = ["status": .string(certificate.isValid() ? "valid" : "expired")]
        switch certificates {
        case "none": break
        case "single": cert["certificates"] = [.string(Data(certificate.derRepresentation).base64EncodedString())]
        case "chain":
            cert["certificates"] = .array(
                ([certificate] + record.identity.chain).map {
                    .string(Data($0.derRepresentation).base64EncodedString())
                }
            )
        default:
            throw Failure(
                400,
                "invalid_request",
                "Invalid parameter certificates: none, single or chain, not '\(certificates)'"
            )
        }
        if certInfo {
            cert["issuerDN"] = .string(certificate.issuer)
            cert["subjectDN"] = .string(certificate.subject)
            cert["serialNumber"] = .string(certificate.serialNumber)
            cert["validFrom"] = .string(CSCRouter.generalizedTime(certificate.notValidBefore))
            cert["validTo"] = .string(CSCRouter.generalizedTime(certificate.notValidAfter))
        }
        var info: [String: JSONValue] = [
            "key": .object(key), "cert": .object(cert), "SCAL": .string(String(CSCRouter.scal(of: record))),
            "multisign": .integer(configuration.cscSignaturesPerAuthorization),
        ]
        if authInfo {
            var objects: [JSONValue] = []
            if record.pin != nil {
                objects.append(["type": "Password", "id": "PIN", "format": "N", "label": "PIN"])
            }
            if CSCRouter.asksForOTP(record) {
                objects.append([
                    "type": "Password", "id": "OTP", "format": "N", "label": "One-time password", "generator": "totp",
                ])
            }
            info["auth"] = ["mode": .string(objects.isEmpty ? "implicit" : "explicit"), "objects": .array(objects)]
        }
        return info
    }

    // MARK: Parsing

    static func object(_ body: [UInt8]) throws -> JSONObjectReader {
        guard !body.isEmpty else { return try JSONObjectReader(request: [:], context: "CSC request") }
        guard let json = try? JSONValue(parsing: body) else {
            throw Failure(400, "invalid_request", "the body must be a JSON object")
        }
        return try JSONObjectReader(request: json, context: "CSC request")
    }

    static func allowOnly(_ body: JSONObjectReader, _ known: Set<String>) throws {
        for key in body.members.keys where !known.contains(key) {
            throw Failure(
                400,
                "invalid_request",
                "unknown parameter '\(key)' (known: \(known.sorted().joined(separator: ", ")))"
            )
        }
    }

    private static func flag(_ body: JSONObjectReader, _ key: String) throws -> Bool {
        guard body.value(key) != nil else { return false }
        return try body.bool(key)
    }

    static func digest(_ body: JSONObjectReader) throws -> DigestAlgorithm {
        let oid = try body.string("hashAlgorithmOID")
        guard let algorithm = DigestAlgorithm.allSupported.first(where: { $0.oid == oid }) else {
            throw Failure(
                400,
                "invalid_request",
                "Invalid parameter hashAlgorithmOID: \(oid) (SHA-256, SHA-384 or SHA-512)"
            )
        }
        return algorithm
    }

    static func hashes(_ body: JSONObjectReader, algorithm: DigestAlgorithm) throws -> [[UInt8]] {
        try body.array("hashes").enumerated().map { index, value in
            guard let text = value.stringValue, let data = Data(base64Encoded: text),
                data.count == algorithm.outputByteCount
            else {
                throw Failure(
                    400,
                    "invalid_request",
                    "Invalid parameter hashes[\(index)]: a base64 \(algorithm) hash of \(algorithm.outputByteCount) "
                        + "bytes"
                )
            }
            return Array(data)
        }
    }

    private static func generalizedTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        return formatter.string(from: date)
    }
}
