internal import COpenSSL
internal import COpenSSLShims
internal import Foundation

/// Owns one OpenSSL `X509*` and frees it in `deinit`.
///
/// `@unchecked Sendable`: the certificate is never mutated after creation; OpenSSL allows
/// concurrent read-only use of an `X509` (its cached extension data is computed under a lock), and
/// the one cached encoding here is behind a lock of its own.
package final class X509Handle: @unchecked Sendable {
    /// The owned certificate; borrowed by callers for the duration of a call.
    package let pointer: OpaquePointer

    /// Takes ownership of `pointer`; it is freed with `X509_free` when this handle goes away.
    package init(takingOwnershipOf pointer: OpaquePointer) { self.pointer = pointer }

    /// Adds a reference to `pointer` (`X509_up_ref`) and owns that reference.
    package init(copying pointer: OpaquePointer) {
        X509_up_ref(pointer)
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }

    // Guarded by `lock`: the SubjectPublicKeyInfo, encoded on first use.
    private let lock = NSLock()
    private var cachedPublicKeyDER: [UInt8]?

    /// The DER SubjectPublicKeyInfo, encoded once, on first use: OpenSSL 3.0's key encoder costs
    /// more than the rest of reading a certificate, and verifying reads many certificates whose key
    /// encoding nobody asks for, while signing compares it for every signature.
    package var publicKeyDER: [UInt8] {
        lock.withLock {
            if let cachedPublicKeyDER { return cachedPublicKeyDER }
            let der = X509_get0_pubkey(pointer).map { EVPKeyHandle.publicKeyDER(of: $0) } ?? []
            cachedPublicKeyDER = der
            return der
        }
    }

    /// Parses DER bytes.
    /// - Throws: `OpenSSLError` (`.malformedInput`) when the bytes are not one complete DER certificate.
    package static func parse(der: [UInt8]) throws -> X509Handle {
        // A GOST public key is decoded while the certificate is parsed: the engine must be there first.
        GOSTEngineLoader.load()
        OpenSSLErrorQueue.clear()
        return try der.withUnsafeBufferPointer { buffer in
            guard buffer.count > 0 else {
                throw OpenSSLError(.malformedInput, "the certificate is empty", openSSLErrors: [])
            }
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let x509 = d2i_X509(nil, &cursor, buffer.count) else {
                throw OpenSSLError(.malformedInput, "the bytes are not a DER X.509 certificate (corrupt or truncated)")
            }
            let consumed = cursor.map { $0 - buffer.baseAddress! } ?? 0
            guard consumed == buffer.count else {
                X509_free(x509)
                throw OpenSSLError(
                    .malformedInput,
                    "the certificate has \(buffer.count - consumed) unexpected bytes after its end",
                    openSSLErrors: []
                )
            }
            return X509Handle(takingOwnershipOf: x509)
        }
    }

    /// Parses every PEM certificate of `pem`, in order, until the input ends or one block is broken.
    /// - Returns: the certificates read, and nil when the input simply ended, or OpenSSL's errors
    ///   when a block could not be read (the certificates before it are kept).
    /// - Throws: `OpenSSLError` when `pem` is too large for a memory BIO.
    package static func parse(pem: [UInt8]) throws -> (certificates: [X509Handle], failure: [String]?) {
        GOSTEngineLoader.load()
        OpenSSLErrorQueue.clear()
        return try MemoryBIO.withReadBIO(pem) { bio in
            var result: [X509Handle] = []
            while true {
                if let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
                    result.append(X509Handle(takingOwnershipOf: x509))
                    continue
                }
                let entries = OpenSSLErrorQueue.drainEntries()
                let endOfInput =
                    entries.last.map { $0.library == ERR_LIB_PEM && $0.reason == PEM_R_NO_START_LINE } ?? true
                return (result, endOfInput ? nil : entries.map(\.text))
            }
        }
    }

    /// The DER encoding.
    /// - Throws: `OpenSSLError` when OpenSSL cannot encode the certificate.
    package func derBytes() throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(pointer, &output)
        guard length > 0, let output else {
            throw OpenSSLError(.cryptoFailure, "could not encode the certificate")
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}

/// Builds a temporary `STACK_OF(X509)` holding up-refs of `certificates`, freed after `body`.
/// - Throws: `OpenSSLError` when the stack cannot be built, or what `body` throws.
package func withX509Stack<R>(_ certificates: [X509Handle], _ body: (OpaquePointer) throws -> R) throws -> R {
    guard let stack = COpenSSLShims_sk_X509_new_null() else {
        throw OpenSSLError(.cryptoFailure, "could not allocate a certificate stack")
    }
    defer { COpenSSLShims_sk_X509_pop_free(stack) }
    for certificate in certificates {
        X509_up_ref(certificate.pointer)
        if COpenSSLShims_sk_X509_push(stack, certificate.pointer) == 0 {
            X509_free(certificate.pointer)
            throw OpenSSLError(.cryptoFailure, "could not build a certificate stack")
        }
    }
    return try body(stack)
}

extension X509Handle {
    /// Handles (up-ref'd) of the certificates of a `STACK_OF(X509)`, in order; the stack itself is
    /// not freed. A nil stack has none.
    package static func handles(inStack stack: OpaquePointer?) -> [X509Handle] {
        guard let stack else { return [] }
        return (0..<COpenSSLShims_sk_X509_num(stack)).compactMap { index in
            COpenSSLShims_sk_X509_value(stack, index).map { X509Handle(copying: $0) }
        }
    }
}
