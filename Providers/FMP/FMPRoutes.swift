public import Foundation

/// The FMP DSS route table, as path templates a deployment can override.
///
/// The vendor has not published the DSS routes; these defaults are this project's definition
/// (ARCHITECTURE.md), and the auth routes follow the platform's v1 SDK. Placeholders: `{v}` (API
/// version), `{env}`, `{project}`, `{id}` (signature id); each value is percent-encoded as one path
/// segment. Templates are joined to the host URL's path.
public struct FMPRoutes: Sendable, Equatable, Codable {
    /// POST, form body: obtain a token pair (default `/api/{v}/auth/jwt/obtain/`).
    public var obtainToken: String
    /// POST, JSON `{"refresh_token"}`: renew the token pair (default `/api/{v}/auth/jwt/refresh/`).
    public var refreshToken: String
    /// POST, JSON `{"password"}`: list certificates (default `/api/{v}/dss/{env}/{project}/certificates/`).
    public var certificates: String
    /// POST, JSON: sign a resource cell (default `/api/{v}/dss/{env}/{project}/sign/`).
    public var sign: String
    /// GET: list signatures (default `/api/{v}/dss/{env}/{project}/signs/`).
    public var signs: String
    /// DELETE: remove a signature (default `/api/{v}/dss/{env}/{project}/signs/{id}/`).
    public var removeSign: String

    /// Creates a route table; every parameter defaults to the standard route.
    public init(
        obtainToken: String = "/api/{v}/auth/jwt/obtain/",
        refreshToken: String = "/api/{v}/auth/jwt/refresh/",
        certificates: String = "/api/{v}/dss/{env}/{project}/certificates/",
        sign: String = "/api/{v}/dss/{env}/{project}/sign/",
        signs: String = "/api/{v}/dss/{env}/{project}/signs/",
        removeSign: String = "/api/{v}/dss/{env}/{project}/signs/{id}/"
    ) {
        self.obtainToken = obtainToken
        self.refreshToken = refreshToken
        self.certificates = certificates
        self.sign = sign
        self.signs = signs
        self.removeSign = removeSign
    }

    /// The standard routes.
    public static let standard = FMPRoutes()

    /// The URL of `template` under `host`, placeholders filled and percent-encoded.
    public static func url(
        host: URL,
        template: String,
        apiVersion: String,
        environment: String,
        project: String,
        id: Int? = nil
    ) -> URL? {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#;")
        func segment(_ value: String) -> String { value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value }
        var path =
            template
            .replacingOccurrences(of: "{v}", with: segment(apiVersion))
            .replacingOccurrences(of: "{env}", with: segment(environment))
            .replacingOccurrences(of: "{project}", with: segment(project))
        if let id { path = path.replacingOccurrences(of: "{id}", with: String(id)) }
        var base = host.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        if !path.hasPrefix("/") { path = "/" + path }
        return URL(string: base + path)
    }
}
