internal import COpenSSL
public import CertificateProviders
public import Foundation
import Synchronization

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
    /// 74 random bits from OpenSSL's DRBG, as an upper-case UUID string.
    ///
    /// IDs made one after the other sort in the order they were made, so the journal's primary-key
    /// index grows at its end instead of at random pages (a batch of random version 4 IDs touched
    /// a different index page for nearly every row); 74 random bits keep IDs made in the same
    /// millisecond, by any number of processes, apart. The random bytes come from a per-process
    /// pool filled by `RAND_bytes` 4 KiB at a time (refilled after a `fork`, so a child never
    /// repeats its parent's bytes); Foundation's `UUID()` is the fallback when OpenSSL cannot give
    /// random bytes.
    public static func newID() -> String {
        var bytes: (UInt64, UInt64) = (0, 0)
        let made = withUnsafeMutableBytes(of: &bytes) { raw in
            IDRandomPool.shared.withLock { $0.take(into: UnsafeMutableRawBufferPointer(rebasing: raw[6..<16])) }
        }
        guard made else { return UUID().uuidString }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let milliseconds = UInt64(max(0, now.tv_sec)) &* 1000 &+ UInt64(max(0, now.tv_nsec)) / 1_000_000
        return withUnsafeMutableBytes(of: &bytes) { raw in
            for index in 0..<6 { raw[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * index)) }
            raw[6] = (raw[6] & 0x0F) | 0x70  // version 7
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 9562 variant
            let digits: StaticString = "0123456789ABCDEF"
            return String(unsafeUninitializedCapacity: 36) { text in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    text[position] = digits.utf8Start[Int(raw[index] >> 4)]
                    text[position + 1] = digits.utf8Start[Int(raw[index] & 0x0F)]
                    position += 2
                }
                return position
            }
        }
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

/// Random bytes for record IDs, drawn from OpenSSL's DRBG 4 KiB at a time (one `RAND_bytes` per
/// ~400 IDs instead of one each: a batch made an ID per document).
private struct IDRandomPool: ~Copyable {
    static let shared = Mutex(IDRandomPool())

    private var bytes = [UInt8](repeating: 0, count: 4096)
    private var used = 4096
    /// The process the pool was filled in: a forked child refills before it takes anything.
    private var owner: pid_t = 0

    /// Copies `target.count` unused random bytes into `target`; false when OpenSSL failed.
    mutating func take(into target: UnsafeMutableRawBufferPointer) -> Bool {
        let process = getpid()
        if used + target.count > bytes.count || owner != process {
            guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else { return false }
            used = 0
            owner = process
        }
        bytes.withUnsafeBytes { pool in
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: pool[used..<(used + target.count)]))
        }
        // Used bytes are not kept where a later ID could read them again.
        for index in used..<(used + target.count) { bytes[index] = 0 }
        used += target.count
        return true
    }
}
