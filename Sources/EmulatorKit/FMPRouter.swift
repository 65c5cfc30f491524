import CertificateProviders
import Foundation
import JSON

/// The Foresight Mobile Platform DSS route table (ARCHITECTURE.md "Remote APIs"), served from the
/// shared ``EmulatorStore``.
///
/// Success bodies are the server JSON (`result.raw` on the client side); error bodies are FMP
/// envelopes: `{"status":"error","http":{"status":N},"errors":[{"code","description"}]}`.
struct FMPRouter: EmulatorRouter {
    let store: EmulatorStore
    let configuration: DSSEmulator.Configuration
    let signer: any EmulatorSigner

    /// The routes this router owns start with `/api/`.
    func owns(_ path: String) -> Bool { path.hasPrefix("/api/") }

    /// Answers one request; the `expired-token` fault makes the presented bearer token expire first.
    func handle(_ request: ServerRequest, fault: DSSEmulator.Fault?) -> ServerResponse {
        let expireToken = fault == .expiredToken
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard parts.count >= 3, parts[0] == "api", parts[1] == configuration.apiVersion else {
            return Reply.error(404, "not_found", "no route for \(request.path)")
        }
        let rest = Array(parts.dropFirst(2))
        switch rest.count {
        case 3 where rest[0] == "auth" && rest[1] == "jwt" && rest[2] == "obtain":
            return only("POST", request) { obtain(request) }
        case 3 where rest[0] == "auth" && rest[1] == "jwt" && rest[2] == "refresh":
            return only("POST", request) { refresh(request) }
        case 4 where rest[0] == "dss" && rest[3] == "certificates":
            return only("POST", request) { authorized(request, rest, expireToken) { certificates(request, $0) } }
        case 4 where rest[0] == "dss" && rest[3] == "sign":
            return only("POST", request) { authorized(request, rest, expireToken) { sign(request, $0) } }
        case 4 where rest[0] == "dss" && rest[3] == "signs":
            return only("GET", request) { authorized(request, rest, expireToken) { signs($0) } }
        case 5 where rest[0] == "dss" && rest[3] == "signs":
            return only("DELETE", request) { authorized(request, rest, expireToken) { remove(rest[4], $0) } }
        default:
            return Reply.error(404, "not_found", "no route for \(request.path)")
        }
    }

    private func only(_ method: String, _ request: ServerRequest, _ body: () -> ServerResponse) -> ServerResponse {
        guard request.method == method else {
            var response = Reply.error(
                405,
                "method_not_allowed",
                "\(request.method) is not allowed on \(request.path); use \(method)"
            )
            response.headers.append(("Allow", method))
            return response
        }
        if request.bodyTooLarge {
            return Reply.error(
                413,
                "payload_too_large",
                "the request body is larger than \(configuration.maxBodyBytes) bytes"
            )
        }
        return body()
    }

    // MARK: Auth

    private func obtain(_ request: ServerRequest) -> ServerResponse {
        guard let form = Form.parse(request.body) else {
            return Reply.error(400, "bad_form", "the body must be application/x-www-form-urlencoded UTF-8")
        }
        for field in ["environment", "project", "username", "password", "device_id"] where form[field] == nil {
            return Reply.error(400, "missing_field", "form field '\(field)' is missing")
        }
        guard let user = store.user(named: form["username"] ?? ""), user.password == Secret(form["password"] ?? ""),
            user.environment == form["environment"], user.project == form["project"]
        else {
            return Reply.error(
                401,
                "invalid_credentials",
                "unknown user, wrong password, or the user is not in this environment and project"
            )
        }
        let device = form["device_id"] ?? ""
        guard !device.isEmpty else { return Reply.error(400, "invalid_field", "form field 'device_id' is empty") }
        return tokens(for: EmulatorStore.Token(user: user, device: device))
    }

    private func refresh(_ request: ServerRequest) -> ServerResponse {
        let reader: JSONObjectReader
        let refreshToken: String
        do {
            reader = try Reply.jsonObject(request.body)
            refreshToken = try reader.string("refresh_token")
        } catch {
            return Reply.badRequest(error)
        }
        guard let session = store.redeemRefreshToken(refreshToken) else {
            return Reply.error(
                401,
                "invalid_refresh_token",
                "the refresh token is unknown, used or expired; log in again"
            )
        }
        return tokens(for: session)
    }

    private func tokens(for session: EmulatorStore.Token) -> ServerResponse {
        let issued = store.issueTokens(
            for: session,
            accessLifetime: configuration.accessTokenLifetime,
            refreshLifetime: configuration.refreshTokenLifetime
        )
        return Reply.json(200, ["token": .string(issued.access), "refresh_token": .string(issued.refresh)])
    }

    private func authorized(
        _ request: ServerRequest,
        _ rest: [String],
        _ expireToken: Bool,
        _ body: (EmulatorSeed.User) -> ServerResponse
    ) -> ServerResponse {
        guard let token = request.bearerToken else {
            return Reply.error(401, "unauthorized", "send Authorization: Bearer <token> (log in first)")
        }
        if expireToken { store.expireAccessToken(token) }
        let session: EmulatorStore.Token
        switch store.lookUpAccessToken(token) {
        case .valid(let found): session = found
        case .expired: return Reply.error(401, "token_expired", "the access token has expired; refresh it")
        case .unknown: return Reply.error(401, "unauthorized", "the access token is not valid")
        }
        guard request.header("X-Device-Id") == session.device else {
            return Reply.error(401, "device_mismatch", "the token was issued to another device (X-Device-Id)")
        }
        guard rest[1] == session.environment, rest[2] == session.project, let user = store.user(named: session.username)
        else {
            return Reply.error(404, "not_found", "no environment '\(rest[1])' with project '\(rest[2])' for this user")
        }
        return body(user)
    }

    // MARK: DSS

    private func certificates(_ request: ServerRequest, _ user: EmulatorSeed.User) -> ServerResponse {
        let password: String
        do {
            password = try Reply.jsonObject(request.body).string("password")
        } catch {
            return Reply.badRequest(error)
        }
        guard Secret(password) == user.dssPassword else {
            return Reply.error(403, "wrong_dss_password", "the DSS password is wrong")
        }
        let list: [JSONValue] = user.certificates.map { record in
            let certificate = record.identity.certificate
            return [
                "id": .integer(record.id),
                "subject": .string(certificate.subject),
                "issuer": .string(certificate.issuer),
                "serial": .string(certificate.serialNumber),
                "not_before": .string(Reply.timestamp(certificate.notValidBefore)),
                "not_after": .string(Reply.timestamp(certificate.notValidAfter)),
                "has_pin": .bool(record.pin != nil),
                "certificate": .string(Data(certificate.derRepresentation).base64EncodedString()),
            ]
        }
        return Reply.json(200, ["certificates": .array(list)])
    }

    private func sign(_ request: ServerRequest, _ user: EmulatorSeed.User) -> ServerResponse {
        let resource: String
        let table: String
        let column: String
        let password: String
        let row: Int
        let certificateID: Int
        let pin: String?
        do {
            let reader = try Reply.jsonObject(request.body)
            resource = try reader.string("resource")
            table = try reader.string("table")
            column = try reader.string("column")
            row = try FMPRouter.number(reader, "hhive_id")
            password = try reader.string("password")
            certificateID = try FMPRouter.number(reader, "certificate_id")
            pin = try reader.optionalString("certificate_pin")
            if let params = reader.value("params") { try FMPRouter.checkParams(params) }
        } catch {
            return Reply.badRequest(error)
        }
        guard Secret(password) == user.dssPassword else {
            return Reply.error(403, "wrong_dss_password", "the DSS password is wrong")
        }
        guard let record = user.certificates.first(where: { $0.id == certificateID }) else {
            return Reply.error(404, "certificate_not_found", "no certificate \(certificateID) for this user")
        }
        if let expected = record.pin {
            guard let pin, Secret(pin) == expected else {
                return Reply.error(403, "wrong_pin", "the PIN of certificate \(certificateID) is wrong")
            }
        }
        guard let cell = store.cell(resource: resource, table: table, column: column, row: row) else {
            return Reply.error(404, "resource_not_found", "no cell \(resource)/\(table)/\(column) row \(row)")
        }
        let cms: [UInt8]
        do {
            cms = try signer.signCAdES(content: Array(cell.value.utf8), identity: record.identity)
        } catch {
            return Reply.error(500, "signing_failed", "the server could not sign: \(error)")
        }
        let id: Int
        do {
            id = try store.addSignature(owner: user.username, cell: cell, certificateID: record.id, cms: cms)
        } catch {
            return Reply.error(500, "state_not_saved", "the server could not keep the signature: \(error)")
        }
        return Reply.json(200, ["signature_id": .integer(id)])
    }

    /// `params`: an object, null, or (as the HHFWDss sample sends it, `let params = "{}"`) a string
    /// holding a JSON object, as a Django REST Framework `JSONField` takes it; anything else is
    /// refused.
    static func checkParams(_ params: JSONValue) throws {
        if params.objectValue != nil || params.isNull { return }
        if let text = params.stringValue, (try? JSONValue(parsing: text))?.objectValue != nil { return }
        throw CertificateProviderError(
            .malformedInput,
            "FMP sign: field 'params' must be an object or a string holding one, found "
                + (params.stringValue.map { "the string \"\($0.prefix(40))\"" } ?? params.typeName)
        )
    }

    /// A numeric field as a Django REST Framework `IntegerField` reads it: a JSON integer or a string
    /// of decimal digits (the HHFWDss sample sends `"hhive_id": "1"`); anything else is refused.
    static func number(_ reader: JSONObjectReader, _ key: String) throws -> Int {
        if let text = try? reader.string(key) {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard let value = Int(trimmed), !trimmed.isEmpty else {
                throw CertificateProviderError(
                    .malformedInput,
                    "request: field '\(key)' must be an integer or a string of digits, not \"\(text)\""
                )
            }
            return value
        }
        return try reader.int(key)
    }

    private func signs(_ user: EmulatorSeed.User) -> ServerResponse {
        let list: [JSONValue] = store.signatures(of: user.username).map { stored in
            [
                "signature_id": .integer(stored.id),
                "resource": .string(stored.cell.resource),
                "table": .string(stored.cell.table),
                "column": .string(stored.cell.column),
                "hhive_id": .integer(stored.cell.row),
                "certificate_id": .integer(stored.certificateID),
                "created_at": .string(Reply.timestamp(stored.createdAt)),
                "signature": .string(Data(stored.cms).base64EncodedString()),
            ]
        }
        return Reply.json(200, ["signs": .array(list)])
    }

    private func remove(_ idText: String, _ user: EmulatorSeed.User) -> ServerResponse {
        do {
            guard let id = Int(idText), try store.removeSignature(id: id, owner: user.username) else {
                return Reply.error(404, "signature_not_found", "no signature \(idText) for this user")
            }
        } catch {
            return Reply.error(500, "state_not_saved", "the server could not keep the removal: \(error)")
        }
        return Reply.json(200, [:])
    }
}

/// Response builders shared by the routers.
enum Reply {
    static func json(_ status: Int, _ value: JSONValue) -> ServerResponse {
        // JSONValue built here never holds NaN or infinity, the only encoding failure.
        let body = (try? value.jsonBytes()) ?? Array("{}".utf8)
        return ServerResponse(
            status: status,
            headers: [("Content-Type", "application/json; charset=utf-8")],
            body: body
        )
    }

    /// An FMP error envelope.
    static func error(_ status: Int, _ code: String, _ description: String) -> ServerResponse {
        json(
            status,
            [
                "status": "error",
                "http": ["status": .integer(status)],
                "errors": [["code": .string(code), "description": .string(description)]],
            ]
        )
    }

    /// 400 for a request body that is not JSON or has a wrong shape, naming the field.
    static func badRequest(_ error: any Error) -> ServerResponse {
        let reason = (error as? CertificateProviderError)?.reason ?? "the request body is malformed"
        let code =
            reason.contains("not valid JSON")
            ? "bad_json" : reason.contains("is missing") ? "missing_field" : "invalid_field"
        return Reply.error(400, code, reason)
    }

    /// Parses a JSON object body with `.malformedInput` errors that name the field.
    static func jsonObject(_ body: [UInt8]) throws -> JSONObjectReader {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: body)
        } catch {
            throw CertificateProviderError(.malformedInput, "the request body is not valid JSON")
        }
        return try JSONObjectReader(request: value, context: "request")
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

/// `application/x-www-form-urlencoded` bodies.
enum Form {
    /// The fields of a form body (`+` is a space, percent escapes decoded); nil when not UTF-8.
    static func parse(_ body: [UInt8]) -> [String: String]? {
        guard let text = String(validating: body, as: UTF8.self) else { return nil }
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let pieces = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ piece: Substring) -> String? {
                piece.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            guard let name = decode(pieces[0]), let value = pieces.count > 1 ? decode(pieces[1]) : "" else {
                return nil
            }
            fields[name] = value
        }
        return fields
    }
}
