import Synchronization

/// The certificates this process parsed last, by their DER encoding.
///
/// Reading a certificate costs OpenSSL 3 more than 100 µs (it decodes the public key through its
/// decoder framework), and batch commands meet the same few certificates thousands of times:
/// `certsign complete` reads the signer's certificate once per pending file, `verify` the same
/// chain once per signature. A `Certificate` is immutable, so a parsed one serves every later
/// parse of the same bytes. At most `capacity` entries are kept; the oldest goes first.
final class CertificateParseCache: Sendable {
    /// The cache `Certificate(derEncoded:)` uses.
    static let shared = CertificateParseCache(capacity: 64)

    private struct Entries {
        var certificates: [[UInt8]: Certificate] = [:]
        var order: [[UInt8]] = []
    }

    private let capacity: Int
    private let entries = Mutex(Entries())

    init(capacity: Int) { self.capacity = capacity }

    /// The certificate parsed earlier from exactly `der`, or nil.
    func certificate(der: [UInt8]) -> Certificate? {
        entries.withLock { $0.certificates[der] }
    }

    /// Keeps `certificate`, parsed from `der`, dropping the oldest entry when full.
    func keep(_ certificate: Certificate, der: [UInt8]) {
        entries.withLock { entries in
            guard entries.certificates.updateValue(certificate, forKey: der) == nil else { return }
            entries.order.append(der)
            if entries.order.count > capacity {
                entries.certificates[entries.order.removeFirst()] = nil
            }
        }
    }
}
