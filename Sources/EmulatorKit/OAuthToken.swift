import CertificateProviders
import Foundation
import JSON

/// The OAuth 2.0 pieces the CryptoPro STS route and the CSC token route share.
enum OAuthToken {
    /// An OAuth 2.0 error answer (RFC 6749 §5.2): the status, `error` and `error_description`.
    struct Failure: Error {
        let status: Int
        let code: String
        let description: String
    }

    /// The form of a token request, checked the way both token routes check it: an
    /// `application/x-www-form-urlencoded` UTF-8 body, every field of `required` present and not
    /// empty, and the grant type `grantType`.
    /// - Throws: ``Failure`` 400 `invalid_request` for another body or a missing field,
    ///   400 `unsupported_grant_type` for another grant.
    static func form(
        of request: ServerRequest,
        grantType: String,
        required: [String] = []
    ) throws(Failure) -> [String: String] {
        guard request.header("Content-Type")?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
            throw Failure(
                status: 400,
                code: "invalid_request",
                description: "the body must be application/x-www-form-urlencoded"
            )
        }
        guard let form = Form.parse(request.body) else {
            throw Failure(
                status: 400,
                code: "invalid_request",
                description: "the body must be application/x-www-form-urlencoded UTF-8"
            )
        }
        for field in required where (form[field] ?? "").isEmpty {
            throw Failure(status: 400, code: "invalid_request", description: "form field '\(field)' is missing")
        }
        guard form["grant_type"] == grantType else {
            throw Failure(
                status: 400,
                code: "unsupported_grant_type",
                description: "grant_type '\(form["grant_type"] ?? "")' is not supported; use \(grantType)"
            )
        }
        return form
    }

    /// The client credentials of an `Authorization: Basic` header (each part percent-decoded, as
    /// RFC 6749 §2.3.1 has them form-encoded), or nil when there is none or it is malformed.
    static func basicCredentials(_ header: String?) -> (user: String, password: String)? {
        guard let header, header.count > 6, header.lowercased().hasPrefix("basic "),
            let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (
            String(text[..<colon]).removingPercentEncoding ?? "",
            String(text[text.index(after: colon)...]).removingPercentEncoding ?? ""
        )
    }
}

/// A router with an OAuth 2.0 token route (CSC, the CryptoPro STS): its access tokens are issued for
/// its own ``tokenDevice``, so each such router refuses the tokens of the others and of FMP.
protocol OAuthTokenRoute {
    /// The device the router's tokens are issued for (a name no FMP device can have).
    static var tokenDevice: String { get }
    /// Where the tokens are kept.
    var store: EmulatorStore { get }
    /// The access token lifetime (``DSSEmulator/Configuration/accessTokenLifetime``).
    var configuration: DSSEmulator.Configuration { get }
}

extension OAuthTokenRoute {
    /// Issues an access token (no refresh token) for `user` on ``tokenDevice`` and answers 200
    /// `{"access_token", "token_type": "Bearer", "expires_in"}`.
    func tokenReply(for user: EmulatorSeed.User) -> ServerResponse {
        let lifetime = configuration.accessTokenLifetime
        let session = EmulatorStore.Token(user: user, device: Self.tokenDevice)
        let issued = store.issueTokens(for: session, accessLifetime: lifetime, refreshLifetime: 0)
        return Reply.json(
            200,
            [
                "access_token": .string(issued.access), "token_type": "Bearer",
                "expires_in": .integer(Int(lifetime.rounded(.down))),
            ]
        )
    }
}
