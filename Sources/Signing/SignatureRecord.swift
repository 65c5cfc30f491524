internal import COpenSSL
public import CertificateProviders
public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One signature the coordinator made, as kept in the ``SignatureJournal``.
public struct SignatureRecord: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// Where the signature bytes are.
    public enum Storage: Sendable, Hashable {
        /// In a file (the `.p7s` the coordinator wrote).
        case file(URL)
        /// In the journal itself.
        case inline([UInt8])
    }

    /// A unique ID (a UUID string; records made by this package use ``newID()``).
    public var id: String
    /// When the signature was made.
    public var createdAt: Date
    /// The provider whose identity signed.
    public var providerID: ProviderID
    /// The signer certificate's subject (RFC 2253).
    public var signerSubject: String
    /// The signer certificate's SHA-256 fingerprint, colon-separated hex.
    public var signerFingerprint: String
    /// The document's name (file name or caller-given name; any Unicode).
    public var documentName: String
    /// The document's size in bytes.
    public var documentSize: Int64
    /// The document's digest with ``digestAlgorithm``.
    public var documentDigest: [UInt8]
    /// The digest algorithm of the signature (stored in the journal by its name, `DigestAlgorithm.rawValue`).
    public var digestAlgorithm: DigestAlgorithm
    /// The container format.
    public var format: SignatureFormat
    /// Whether the signature is detached.
    public var isDetached: Bool
    /// Where the signature bytes are.
    public var storage: Storage

    /// A new record ID: a UUID of version 7 (RFC 9562), the Unix time in milliseconds followed by
    /// 74 random bits from OpenSSL's DRBG.
    ///
    /// IDs made one after the other sort in the order they were made, so the journal's primary-key
    /// index grows at its end instead of at random pages (a batch of random version 4 IDs touched
    /// a different index page for nearly every row); 74 random bits keep IDs made in the same
    /// millisecond, by any number of processes, apart. Foundation's `UUID()` is the fallback when
    /// OpenSSL cannot give random bytes (it also opens `/dev/urandom` on every call, which this does not).
    public static func newID() -> String {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let made = withUnsafeMutableBytes(of: &uuid) { bytes in
            RAND_bytes(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(bytes.count)) == 1
        }
        guard made else { return UUID().uuidString }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let milliseconds = UInt64(max(0, now.tv_sec)) &* 1000 &+ UInt64(max(0, now.tv_nsec)) / 1_000_000
        uuid.0 = UInt8(truncatingIfNeeded: milliseconds >> 40)
        uuid.1 = UInt8(truncatingIfNeeded: milliseconds >> 32)
        uuid.2 = UInt8(truncatingIfNeeded: milliseconds >> 24)
        uuid.3 = UInt8(truncatingIfNeeded: milliseconds >> 16)
        uuid.4 = UInt8(truncatingIfNeeded: milliseconds >> 8)
        uuid.5 = UInt8(truncatingIfNeeded: milliseconds)
        uuid.6 = (uuid.6 & 0x0F) | 0x70  // version 7
        uuid.8 = (uuid.8 & 0x3F) | 0x80  // RFC 9562 variant
        return UUID(uuid: uuid).uuidString
    }

    /// Creates a record.
    public init(
        id: String = SignatureRecord.newID(),
        createdAt: Date = Date(),
        providerID: ProviderID,
        signerSubject: String,
        signerFingerprint: String,
        documentName: String,
        documentSize: Int64,
        documentDigest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        format: SignatureFormat,
        isDetached: Bool,
        storage: Storage
    ) {
        self.id = id
        self.createdAt = createdAt
        self.providerID = providerID
        self.signerSubject = signerSubject
        self.signerFingerprint = signerFingerprint
        self.documentName = documentName
        self.documentSize = documentSize
        self.documentDigest = documentDigest
        self.digestAlgorithm = digestAlgorithm
        self.format = format
        self.isDetached = isDetached
        self.storage = storage
    }

    /// A one-line summary for logs and command-line output.
    public var description: String {
        "SignatureRecord(\(id), \(documentName), \(format)\(isDetached ? " detached" : ""), signer: \(signerSubject))"
    }
}
