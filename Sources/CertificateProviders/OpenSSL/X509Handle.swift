internal import COpenSSL
internal import COpenSSLShims
import Foundation

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
    /// - Throws: `.malformedInput` when the bytes are not one complete DER certificate.
    package static func parse(der: [UInt8]) throws -> X509Handle {
        // A GOST public key is decoded while the certificate is parsed: the engine must be there first.
        GOSTEngine.load()
        OpenSSLErrorQueue.clear()
        return try der.withUnsafeBufferPointer { buffer in
            guard buffer.count > 0 else { throw CertificateProviderError.malformedInput("the certificate is empty") }
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let x509 = d2i_X509(nil, &cursor, buffer.count) else {
                throw OpenSSLErrorQueue.error(
                    .malformedInput,
                    "the bytes are not a DER X.509 certificate (corrupt or truncated)"
                )
            }
            let consumed = cursor.map { $0 - buffer.baseAddress! } ?? 0
            guard consumed == buffer.count else {
                X509_free(x509)
                throw CertificateProviderError.malformedInput(
                    "the certificate has \(buffer.count - consumed) unexpected bytes after its end"
                )
            }
            return X509Handle(takingOwnershipOf: x509)
        }
    }

    /// The DER encoding.
    package func derBytes() throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(pointer, &output)
        guard length > 0, let output else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the certificate")
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}

/// Builds a temporary `STACK_OF(X509)` holding up-refs of `certificates`, freed after `body`.
package func withX509Stack<R>(_ certificates: [Certificate], _ body: (OpaquePointer) throws -> R) throws -> R {
    guard let stack = COpenSSLShims_sk_X509_new_null() else {
        throw OpenSSLErrorQueue.error(.cryptoFailure, "could not allocate a certificate stack")
    }
    defer { COpenSSLShims_sk_X509_pop_free(stack) }
    for certificate in certificates {
        X509_up_ref(certificate.handle.pointer)
        if COpenSSLShims_sk_X509_push(stack, certificate.handle.pointer) == 0 {
            X509_free(certificate.handle.pointer)
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not build a certificate stack")
        }
    }
    return try body(stack)
}

/// Copies the certificates of a `STACK_OF(X509)` (up-ref'd) into `Certificate` values; the stack
/// itself is not freed.
package func certificates(fromX509Stack stack: OpaquePointer?) throws -> [Certificate] {
    guard let stack else { return [] }
    var result: [Certificate] = []
    for index in 0..<COpenSSLShims_sk_X509_num(stack) {
        guard let x509 = COpenSSLShims_sk_X509_value(stack, index) else { continue }
        result.append(try Certificate(handle: X509Handle(copying: x509)))
    }
    return result
}
