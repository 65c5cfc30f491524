public import Foundation

/// The typed key/value map a provider is initialized and configured with (SAP's options dictionary
/// and `getParameters` / `setParameters:`).
///
/// Values are typed; the accessors accept the string form too, because command lines and config
/// files deliver strings (`--param certificateID=12831`). ``Value/secret(_:)`` values are never shown
/// by ``description``.
public struct ProviderParameters: Sendable, Equatable, CustomStringConvertible, ExpressibleByDictionaryLiteral {
    /// A parameter name. SAP's well-known keys are static members here; each provider declares its own
    /// in its `ParameterKey` (`PKCS12CertificateProvider.ParameterKey.file`).
    public struct Key: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The name as written in `--param NAME=…`.
        public let rawValue: String
        /// Creates a key.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// Creates a key from a string literal.
        public init(stringLiteral value: String) { self.rawValue = value }
        /// The key's name.
        public var description: String { rawValue }
        /// Orders keys by name.
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

        /// SAP `kCertificateProviderParameterKeyURL`: a server URL, or the URL the app was opened with.
        /// The FMP, CryptoPro DSS and CSC providers take it (their `ParameterKey.url`).
        public static let url: Key = "url"
        /// SAP `kCertificateProviderParameterKeyKeySize`: the key size in bits for providers that make keys.
        /// No built-in provider takes it; it is SAP's name, kept for providers written elsewhere.
        public static let keySize: Key = "keysize"
        /// SAP `kCertificateProviderParameterKeyURLScheme`: the app's callback URL scheme.
        /// No built-in provider takes it; it is SAP's name, kept for providers written elsewhere.
        public static let urlScheme: Key = "urlScheme"
    }

    /// A parameter value.
    public enum Value: Sendable, Equatable, CustomStringConvertible {
        case string(String)
        case integer(Int)
        case boolean(Bool)
        case data([UInt8])
        case url(URL)
        /// A password, PIN or token: never shown, wiped when released.
        case secret(Secret)

        /// The value for logs: strings quoted, data as a byte count, secrets as `<redacted>`.
        public var description: String {
            switch self {
            case .string(let value): return "\"\(value)\""
            case .integer(let value): return String(value)
            case .boolean(let value): return String(value)
            case .data(let value): return "<\(value.count) bytes>"
            case .url(let value): return value.absoluteString
            case .secret: return "<redacted>"
            }
        }
    }

    private var storage: [Key: Value]

    /// Creates parameters from a dictionary.
    public init(_ values: [Key: Value] = [:]) { storage = values }

    /// Creates parameters from a dictionary literal; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (Key, Value)...) {
        storage = Dictionary(elements, uniquingKeysWith: { _, last in last })
    }

    /// The value for a key, or nil.
    public subscript(key: Key) -> Value? {
        get { storage[key] }
        set { storage[key] = newValue }
    }

    /// The keys present, sorted.
    public var keys: [Key] { storage.keys.sorted() }

    /// Whether there are no parameters.
    public var isEmpty: Bool { storage.isEmpty }

    /// These parameters with `other`'s values replacing any of the same key.
    public func merging(_ other: ProviderParameters) -> ProviderParameters {
        ProviderParameters(storage.merging(other.storage, uniquingKeysWith: { _, new in new }))
    }

    /// The parameters sorted by key, secrets redacted.
    public var description: String {
        "[" + keys.map { "\($0): \(storage[$0]!)" }.joined(separator: ", ") + "]"
    }

    // MARK: Typed access

    /// The string value of `key`, nil when absent.
    /// - Throws: `.invalidParameter` when the value is not a string (integers and URLs are converted).
    public func string(_ key: Key) throws -> String? {
        switch storage[key] {
        case nil: return nil
        case .string(let value): return value
        case .integer(let value): return String(value)
        case .url(let value): return value.absoluteString
        default: throw wrongType(key, "a string")
        }
    }

    /// The integer value of `key` (a decimal string is accepted), nil when absent.
    /// - Throws: `.invalidParameter` when the value is not an integer.
    public func integer(_ key: Key) throws -> Int? {
        switch storage[key] {
        case nil: return nil
        case .integer(let value): return value
        case .string(let value):
            guard let number = Int(value.trimmingCharacters(in: .whitespaces)) else {
                throw wrongType(key, "an integer")
            }
            return number
        default: throw wrongType(key, "an integer")
        }
    }

    /// The boolean value of `key` (`true/false/yes/no/1/0` strings are accepted), nil when absent.
    /// - Throws: `.invalidParameter` when the value is not a boolean.
    public func boolean(_ key: Key) throws -> Bool? {
        switch storage[key] {
        case nil: return nil
        case .boolean(let value): return value
        case .integer(let value) where value == 0 || value == 1: return value == 1
        case .string(let value):
            switch value.lowercased() {
            case "true", "yes", "1", "on": return true
            case "false", "no", "0", "off": return false
            default: throw wrongType(key, "a boolean (true or false)")
            }
        default: throw wrongType(key, "a boolean (true or false)")
        }
    }

    /// The URL value of `key` (a string is parsed), nil when absent.
    /// - Throws: `.invalidParameter` when the value is not a URL with a scheme and host or path.
    public func url(_ key: Key) throws -> URL? {
        switch storage[key] {
        case nil: return nil
        case .url(let value): return value
        case .string(let value):
            guard let url = URL(string: value), url.scheme != nil else {
                throw wrongType(key, "a URL such as https://host/path")
            }
            return url
        default: throw wrongType(key, "a URL")
        }
    }

    /// The bytes of `key`, nil when absent.
    /// - Throws: `.invalidParameter` when the value is not bytes.
    public func data(_ key: Key) throws -> [UInt8]? {
        switch storage[key] {
        case nil: return nil
        case .data(let value): return value
        default: throw wrongType(key, "bytes")
        }
    }

    /// The secret value of `key` (a plain string is wrapped), nil when absent.
    /// - Throws: `.invalidParameter` when the value is of another type.
    public func secret(_ key: Key) throws -> Secret? {
        switch storage[key] {
        case nil: return nil
        case .secret(let value): return value
        case .string(let value): return Secret(value)
        default: throw wrongType(key, "a secret (password or PIN)")
        }
    }

    /// The string value of `key`.
    /// - Throws: `.invalidParameter` naming the key when it is absent or not a string.
    public func requiredString(_ key: Key) throws -> String {
        guard let value = try string(key) else { throw missing(key) }
        return value
    }

    /// The secret value of `key`.
    /// - Throws: `.invalidParameter` naming the key when it is absent.
    public func requiredSecret(_ key: Key) throws -> Secret {
        guard let value = try secret(key) else { throw missing(key) }
        return value
    }

    private func wrongType(_ key: Key, _ expected: String) -> CertificateProviderError {
        .invalidParameter("parameter '\(key)' must be \(expected)")
    }

    private func missing(_ key: Key) -> CertificateProviderError {
        .invalidParameter("parameter '\(key)' is required")
    }
}
