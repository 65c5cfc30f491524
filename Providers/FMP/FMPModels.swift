public import CertificateProviders
public import Foundation
import HTTPClient

/// One DSS certificate as the platform lists it.
public struct FMPCertificate: Sendable, Equatable {
    /// The DSS certificate id (what ``FMPClient/sign(resource:table:params:column:hhiveID:dssPassword:certificateID:certificatePIN:)`` takes).
    public var id: Int
    /// The subject as the server reports it.
    public var subject: String
    /// The issuer as the server reports it.
    public var issuer: String
    /// The serial number as the server reports it.
    public var serial: String
    /// Start of validity as the server reports it, if it parses.
    public var notBefore: Date?
    /// End of validity as the server reports it, if it parses.
    public var notAfter: Date?
    /// Whether signing with it needs a PIN.
    public var hasPIN: Bool
    /// The certificate itself (parsed from the server's base64 DER).
    public var certificate: Certificate
}

/// One signature in the user's history on the platform.
public struct FMPSignature: Sendable, Equatable {
    /// The signature id.
    public var id: Int
    /// The signed resource.
    public var resource: String
    /// The table.
    public var table: String
    /// The column.
    public var column: String
    /// The row (`hhive_id`).
    public var hhiveID: Int
    /// The certificate that signed.
    public var certificateID: Int
    /// When the server made it, if it says.
    public var createdAt: Date?
    /// The signature (DER CMS; the emulator makes attached CAdES-BES).
    public var signature: [UInt8]
}

/// What a logged-in client needs to resume without logging in again: where (host, API version,
/// environment, project, device) and the token pair. `Codable` so a CLI can keep it in a 0600 file.
///
/// It holds bearer tokens: store it like a password. ``description`` never shows them.
public struct FMPSession: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The platform URL.
    public var host: URL
    /// The API version (`v1`).
    public var apiVersion: String
    /// The environment.
    public var environment: String
    /// The project.
    public var project: String
    /// The device id sent as `X-Device-Id` and at login.
    public var device: String
    /// Who logged in, when known.
    public var username: String?
    /// The access token.
    public var token: String
    /// The refresh token.
    public var refreshToken: String

    /// Creates a session.
    public init(
        host: URL,
        apiVersion: String,
        environment: String,
        project: String,
        device: String,
        username: String?,
        token: String,
        refreshToken: String
    ) {
        self.host = host
        self.apiVersion = apiVersion
        self.environment = environment
        self.project = project
        self.device = device
        self.username = username
        self.token = token
        self.refreshToken = refreshToken
    }

    /// A summary without the tokens.
    public var description: String {
        "FMPSession(host: \(host.absoluteString), apiVersion: \(apiVersion), environment: \(environment), project: "
            + "\(project), device: \(device), username: \(username ?? "-"), tokens: redacted)"
    }
}
