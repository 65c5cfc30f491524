public import CertificateProviders
public import Foundation

/// What a CSC service says about itself (`info`).
public struct CSCServiceInfo: Sendable, Equatable {
    /// The CSC specification version the service implements (`specs`, e.g. `2.0.0.0`).
    public var specs: String
    /// The service's name.
    public var name: String
    /// The ISO 3166-1 country code of the service (`region`).
    public var region: String
    /// The language of its messages (`lang`).
    public var lang: String
    /// How clients authenticate (`authType`, e.g. `oauth2client`).
    public var authTypes: [String]
    /// The base URI of the OAuth 2.0 authorization server (`oauth2`), or nil when absent.
    public var oauth2: URL?
    /// The API methods the service offers (`methods`).
    public var methods: [String]
    /// The signature algorithm OIDs the service supports (`signAlgorithms.algos`), empty when not said.
    public var signAlgorithms: [String]
}

/// One credential (a signing key with its certificate) of a CSC service (`credentials/info`).
public struct CSCCredential: Sendable, Equatable {
    /// One input the service asks for to authorize the credential (`auth.objects`).
    public struct AuthObject: Sendable, Equatable {
        /// `Password` for a PIN, `OTP` for a one-time password (`type`).
        public var type: String
        /// `PIN` or `OTP`: the `id` sent back in `authData`.
        public var id: String
        /// `N` (numeric) or `A` (alphanumeric), when said (`format`).
        public var format: String?
        /// A label to show the user, when given (`label`).
        public var label: String?

        /// Creates an auth object.
        public init(type: String, id: String, format: String?, label: String?) {
            self.type = type
            self.id = id
            self.format = format
            self.label = label
        }
    }

    /// The credential's ID.
    public var id: String
    /// The key's status (`key.status`: `enabled` or `disabled`).
    public var keyStatus: String
    /// The signature algorithm OIDs the key supports (`key.algo`).
    public var keyAlgorithms: [String]
    /// The key length in bits (`key.len`).
    public var keyLength: Int
    /// The curve OID of an EC key (`key.curve`), or nil.
    public var keyCurve: String?
    /// The certificate's status (`cert.status`: `valid`, `expired`, `revoked`, `suspended`), or nil.
    public var certificateStatus: String?
    /// The certificate (leaf) and its chain as the service returned them (`cert.certificates`, leaf first).
    public var certificates: [Certificate]
    /// The authorization mode (`auth.mode`: `explicit`, `implicit`, `oauth2code`).
    public var authMode: String
    /// What `credentials/authorize` needs in `authData` (`auth.objects`), empty when nothing.
    public var authObjects: [AuthObject]
    /// The Sole Control Assurance Level (`SCAL`): 1, or 2 when a SAD is bound to the exact hashes.
    public var scal: Int
    /// How many signatures one authorization may make (`multisign`, at least 1).
    public var multisign: Int

    /// The leaf certificate, or nil when the service returned none.
    public var certificate: Certificate? { certificates.first }
    /// Whether `credentials/authorize` needs a PIN (an auth object with id `PIN`).
    public var needsPIN: Bool { authObjects.contains { $0.id == "PIN" } }
    /// Whether `credentials/authorize` needs a one-time password (an auth object with id `OTP`).
    public var needsOTP: Bool { authObjects.contains { $0.id == "OTP" } }
    /// `PIN`, `PIN + OTP`, `OTP` or the mode (`implicit`) for lists.
    public var authSummary: String {
        let ids = authObjects.map(\.id)
        return ids.isEmpty ? authMode : ids.joined(separator: " + ")
    }
}

/// The signature activation data of one `credentials/authorize`: a bearer secret that lets
/// `signatures/signHash` use the credential (for SCAL 2 only for the authorized hashes).
public struct CSCAuthorization: Sendable, CustomStringConvertible {
    /// The SAD (redacted in descriptions).
    public var sad: Secret
    /// Seconds the SAD stays valid (`expiresIn`), when said.
    public var expiresIn: Int?

    /// Creates an authorization.
    public init(sad: Secret, expiresIn: Int?) {
        self.sad = sad
        self.expiresIn = expiresIn
    }

    /// The lifetime; never the SAD.
    public var description: String { "CSCAuthorization(expires in \(expiresIn.map(String.init) ?? "?") s)" }
}

/// An OAuth 2.0 access token of a CSC service: a bearer secret with its expiry.
public struct CSCToken: Sendable, CustomStringConvertible {
    /// The bearer token (redacted in descriptions).
    public var accessToken: Secret
    /// When the token stops working (issue time + `expires_in`).
    public var expiresAt: Date

    /// Creates a token.
    public init(accessToken: Secret, expiresAt: Date) {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
    }

    /// Whether the token is still usable `margin` seconds from `date`.
    public func isValid(at date: Date = Date(), margin: TimeInterval = 0) -> Bool {
        expiresAt.timeIntervalSince(date) > margin
    }

    /// The expiry; never the token.
    public var description: String { "CSCToken(expires \(expiresAt.formatted(.iso8601)))" }
}

/// The object identifiers CSC uses for digests and signature algorithms.
public enum CSCAlgorithms {
    /// `rsaEncryption`: an RSA key that signs with any digest (as `key.algo`).
    public static let rsaEncryption = "1.2.840.113549.1.1.1"
    /// `RSASSA-PSS` (parameters in `signAlgoParams`).
    public static let rsaPSS = "1.2.840.113549.1.1.10"
    /// `id-ecPublicKey`: an EC key that signs with any digest (as `key.algo`).
    public static let ecPublicKey = "1.2.840.10045.2.1"

    /// `sha256WithRSAEncryption` (`.11`), `sha384…` (`.12`), `sha512…` (`.13`).
    public static func rsaPKCS1(_ digest: DigestAlgorithm) -> String? {
        switch digest {
        case .sha256: return "1.2.840.113549.1.1.11"
        case .sha384: return "1.2.840.113549.1.1.12"
        case .sha512: return "1.2.840.113549.1.1.13"
        default: return nil
        }
    }

    /// `ecdsa-with-SHA256` (`.2`), `…SHA384` (`.3`), `…SHA512` (`.4`).
    public static func ecdsa(_ digest: DigestAlgorithm) -> String? {
        switch digest {
        case .sha256: return "1.2.840.10045.4.3.2"
        case .sha384: return "1.2.840.10045.4.3.3"
        case .sha512: return "1.2.840.10045.4.3.4"
        default: return nil
        }
    }

    /// The `signAlgo` for a key, digest and scheme among the key's `key.algo`: the combined OID
    /// (`sha256WithRSAEncryption`, `ecdsa-with-SHA256`) when the key lists it or its generic key OID.
    /// - Throws: `.unsupportedAlgorithm` naming what the key offers (RSA-PSS is not requested: it
    ///   needs DER parameters, and the CMS path signs with PKCS#1 v1.5).
    public static func signAlgorithm(
        keyAlgorithms: [String],
        publicKeyAlgorithm: PublicKeyAlgorithm,
        digest: DigestAlgorithm,
        scheme: SignatureScheme
    ) throws -> String {
        let wanted: String?
        let generic: String
        switch scheme {
        case .rsaPKCS1v15 where publicKeyAlgorithm.isRSA: (wanted, generic) = (rsaPKCS1(digest), rsaEncryption)
        case .ecdsa where publicKeyAlgorithm.isEC: (wanted, generic) = (ecdsa(digest), ecPublicKey)
        default:
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "CSC: a \(publicKeyAlgorithm) credential cannot sign with \(scheme) here (supported: RSA PKCS#1 "
                    + "v1.5, ECDSA)"
            )
        }
        guard let wanted, keyAlgorithms.contains(wanted) || keyAlgorithms.contains(generic) else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "CSC: the credential's key offers \(keyAlgorithms.joined(separator: ", ")), not \(scheme) with "
                    + "\(digest)"
            )
        }
        return wanted
    }
}
