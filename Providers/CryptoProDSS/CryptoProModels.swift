public import CertificateProviders
public import Foundation

/// One certificate of the user on a CryptoPro DSS SignServer (`GET /SignServer/rest/api/certificates`).
public struct CryptoProCertificate: Sendable, Equatable {
    /// The server's certificate id (`ID`), sent back as `CertificateId` when signing.
    public var id: Int
    /// The subject distinguished name as the server prints it (`DName`).
    public var distinguishedName: String
    /// The certificate parsed from `CertificateBase64`.
    public var certificate: Certificate
    /// The server's status (`Status`, e.g. `ACTIVE`; for an object status its `Value`), or nil.
    public var status: String?
    /// Whether this is the user's default certificate (`IsDefault`), used for `CertificateId` 0.
    public var isDefault: Bool
    /// Whether the key is protected by a PIN (`HasPin`).
    public var hasPIN: Bool
    /// The friendly name (`FriendlyName`), or nil.
    public var friendlyName: String?

    /// A one-line label for lists and errors: `12831 "Name" (default)`.
    public var label: String {
        "\(id) \"\(friendlyName ?? distinguishedName)\"\(isDefault ? " (default)" : "")"
    }
}

/// The signature type sent as `Signature.Type`: an open set.
public struct CryptoProSignatureType: Hashable, Sendable, CustomStringConvertible {
    /// The exact, case-sensitive name the server expects (`CAdES`).
    public let rawValue: String
    /// Creates a type from its server name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The server name.
    public var description: String { rawValue }

    /// `CAdES`: CMS Advanced Electronic Signature (with `CADESType`).
    public static let cades = CryptoProSignatureType("CAdES")
    /// `CMS`: plain CMS SignedData.
    public static let cms = CryptoProSignatureType("CMS")
}

/// What to ask the SignServer for (`Signature.Type` and `Signature.Parameters`).
public struct CryptoProSignatureParameters: Sendable, Equatable {
    /// The signature type (default CAdES).
    public var type: CryptoProSignatureType
    /// The CAdES level sent as `CADESType` for CAdES (default `BES`; ignored for CMS).
    public var cadesType: String
    /// Whether the signature leaves the content out (`IsDetached`, default true).
    public var isDetached: Bool
    /// Whether `Content` is a digest rather than the document (`Hash`, default false). A signature
    /// of a digest is always detached; the emulator infers SHA-256/384/512 from the digest length, or
    /// takes the Streebog digest that fits a GOST certificate.
    public var isHash: Bool

    /// Creates parameters; every argument documents its default above.
    public init(
        type: CryptoProSignatureType = .cades,
        cadesType: String = "BES",
        isDetached: Bool = true,
        isHash: Bool = false
    ) {
        self.type = type
        self.cadesType = cadesType
        self.isDetached = isDetached
        self.isHash = isHash
    }

    /// The `Signature.Parameters` object, with the server's exact names and `"True"`/`"False"` strings.
    public var jsonParameters: [String: String] {
        var parameters = ["IsDetached": isDetached ? "True" : "False", "Hash": isHash ? "True" : "False"]
        if type == .cades { parameters["CADESType"] = cadesType }
        return parameters
    }
}

/// An access token issued by the CryptoPro STS: a bearer secret with its expiry.
public struct CryptoProToken: Sendable, CustomStringConvertible {
    /// The bearer token (redacted in descriptions).
    public var accessToken: Secret
    /// When the token stops working (issue time + `expires_in`).
    public var expiresAt: Date
    /// The token type (`Bearer`).
    public var tokenType: String

    /// Creates a token.
    public init(accessToken: Secret, expiresAt: Date, tokenType: String = "Bearer") {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.tokenType = tokenType
    }

    /// Whether the token is still usable `margin` seconds from `date`.
    public func isValid(at date: Date = Date(), margin: TimeInterval = 0) -> Bool {
        expiresAt.timeIntervalSince(date) > margin
    }

    /// The type and expiry; never the token.
    public var description: String { "CryptoProToken(\(tokenType), expires \(expiresAt.formatted(.iso8601)))" }
}
