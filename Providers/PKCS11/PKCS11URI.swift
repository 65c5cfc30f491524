import CertificateProviders
import Foundation

/// A `pkcs11:` URI (RFC 7512) naming a token and an object on it.
///
/// Path attributes understood: `token`, `manufacturer`, `serial`, `model` (the token), `object`
/// (the label), `id` (CKA_ID bytes, usually percent-encoded: `id=%01`), `type` (`private`, `cert`,
/// `public`), plus `slot-id`, `slot-description`, `slot-manufacturer`, `library-manufacturer`,
/// `library-description` and `library-version`, which are accepted and matched where they apply.
/// Query attributes: `module-path` (the module to load) is understood; `pin-value` and `pin-source`
/// are refused, because PINs come only as secrets (`pin` parameter), never inside a URI that ends up
/// in shell history and logs. Values are percent-decoded (`%20`, UTF-8).
public struct PKCS11URI: Sendable, Hashable, CustomStringConvertible {
    /// The token label (`token=`).
    public var token: String?
    /// The token manufacturer (`manufacturer=`).
    public var manufacturer: String?
    /// The token serial number (`serial=`).
    public var serial: String?
    /// The token model (`model=`).
    public var model: String?
    /// The object label, CKA_LABEL (`object=`).
    public var object: String?
    /// The object ID, CKA_ID (`id=`).
    public var id: [UInt8]?
    /// The object type (`type=`: `private`, `public`, `cert`, `secret-key`, `data`).
    public var type: String?
    /// The slot ID (`slot-id=`).
    public var slotID: UInt?
    /// The module path from the query (`?module-path=`).
    public var modulePath: String?

    /// An empty URI (`pkcs11:`), which matches every token.
    public init() {}

    /// Parses a URI.
    /// - Throws: `.invalidParameter` for a string that is not a `pkcs11:` URI, a bad percent escape,
    ///   an unknown path attribute, or a PIN inside the URI.
    public init(_ text: String) throws {
        guard text.lowercased().hasPrefix("pkcs11:") else {
            throw CertificateProviderError.invalidParameter(
                "'\(Self.redactingPIN(text))' is not a pkcs11: URI (RFC 7512), e.g. pkcs11:token=test;object=rsakey"
            )
        }
        let body = text.dropFirst("pkcs11:".count)
        let parts = body.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = parts.first.map(String.init) ?? ""
        let query = parts.count > 1 ? String(parts[1]) : ""
        for attribute in query.split(separator: "&") {
            let (name, value) = try Self.split(attribute)
            switch name {
            case "pin-value", "pin-source":
                throw CertificateProviderError.invalidParameter(
                    "the pkcs11: URI has a \(name) attribute; PINs are never taken from a URI: give the PIN as the "
                        + "secret parameter 'pin' (certsign: --param-env pin=VAR)"
                )
            case "module-path": modulePath = try Self.decodeString(value, name)
            default: continue  // RFC 7512 §2.3: unknown query attributes are ignored (module-name, vendor ones)
            }
        }
        for attribute in path.split(separator: ";") {
            let (name, value) = try Self.split(attribute)
            switch name {
            case "token": token = try Self.decodeString(value, name)
            case "manufacturer": manufacturer = try Self.decodeString(value, name)
            case "serial": serial = try Self.decodeString(value, name)
            case "model": model = try Self.decodeString(value, name)
            case "object": object = try Self.decodeString(value, name)
            case "id": id = try Self.decode(value, name)
            case "type":
                let kind = try Self.decodeString(value, name)
                guard ["private", "public", "cert", "secret-key", "data"].contains(kind) else {
                    throw CertificateProviderError.invalidParameter(
                        "the pkcs11: URI's type=\(kind) is not one of private, public, cert, secret-key, data"
                    )
                }
                type = kind
            case "slot-id":
                guard let number = UInt(try Self.decodeString(value, name)) else {
                    throw CertificateProviderError.invalidParameter(
                        "the pkcs11: URI's slot-id must be a decimal number"
                    )
                }
                slotID = number
            case "slot-description", "slot-manufacturer", "library-manufacturer", "library-description",
                "library-version":
                continue
            case "pin-value", "pin-source":
                throw CertificateProviderError.invalidParameter(
                    "the pkcs11: URI has a \(name) attribute; PINs are never taken from a URI: give the PIN as the "
                        + "secret parameter 'pin' (certsign: --param-env pin=VAR)"
                )
            default:
                throw CertificateProviderError.invalidParameter(
                    "the pkcs11: URI has an unknown attribute '\(name)' (RFC 7512: token, manufacturer, serial, "
                        + "model, object, id, type)"
                )
            }
        }
    }

    /// The URI in RFC 7512 form, percent-encoding what needs it (the ID always as `%XX` bytes).
    public var description: String {
        var parts: [String] = []
        if let token { parts.append("token=" + Self.encode(Array(token.utf8))) }
        if let manufacturer { parts.append("manufacturer=" + Self.encode(Array(manufacturer.utf8))) }
        if let model { parts.append("model=" + Self.encode(Array(model.utf8))) }
        if let serial { parts.append("serial=" + Self.encode(Array(serial.utf8))) }
        if let slotID { parts.append("slot-id=\(slotID)") }
        if let object { parts.append("object=" + Self.encode(Array(object.utf8))) }
        if let id {
            parts.append(
                "id=" + id.map { "%" + ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined()
            )
        }
        if let type { parts.append("type=" + type) }
        var text = "pkcs11:" + parts.joined(separator: ";")
        if let modulePath { text += "?module-path=" + Self.encode(Array(modulePath.utf8)) }
        return text
    }

    /// What the URI says about the token, for messages ("token=test").
    var tokenDescription: String {
        var parts: [String] = []
        if let token { parts.append("token=\(token)") }
        if let manufacturer { parts.append("manufacturer=\(manufacturer)") }
        if let model { parts.append("model=\(model)") }
        if let serial { parts.append("serial=\(serial)") }
        if let slotID { parts.append("slot-id=\(slotID)") }
        return parts.isEmpty ? "any token" : parts.joined(separator: ";")
    }

    /// What the URI says about the object, for messages ("object=rsakey;id=%01").
    var objectDescription: String {
        var copy = PKCS11URI()
        copy.object = object
        copy.id = id
        let text = String(copy.description.dropFirst("pkcs11:".count))
        return text.isEmpty ? "any object" : text
    }

    private static func split(_ attribute: Substring) throws -> (String, Substring) {
        guard let equals = attribute.firstIndex(of: "=") else {
            throw CertificateProviderError.invalidParameter(
                "the pkcs11: URI attribute '\(attribute)' has no '=' (write name=value)"
            )
        }
        return (attribute[..<equals].lowercased(), attribute[attribute.index(after: equals)...])
    }

    private static func decodeString(_ value: Substring, _ name: String) throws -> String {
        let bytes = try decode(value, name)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CertificateProviderError.invalidParameter(
                "the pkcs11: URI's \(name) is not UTF-8 after percent-decoding"
            )
        }
        return text
    }

    /// Percent-decodes (RFC 3986 §2.1).
    private static func decode(_ value: Substring, _ name: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var iterator = Array(value.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw CertificateProviderError.invalidParameter(
                    "the pkcs11: URI's \(name) has a bad percent escape (write %XX with two hex digits)"
                )
            }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Percent-encodes everything but RFC 7512's unreserved path characters.
    private static func encode(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            let scalar = Unicode.Scalar(byte)
            if (byte < 0x80 && (scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar))))
                || "-._~:[]@!$'()*+,&".unicodeScalars.contains(scalar)
            {
                text.unicodeScalars.append(scalar)
            } else {
                text += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return text
    }

    /// `text` with anything after `pin-value=` hidden, for error messages.
    static func redactingPIN(_ text: String) -> String {
        guard let range = text.range(of: "pin-value=", options: .caseInsensitive) else { return text }
        return String(text[..<range.upperBound]) + "<redacted>"
    }
}
