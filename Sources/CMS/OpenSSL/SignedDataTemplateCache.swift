import CertificateProviders
import Foundation
import Synchronization

/// The prepared SignedData (``SignedDataTemplate``) of single signatures with local keys
/// (``CMSSigner``): one set of templates per signer and options, so signing one document after the
/// other only replaces digest and signing time, signs and encodes.
///
/// Keyed safely: an entry belongs to one `LocalSigningKey` object (held weakly and compared by
/// identity, so a new key object, even for the same certificate, never meets another key's
/// context), the SHA-256 fingerprints of the certificate and of every chain certificate in order,
/// the format, detached or attached, and the digest algorithm. A renewed certificate on the same
/// key, another chain or other options get their own template.
///
/// Bounded: at most ``entryLimit`` signers (the least recently used is dropped first, entries whose
/// key object is gone before any other) and ``idleLimit`` idle templates per signer (concurrent
/// signers with one identity each take their own template, extra ones are freed when returned).
///
/// A template's signing context holds OpenSSL's reference to the private key: once the key object
/// is released, that reference lives on only until the next signature through the cache drops the
/// entry (or the process ends).
///
/// Thread-safe: a template is taken out of the cache for one signature and put back after it, so no
/// two threads ever share one.
package final class SignedDataTemplateCache: Sendable {
    /// The process-wide cache ``CMSSigner`` uses.
    package static let shared = SignedDataTemplateCache()

    /// The most signers (key, certificate, chain and options) kept.
    package let entryLimit: Int
    /// The most idle templates kept per signer.
    package let idleLimit: Int

    private struct Key: Hashable {
        let owner: ObjectIdentifier
        let fingerprints: [UInt8]
        let format: SignatureFormat
        let detached: Bool
        let digestAlgorithm: DigestAlgorithm

        /// The fingerprints as one block of bytes (an array's own hash combines byte by byte).
        func hash(into hasher: inout Hasher) {
            hasher.combine(owner)
            fingerprints.withUnsafeBytes { hasher.combine(bytes: $0) }
            hasher.combine(format)
            hasher.combine(detached)
            hasher.combine(digestAlgorithm)
        }
    }

    /// A signer's templates; a class, so that taking and putting one back changes the entry in
    /// place (one dictionary lookup, no copy of the idle list).
    private final class Entry {
        weak var owner: LocalSigningKey?
        var idle: [Lease]
        var lastUse: UInt64

        init(owner: LocalSigningKey, idle: [Lease], lastUse: UInt64) {
            self.owner = owner
            self.idle = idle
            self.lastUse = lastUse
        }
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var clock: UInt64 = 0
        /// Templates built (statistics for tests).
        var built = 0
    }

    private let state = Mutex(State())

    /// A cache with the given bounds.
    package init(entryLimit: Int = 16, idleLimit: Int = max(2, ProcessInfo.processInfo.activeProcessorCount)) {
        self.entryLimit = max(1, entryLimit)
        self.idleLimit = max(1, idleLimit)
    }

    /// How many templates the cache has built so far (for tests).
    package var templatesBuilt: Int { state.withLock { $0.built } }

    /// How many signers the cache holds now (for tests).
    package var entryCount: Int { state.withLock { $0.entries.count } }

    /// Signs with a template for this signer and options: a cached one, or a new one that is kept
    /// afterwards. A template whose signature failed is dropped, not reused.
    /// - Throws: as ``SignedDataTemplate/init(identity:key:format:detached:digestAlgorithm:signingCertificateAttribute:)``
    ///   and ``SignedDataTemplate/sign(digest:signingTime:attachedContent:)``.
    package func sign(
        _ request: SignedDataSigner.Request,
        signingTime: Date,
        identity: SigningIdentity,
        key: LocalSigningKey
    ) throws -> [UInt8] {
        var fingerprints = identity.certificate.sha256Fingerprint
        for certificate in identity.chain { fingerprints += certificate.sha256Fingerprint }
        let detached = request.attachedContent == nil
        let cacheKey = Key(
            owner: ObjectIdentifier(key),
            fingerprints: fingerprints,
            format: request.format,
            detached: detached,
            digestAlgorithm: request.digestAlgorithm
        )
        let template =
            try take(cacheKey, owner: key)?.template
            ?? SignedDataTemplate(
                identity: identity,
                key: key,
                format: request.format,
                detached: detached,
                digestAlgorithm: request.digestAlgorithm,
                signingCertificateAttribute: nil
            )
        let signature = try template.sign(
            digest: request.digest,
            signingTime: signingTime,
            attachedContent: request.attachedContent
        )
        put(Lease(template: template), for: cacheKey, owner: key)
        return signature
    }

    /// Takes an idle template of the signer out, or counts a new one to be built (nil).
    private func take(_ cacheKey: Key, owner: LocalSigningKey) -> Lease? {
        state.withLock { state in
            state.clock += 1
            // The owner check makes a reused ObjectIdentifier (a freed key's address) a miss.
            if let entry = state.entries[cacheKey], entry.owner === owner {
                entry.lastUse = state.clock
                let lease = entry.idle.popLast()
                if lease == nil { state.built += 1 }
                return lease
            }
            state.built += 1
            return nil
        }
    }

    /// Puts a template back (or frees it when the signer already has enough idle ones), and keeps
    /// the cache within its bounds.
    private func put(_ lease: Lease, for cacheKey: Key, owner: LocalSigningKey) {
        // Dropped templates are freed after the lock is released.
        var dropped: [Lease] = []
        state.withLock { state in
            state.clock += 1
            if let entry = state.entries[cacheKey], entry.owner === owner {
                entry.lastUse = state.clock
                if entry.idle.count < idleLimit { entry.idle.append(lease) } else { dropped.append(lease) }
            } else {
                if let stale = state.entries[cacheKey] { dropped += stale.idle }
                state.entries[cacheKey] = Entry(owner: owner, idle: [lease], lastUse: state.clock)
            }
            // Signers whose key object is gone first, then the least recently used.
            for (key, entry) in state.entries where entry.owner == nil {
                dropped += entry.idle
                state.entries[key] = nil
            }
            while state.entries.count > entryLimit,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                dropped += oldest.value.idle
                state.entries[oldest.key] = nil
            }
        }
        dropped.removeAll()
    }
}

/// The prepared SignedData of one batch (``BatchSigningPipeline``): each worker of a group takes
/// one and puts it back when the group is signed, so the next group's workers sign on templates
/// that are built, and whose encoded form is checked, once per batch instead of once per group.
///
/// Thread-safe the same way as ``SignedDataTemplateCache``: a template is out of the pool while one
/// worker uses it.
package final class SignedDataTemplatePool: Sendable {
    private let idle = Mutex<[Lease]>([])

    /// An empty pool.
    package init() {}

    /// An idle template, or nil when every template is in use (or none was made yet).
    package func take() -> SignedDataTemplate? { idle.withLock { $0.popLast()?.template } }

    /// Gives a template back for the next group.
    package func put(_ template: SignedDataTemplate) { idle.withLock { $0.append(Lease(template: template)) } }
}

/// A template kept under a lock by ``SignedDataTemplateCache`` or ``SignedDataTemplatePool``;
/// `@unchecked Sendable` because both hand each template to one caller at a time (taken out under
/// the lock, used by that caller only, put back under the lock), so the non-thread-safe OpenSSL
/// structure is never reached from two threads at once.
private struct Lease: @unchecked Sendable {
    let template: SignedDataTemplate
}
