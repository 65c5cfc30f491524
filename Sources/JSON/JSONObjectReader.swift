public import CertificateProviders
import Foundation

/// Reads the fields of a JSON object with errors that name the field, its expected type and the
/// context (`"FMP certificates: field 'certificates[0].id' must be an integer, found string"`).
///
/// Clients use the default code `.network` (the server did not speak the protocol); servers use
/// `.malformedInput` for requests.
public struct JSONObjectReader: Sendable {
    /// The object's members.
    public let members: [String: JSONValue]
    /// Where the object sits, for error messages (`"FMP sign"`, `"certificates[2]"`).
    public let context: String
    /// The prefix of field names, for nested objects (`"certificates[2]."`).
    public let path: String
    /// The error code thrown for a wrong shape.
    public let errorCode: CertificateProviderError.Code

    /// Wraps `value`, which must be an object.
    /// - Throws: `errorCode` when `value` is not an object.
    public init(
        _ value: JSONValue,
        context: String,
        path: String = "",
        errorCode: CertificateProviderError.Code = .network
    ) throws {
        guard case .object(let members) = value else {
            let what = path.isEmpty ? "the JSON body" : "field '\(path.dropLast())'"
            throw CertificateProviderError(errorCode, "\(context): \(what) must be an object, found \(value.typeName)")
        }
        self.members = members
        self.context = context
        self.path = path
        self.errorCode = errorCode
    }

    /// The raw member, or nil when absent.
    public func value(_ key: String) -> JSONValue? { members[key] }

    /// A required string field.
    public func string(_ key: String) throws -> String {
        let value = try required(key)
        guard let string = value.stringValue else { throw wrongType(key, "a string", value) }
        return string
    }

    /// An optional string field (absent or null gives nil).
    public func optionalString(_ key: String) throws -> String? {
        guard let value = members[key], !value.isNull else { return nil }
        guard let string = value.stringValue else { throw wrongType(key, "a string", value) }
        return string
    }

    /// A required integer field.
    public func int(_ key: String) throws -> Int {
        let value = try required(key)
        guard let int = value.intValue else { throw wrongType(key, "an integer", value) }
        return int
    }

    /// An optional integer field (absent or null gives nil).
    public func optionalInt(_ key: String) throws -> Int? {
        guard let value = members[key], !value.isNull else { return nil }
        guard let int = value.intValue else { throw wrongType(key, "an integer", value) }
        return int
    }

    /// A required boolean field.
    public func bool(_ key: String) throws -> Bool {
        let value = try required(key)
        guard let bool = value.boolValue else { throw wrongType(key, "a boolean", value) }
        return bool
    }

    /// A required array field.
    public func array(_ key: String) throws -> [JSONValue] {
        let value = try required(key)
        guard let array = value.arrayValue else { throw wrongType(key, "an array", value) }
        return array
    }

    /// A required object field, as a reader.
    public func object(_ key: String) throws -> JSONObjectReader {
        try JSONObjectReader(try required(key), context: context, path: "\(path)\(key).", errorCode: errorCode)
    }

    /// The objects of a required array field, as readers (`key[0].`, `key[1].`, …).
    public func objects(_ key: String) throws -> [JSONObjectReader] {
        try array(key).enumerated().map { index, element in
            try JSONObjectReader(element, context: context, path: "\(path)\(key)[\(index)].", errorCode: errorCode)
        }
    }

    /// A required string field holding base64, decoded.
    public func base64(_ key: String) throws -> [UInt8] {
        let text = try string(key)
        // Strict first (Foundation's fast decoder); text with line breaks or other characters
        // outside the alphabet goes to the lenient one, which skips them (about 4× slower).
        guard let data = Data(base64Encoded: text) ?? Data(base64Encoded: text, options: .ignoreUnknownCharacters)
        else {
            throw CertificateProviderError(errorCode, "\(context): field '\(path)\(key)' must be base64")
        }
        return Array(data)
    }

    private func required(_ key: String) throws -> JSONValue {
        guard let value = members[key], !value.isNull else {
            throw CertificateProviderError(errorCode, "\(context): field '\(path)\(key)' is missing")
        }
        return value
    }

    private func wrongType(_ key: String, _ expected: String, _ found: JSONValue) -> CertificateProviderError {
        CertificateProviderError(
            errorCode,
            "\(context): field '\(path)\(key)' must be \(expected), found \(found.typeName)"
        )
    }
}
