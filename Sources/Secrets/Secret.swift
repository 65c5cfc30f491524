internal import OpenSSLWrappers

/// A password, PIN or other secret held in a buffer of its own that is wiped when released.
///
/// `Secret` never shows its value: `description`, `debugDescription`, string interpolation, `dump`
/// and `Mirror` all print `Secret(redacted)`. Read the bytes with ``withUnsafeBytes(_:)`` or
/// ``withCString(_:)`` for the length of one call; do not copy them into a `String` that outlives it.
///
/// Note that `init(_ string:)` cannot wipe the `String` it was made from: prefer
/// ``init(bytes:)`` with a buffer you clear yourself, or read secrets from files, environment
/// variables or terminal prompts straight into a `Secret`.
public final class Secret: @unchecked Sendable {
    // Safe to share: the buffer is written once in init and only read afterwards; deinit runs when
    // no reference remains.
    private let storage: UnsafeMutableRawBufferPointer
    /// The number of bytes in the secret.
    public let count: Int

    /// Creates a secret from the UTF-8 bytes of a string.
    public convenience init(_ string: String) {
        self.init(bytes: Array(string.utf8))
    }

    /// Creates a secret by copying bytes.
    public init(bytes: some Collection<UInt8>) {
        count = bytes.count
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 1)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]).copyBytes(from: bytes)
    }

    /// Creates a secret by copying bytes and then wiping the source array.
    public convenience init(wiping bytes: inout [UInt8]) {
        self.init(bytes: bytes)
        bytes.withUnsafeMutableBytes { SecureMemory.cleanse($0) }
        bytes.removeAll()
    }

    deinit {
        SecureMemory.cleanse(storage)
        storage.deallocate()
    }

    /// Whether the secret has no bytes (the empty password).
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the secret's bytes; do not let them escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// Calls `body` with a NUL-terminated copy of the secret that is wiped when `body` returns.
    public func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: count + 1)
        buffer.initialize(repeating: 0)
        defer {
            SecureMemory.cleanse(UnsafeMutableRawBufferPointer(buffer))
            buffer.deallocate()
        }
        withUnsafeBytes { bytes in
            for (index, byte) in bytes.enumerated() { buffer[index] = CChar(bitPattern: byte) }
        }
        // The buffer was allocated with capacity count + 1 >= 1, so baseAddress is non-nil.
        return try body(buffer.baseAddress!)
    }

    /// Whether the secret is valid UTF-8 (OpenSSL 3 and Python encode PKCS#12 passwords as UTF-8).
    public var isValidUTF8: Bool {
        withUnsafeBytes { String(validating: $0.bindMemory(to: UInt8.self), as: UTF8.self) != nil }
    }

    /// The secret a password file (or piped standard input) holds: its first line, without the line
    /// break (`\n` or `\r\n`). This is what "password file" means everywhere in this package:
    /// anything after the first line break is ignored, so a file may end with a newline or carry a
    /// comment line below the password. The source bytes are wiped.
    /// - Parameter bytes: the file's bytes; wiped and emptied on return.
    public static func firstLine(wiping bytes: inout [UInt8]) -> Secret {
        let end = bytes.firstIndex(of: 0x0A) ?? bytes.count
        var line = Array(bytes[..<end])
        bytes.withUnsafeMutableBytes { SecureMemory.cleanse($0) }
        bytes.removeAll()
        if line.last == 0x0D { line.removeLast() }
        return Secret(wiping: &line)
    }

    /// A secret with the same bytes minus one trailing `\n` or `\r\n` (as files and pipes add).
    public func trimmingTrailingNewline() -> Secret {
        withUnsafeBytes { bytes in
            var end = bytes.count
            if end > 0, bytes[end - 1] == 0x0A { end -= 1 }
            if end > 0, bytes[end - 1] == 0x0D { end -= 1 }
            return end == bytes.count ? self : Secret(bytes: UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
        }
    }
}

extension Secret: Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Constant-time comparison of the bytes.
    public static func == (lhs: Secret, rhs: Secret) -> Bool {
        lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in SecureMemory.constantTimeEquals(left, right) } }
    }

    /// Always `Secret(redacted)`: the value is never shown.
    public var description: String { "Secret(redacted)" }
    /// Always `Secret(redacted)`: the value is never shown.
    public var debugDescription: String { "Secret(redacted)" }
    /// A mirror without children, so `dump` and debuggers show nothing of the value.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}
