import CertificateProviders
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One row of a journal's hash chain, as stored: a signature made (`sign`), its stored fields
/// replaced (`update`, a signature extended to CAdES-T) or its record removed (`remove`).
///
/// The record columns are nil in a `remove` entry. Both backends store exactly these fields, and
/// ``canonicalEncoding`` (the bytes the chain hashes) is computed from them, never from a
/// ``SignatureRecord`` rebuilt from them, so a stored value this build cannot interpret is still
/// hashed as it is.
package struct JournalEntry: Sendable, Equatable {
    /// What an entry does to the current set of records.
    package enum Kind: String, Sendable {
        /// A new record: its ID must not be current.
        case sign
        /// New fields for the current record with this ID.
        case update
        /// The current record with this ID is removed.
        case remove
    }

    /// The position in the chain: 1, 2, 3, … with no gap.
    package var sequence: Int64
    /// `sign`, `update` or `remove` as stored (a tampered value is still hashed as it is).
    package var kind: String
    /// The record's ID.
    package var recordID: String
    package var createdAt: Double?
    package var providerID: String?
    package var signerSubject: String?
    package var signerFingerprint: String?
    package var documentName: String?
    package var documentSize: Int64?
    package var documentDigest: [UInt8]?
    package var digestAlgorithm: String?
    package var format: String?
    package var detached: Bool?
    package var signaturePath: String?
    package var signature: [UInt8]?
    /// The host name of the process that wrote the entry (for `sign`, the signing worker).
    package var host: String
    /// The process ID of that process.
    package var processID: Int64
    /// The hash of the entry before (32 zero bytes for the first).
    package var previousHash: [UInt8]
    /// `SHA-256(previousHash ‖ canonicalEncoding)`.
    package var hash: [UInt8]

    /// The previous hash of the first entry, and the head hash of an empty journal.
    package static let genesisHash = [UInt8](repeating: 0, count: 32)

    /// The fixed first field of every encoding (a version mark: a later encoding changes it).
    package static let encodingTag = "certsign-journal-entry-1"

    /// An entry for `record` after `previous`: fields copied from the record, hash computed.
    package init(_ kind: Kind, _ record: SignatureRecord, after previous: JournalHead) {
        self.init(
            kind,
            recordID: record.id,
            host: record.workerHost,
            processID: record.workerProcessID,
            after: previous
        )
        createdAt = record.createdAt.timeIntervalSince1970
        providerID = record.providerID.rawValue
        signerSubject = record.signerSubject
        signerFingerprint = record.signerFingerprint
        documentName = record.documentName
        documentSize = record.documentSize
        documentDigest = record.documentDigest
        digestAlgorithm = record.digestAlgorithm.rawValue
        format = record.format.rawValue
        detached = record.isDetached
        switch record.storage {
        case .file(let url): signaturePath = url.path
        case .inline(let bytes): signature = bytes
        }
        hash = chainedHash()
    }

    /// A `remove` entry for the record `id`, written by this process, after `previous`.
    package init(removing id: String, after previous: JournalHead) {
        self.init(
            .remove,
            recordID: id,
            host: SignatureRecord.currentHost,
            processID: Int64(getpid()),
            after: previous
        )
        hash = chainedHash()
    }

    private init(_ kind: Kind, recordID: String, host: String, processID: Int64, after previous: JournalHead) {
        sequence = previous.count + 1
        self.kind = kind.rawValue
        self.recordID = recordID
        self.host = host
        self.processID = processID
        previousHash = previous.hash
        hash = []
    }

    /// An entry as read from a backend.
    package init(
        sequence: Int64,
        kind: String,
        recordID: String,
        host: String,
        processID: Int64,
        previousHash: [UInt8],
        hash: [UInt8]
    ) {
        self.sequence = sequence
        self.kind = kind
        self.recordID = recordID
        self.host = host
        self.processID = processID
        self.previousHash = previousHash
        self.hash = hash
    }

    /// The head after this entry.
    package var head: JournalHead { JournalHead(count: sequence, hash: hash) }

    /// `SHA-256(previousHash ‖ canonicalEncoding)`: what ``hash`` must be.
    package func chainedHash() -> [UInt8] { DigestAlgorithm.sha256.hash(previousHash + canonicalEncoding) }

    /// The bytes the chain hashes (documented in the module's DocC, "The hash chain"): each field
    /// in this fixed order as a 4-byte big-endian length and its bytes, an absent field as the
    /// length `0xFFFFFFFF` alone. Text is UTF-8; integers 8 bytes big-endian two's complement;
    /// `created_at` the 8 big-endian bytes of its IEEE 754 binary64; `detached` one byte 0 or 1.
    package var canonicalEncoding: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + (signature?.count ?? 0))
        func field(_ value: [UInt8]?) {
            guard let value else {
                bytes += [0xFF, 0xFF, 0xFF, 0xFF]
                return
            }
            withUnsafeBytes(of: UInt32(value.count).bigEndian) { bytes += $0 }
            bytes += value
        }
        func text(_ value: String?) { field(value.map { Array($0.utf8) }) }
        func integer(_ value: Int64?) {
            field(value.map { number in withUnsafeBytes(of: number.bigEndian) { Array($0) } })
        }
        text(Self.encodingTag)
        integer(sequence)
        text(kind)
        text(recordID)
        field(createdAt.map { number in withUnsafeBytes(of: number.bitPattern.bigEndian) { Array($0) } })
        text(providerID)
        text(signerSubject)
        text(signerFingerprint)
        text(documentName)
        integer(documentSize)
        field(documentDigest)
        text(digestAlgorithm)
        text(format)
        field(detached.map { [$0 ? 1 : 0] })
        text(signaturePath)
        field(signature)
        text(host)
        integer(processID)
        return bytes
    }

    /// The record a `sign` or `update` entry holds.
    /// - Throws: `.storeCorrupted` when a field is missing or names a digest this build does not know.
    package func record() throws -> SignatureRecord {
        guard let createdAt, let providerID, let signerSubject, let signerFingerprint, let documentName,
            let documentSize, let documentDigest, let digestName = digestAlgorithm, let format, let detached
        else {
            throw CertificateProviderError(
                .storeCorrupted,
                "the signature journal's row \(sequence) (\(recordID)) lacks a field of its record"
            )
        }
        guard let digestAlgorithm = DigestAlgorithm(name: digestName) else {
            throw CertificateProviderError(
                .storeCorrupted,
                "the signature journal has a record (\(recordID)) with the digest '\(digestName)', "
                    + "which this build does not know; update certsign"
            )
        }
        let storage: SignatureRecord.Storage
        if let signaturePath {
            storage = .file(URL(fileURLWithPath: signaturePath))
        } else {
            storage = .inline(signature ?? [])
        }
        return SignatureRecord(
            id: recordID,
            createdAt: Date(timeIntervalSince1970: createdAt),
            providerID: ProviderID(providerID),
            signerSubject: signerSubject,
            signerFingerprint: signerFingerprint,
            documentName: documentName,
            documentSize: documentSize,
            documentDigest: documentDigest,
            digestAlgorithm: digestAlgorithm,
            format: SignatureFormat(format),
            isDetached: detached,
            storage: storage,
            workerHost: host,
            workerProcessID: processID
        )
    }
}
