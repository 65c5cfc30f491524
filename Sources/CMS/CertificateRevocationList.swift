internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
public import Foundation
internal import OpenSSLWrappers

/// A parsed X.509 CRL (RFC 5280), as given with `certsign verify --crl` or fetched from a
/// certificate's CRL distribution point.
public struct CertificateRevocationList: Sendable, CustomStringConvertible {
    /// The DER encoding.
    public let derRepresentation: [UInt8]
    /// The issuer's name (RFC 2253).
    public let issuer: String
    /// When it was issued (`thisUpdate`).
    public let thisUpdate: Date
    /// When the next one is due (`nextUpdate`), when it says.
    public let nextUpdate: Date?

    /// Whether it is a delta CRL (deltaCRLIndicator): it counts only beside its base CRL.
    public var isDelta: Bool { X509_CRL_get_ext_by_NID(handle.pointer, NID_delta_crl, -1) >= 0 }

    package let handle: CRLHandle

    /// Parses one DER CRL.
    /// - Throws: `.malformedInput` when the bytes are not one complete DER CRL.
    public init(derEncoded der: [UInt8]) throws {
        OpenSSLErrorQueue.clear()
        guard
            let crl = der.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                guard buffer.count > 0 else { return nil }
                var cursor = buffer.baseAddress
                guard let parsed = d2i_X509_CRL(nil, &cursor, buffer.count) else { return nil }
                guard let cursor, let base = buffer.baseAddress, cursor - base == buffer.count else {
                    X509_CRL_free(parsed)
                    return nil
                }
                return parsed
            })
        else {
            throw OpenSSLErrorQueue.error(
                .malformedInput,
                "the data is not a DER X.509 CRL (corrupt, truncated or another format)"
            )
        }
        let handle = CRLHandle(takingOwnershipOf: crl)
        self.handle = handle
        derRepresentation = der
        issuer = X509_CRL_get_issuer(crl).flatMap(X509Name.rfc2253) ?? ""
        guard let last = X509_CRL_get0_lastUpdate(crl), let date = ASN1Time.date(of: OpaquePointer(last)) else {
            throw CertificateProviderError.malformedInput("the CRL has no readable thisUpdate")
        }
        thisUpdate = date
        nextUpdate = X509_CRL_get0_nextUpdate(crl).flatMap { ASN1Time.date(of: OpaquePointer($0)) }
    }

    /// Parses every CRL in DER or PEM (`-----BEGIN X509 CRL-----`, several allowed).
    /// - Throws: `.malformedInput` when none can be read.
    public static func lists(derOrPEM bytes: [UInt8]) throws -> [CertificateRevocationList] {
        let marker = Array("-----BEGIN".utf8)
        let isPEM =
            bytes.count >= marker.count
            && (0...(bytes.count - marker.count)).contains { bytes[$0..<($0 + marker.count)].elementsEqual(marker) }
        guard isPEM else {
            return [try CertificateRevocationList(derEncoded: bytes)]
        }
        var lists: [CertificateRevocationList] = []
        try CertificateProviderError.convertingOpenSSLErrors {
            try MemoryBIO.withReadBIO(bytes) { bio in
                while true {
                    guard let crl = PEM_read_bio_X509_CRL(bio, nil, nil, nil) else { break }
                    defer { X509_CRL_free(crl) }
                    var output: UnsafeMutablePointer<UInt8>?
                    let length = i2d_X509_CRL(crl, &output)
                    guard length > 0, let output else { continue }
                    defer { COpenSSLShims_OPENSSL_free(output) }
                    lists.append(
                        try CertificateRevocationList(
                            derEncoded: Array(UnsafeBufferPointer(start: output, count: Int(length)))
                        )
                    )
                }
            }
        }
        OpenSSLErrorQueue.clear()
        guard !lists.isEmpty else { throw CertificateProviderError.malformedInput("no CRL found in the PEM data") }
        return lists
    }

    /// A one-line summary.
    public var description: String { "CRL of \(issuer), thisUpdate \(thisUpdate)" }
}

/// Owns one OpenSSL `X509_CRL*`.
///
/// `@unchecked Sendable`: never mutated after parsing; OpenSSL allows concurrent read-only use
/// (lookups sort the entries once under a lock).
package final class CRLHandle: @unchecked Sendable {
    package let pointer: OpaquePointer
    package init(takingOwnershipOf pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_CRL_free(pointer) }
}
