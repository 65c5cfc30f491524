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
    /// The host name of the worker process that made the signature (empty for records an older
    /// journal held before they were chained).
    public var workerHost: String
    /// The process ID of that worker (0 when unknown).
    public var workerProcessID: Int64

    /// This machine's host name (`gethostname`), as new records carry it.
    public static let currentHost: String = {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// A new record ID: a UUID string (RFC 9562 version 8, the layout RFC 9562 leaves to the
    /// application) whose first 8 hex digits follow the clock and whose other 90 bits are random.
    ///
    /// - The first 32 bits are the wall clock in microseconds, modulo 2³² (the cycle is 71.6 minutes),
    ///   and grow by at least one from one ID to the next in a process. Records made one after
    ///   another therefore sit next to each other in the journal's ID index: a batch adds its rows
    ///   to a few adjacent index pages instead of one page per row, so the journal's cost per row
    ///   stays flat as it grows (with random IDs it doubled by 200 000 rows, all of it page writes).
    /// - Those 8 digits still tell records apart, so a short prefix names a record (`certsign
    ///   signatures remove 0F1C3A52`, as git takes abbreviated commits): two records share them only
    ///   when made at the same microsecond of the cycle. A plain time-ordered ID (version 7) would
    ///   have given every record of a minute the same first 8 digits.
    /// - The random bits come from a per-process pool filled by `RAND_bytes` 4 KiB at a time
    ///   (refilled in a forked child before it takes anything, so a child never repeats its parent's
    ///   bytes); Foundation's `UUID()` (random, version 4) is the fallback when OpenSSL cannot give
    ///   random bytes.
    public static func newID() -> String {
        var bytes: (UInt64, UInt64) = (0, 0)
        let made = withUnsafeMutableBytes(of: &bytes) { raw in IDRandomPool.shared.withLock { $0.take(into: raw) } }
        guard made else { return UUID().uuidString }
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x80  // version 8
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

    /// Creates a record; the worker fields default to this process.
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
        storage: Storage,
        workerHost: String = SignatureRecord.currentHost,
        workerProcessID: Int64 = Int64(getpid())
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
        self.workerHost = workerHost
        self.workerProcessID = workerProcessID
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
    /// The ``ForkGeneration`` the pool was filled in: a forked child refills before it takes anything.
    private var filledIn: UInt64 = .max

    /// The last clock value (microseconds) given to an ID in this process.
    private var lastMicroseconds: UInt64 = 0

    /// Fills the 16 bytes of `target`: the first 4 with the next clock value (big-endian, see
    /// ``SignatureRecord/newID()``), the other 12 with unused random bytes; false when OpenSSL failed.
    mutating func take(into target: UnsafeMutableRawBufferPointer) -> Bool {
        precondition(target.count == 16)
        let generation = ForkGeneration.current
        if used + 12 > bytes.count || generation != filledIn {
            guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else { return false }
            used = 0
            filledIn = generation
        }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let microseconds = UInt64(max(0, now.tv_sec)) &* 1_000_000 &+ UInt64(max(0, now.tv_nsec)) / 1000
        lastMicroseconds = max(microseconds, lastMicroseconds &+ 1)
        target.storeBytes(of: UInt32(truncatingIfNeeded: lastMicroseconds).bigEndian, as: UInt32.self)
        bytes.withUnsafeBytes { pool in
            UnsafeMutableRawBufferPointer(rebasing: target[4...]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: pool[used..<(used + 12)])
            )
        }
        // Used bytes are not kept where a later ID could read them again.
        for index in used..<(used + 12) { bytes[index] = 0 }
        used += 12
        return true
    }
}

/// Counts the `fork`s of this process's lineage: a `pthread_atfork` child handler, registered the
/// first time it is read, adds one in the child. The ID pool compares it instead of calling
/// `getpid` for every ID.
private enum ForkGeneration {
    private static let count = Atomic<UInt64>(0)
    private static let registered: Bool = {
        pthread_atfork(nil, nil) { ForkGeneration.count.add(1, ordering: .relaxed) }
        return true
    }()

    static var current: UInt64 {
        _ = registered
        return count.load(ordering: .relaxed)
    }
}
