import Foundation

/// Reads the fields of a JSON object with errors that name the field, its expected type and the
/// context (`"FMP certificates: field 'certificates[0].id' must be an integer, found string"`).
///
/// A wrong shape throws what ``makeError`` makes of the message: ``JSONError`` `.unexpectedShape` by
/// default. A caller with its own error vocabulary passes its own (RemoteProviderSupport's
/// `init(_:context:path:errorCode:)` makes a client's `.network` error, as a server that does not
/// speak the protocol is; the emulator makes `.malformedInput` for requests); nested readers keep it.
public struct JSONObjectReader: Sendable {
    /// Makes the error a wrong shape throws, from its message.
    public typealias ErrorMaker = @Sendable (String) -> any Error

    /// The object's members.
    public let members: [String: JSONValue]
    /// Where the object sits, for error messages (`"FMP sign"`, `"certificates[2]"`).
    public let context: String
    /// The prefix of field names, for nested objects (`"certificates[2]."`).
    public let path: String
    /// Makes the error a wrong shape throws.
    public let makeError: ErrorMaker

    /// Wraps `value`, which must be an object.
    /// - Parameters:
    ///   - value: the object.
    ///   - context: where it sits, for messages.
    ///   - path: the prefix of field names (`"certificates[2]."`), empty at the top.
    ///   - makeError: makes the error a wrong shape throws (default ``JSONError`` `.unexpectedShape`).
    /// - Throws: what `makeError` makes when `value` is not an object.
    public init(
        _ value: JSONValue,
        context: String,
        path: String = "",
        makeError: @escaping ErrorMaker = { JSONError(.unexpectedShape, $0) }
    ) throws {
        guard case .object(let members) = value else {
            let what = path.isEmpty ? "the JSON body" : "field '\(path.dropLast())'"
            throw makeError("\(context): \(what) must be an object, found \(value.typeName)")
        }
        self.members = members
        self.context = context
        self.path = path
        self.makeError = makeError
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
        try JSONObjectReader(try required(key), context: context, path: "\(path)\(key).", makeError: makeError)
    }

    /// The objects of a required array field, as readers (`key[0].`, `key[1].`, …).
    public func objects(_ key: String) throws -> [JSONObjectReader] {
        try array(key).enumerated().map { index, element in
            try JSONObjectReader(element, context: context, path: "\(path)\(key)[\(index)].", makeError: makeError)
        }
    }

    /// A required string field holding base64, decoded.
    public func base64(_ key: String) throws -> [UInt8] {
        let text = try string(key)
        // Strict first (Foundation's fast decoder); text with line breaks or other characters
        // outside the alphabet goes to the lenient one, which skips them (about 4× slower).
        guard let data = Data(base64Encoded: text) ?? Data(base64Encoded: text, options: .ignoreUnknownCharacters)
        else {
            throw makeError("\(context): field '\(path)\(key)' must be base64")
        }
        return Array(data)
    }

    private func required(_ key: String) throws -> JSONValue {
        guard let value = members[key], !value.isNull else {
            throw makeError("\(context): field '\(path)\(key)' is missing")
        }
        return value
    }

    private func wrongType(_ key: String, _ expected: String, _ found: JSONValue) -> any Error {
        makeError("\(context): field '\(path)\(key)' must be \(expected), found \(found.typeName)")
    }
}
