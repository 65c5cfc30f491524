import CertificateProviders
import Foundation
import JSON

/// The OAuth 2.0 pieces the CryptoPro STS route and the CSC token route share.
enum OAuthToken {
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

    /// Issues an access token (no refresh token) for `user` on `device` and answers 200
    /// `{"access_token", "token_type": "Bearer", "expires_in"}`.
    static func reply(
        issuingFor user: EmulatorSeed.User,
        device: String,
        store: EmulatorStore,
        lifetime: TimeInterval
    ) -> ServerResponse {
        let session = EmulatorStore.Token(user: user, device: device)
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
