import CertificateProviders

/// Walking the hash chain: ``SignatureJournal/verify(expecting:)``.
extension SignatureJournal {
    /// How many entries one read of the chain takes.
    static let verificationPageSize = 2000

    /// Walks the whole chain from the first entry, recomputing every hash, and checks the stored
    /// head and the index of current records against it.
    ///
    /// - Parameter published: a head published earlier (``head()``): the entry at its count must
    ///   still have its hash, which proves the history up to it did not change.
    /// - Returns: the verified head.
    /// - Throws: `.storeCorrupted` naming the first entry (its sequence number and record ID) that
    ///   was changed, deleted or inserted behind the journal's back, or the first index row that
    ///   does not follow from the chain; the backend's errors.
    public func verify(expecting published: JournalHead? = nil) throws -> JournalHead {
        let backend = chainBackend
        return try backend.readSnapshot { try Self.walk(backend, expecting: published) }
    }

    private static func walk(_ backend: any JournalBackend, expecting published: JournalHead?) throws -> JournalHead {
        let storedHead = try backend.head()
        var walker = ChainWalker(location: backend.location, storedHead: storedHead)
        var last: Int64 = 0
        while true {
            let page = try backend.entries(after: last, limit: verificationPageSize)
            for entry in page {
                try walker.check(entry)
                if let published, published.count == entry.sequence, published.hash != entry.hash {
                    throw walker.failure(
                        "row \(entry.sequence) (\(entry.recordID)) no longer has the hash of the published head "
                            + "\(published.hashHex): the history before it was changed"
                    )
                }
            }
            guard let next = page.last?.sequence else { break }
            last = next
        }
        try walker.finish()
        if let published, published.count > walker.head.count {
            throw walker.failure(
                "the journal has \(walker.head.count) entries, fewer than the published head's \(published.count): "
                    + "rows \(walker.head.count + 1)…\(published.count) were deleted"
            )
        }
        try walker.checkIndex(try backend.currentIndex())
        return walker.head
    }
}

/// The state of one walk along the chain.
struct ChainWalker {
    let location: String
    let storedHead: JournalHead
    /// The head after the entries checked so far.
    private(set) var head = JournalHead.empty
    /// The current records after those entries: ID → sequence.
    private var current: [String: Int64] = [:]

    init(location: String, storedHead: JournalHead) {
        self.location = location
        self.storedHead = storedHead
    }

    func failure(_ finding: String) -> CertificateProviderError {
        CertificateProviderError(
            .storeCorrupted,
            "the signature journal \(location) was changed behind certsign's back: \(finding)"
        )
    }

    /// Checks the next entry of the walk.
    mutating func check(_ entry: JournalEntry) throws {
        let expected = head.count + 1
        let name = "row \(entry.sequence) (\(entry.kind) \(entry.recordID))"
        if entry.sequence > storedHead.count {
            throw failure("\(name) was inserted after the journal's head (\(storedHead.count) rows)")
        }
        if entry.sequence != expected {
            throw failure("row \(expected) was deleted (the chain goes from row \(head.count) to \(entry.sequence))")
        }
        if entry.previousHash != head.hash {
            throw failure(
                "\(name) does not follow row \(head.count): a row before it was deleted or inserted, or its "
                    + "previous-hash was changed"
            )
        }
        if entry.chainedHash() != entry.hash {
            throw failure("\(name) was changed (its hash no longer matches its fields)")
        }
        switch JournalEntry.Kind(rawValue: entry.kind) {
        case .sign:
            guard current[entry.recordID] == nil else {
                throw failure("\(name) signs an ID that is already current: it was inserted")
            }
            current[entry.recordID] = entry.sequence
        case .update:
            guard current[entry.recordID] != nil else { throw failure("\(name) updates a record that is not current") }
            current[entry.recordID] = entry.sequence
        case .remove:
            guard current.removeValue(forKey: entry.recordID) != nil else {
                throw failure("\(name) removes a record that is not current")
            }
        case nil:
            throw failure("\(name) has an unknown kind")
        }
        head = entry.head
    }

    /// Checks the end of the chain against the stored head.
    func finish() throws {
        if head.count < storedHead.count {
            throw failure(
                "row \(head.count + 1) was deleted (the chain ends at row \(head.count), the head says "
                    + "\(storedHead.count))"
            )
        }
        if head.hash != storedHead.hash {
            throw failure("the head row was changed (its hash is not row \(head.count)'s)")
        }
    }

    /// Checks the stored index of current records against the one the chain gives.
    func checkIndex(_ stored: [String: Int64]) throws {
        for (id, sequence) in current.sorted(by: { $0.value < $1.value }) where stored[id] != sequence {
            throw failure(
                stored[id] == nil
                    ? "the current-records row of \(id) (row \(sequence)) was deleted"
                    : "the current-records row of \(id) was changed (row \(stored[id] ?? 0), the chain says \(sequence))"
            )
        }
        if let extra = stored.keys.sorted().first(where: { current[$0] == nil }) {
            throw failure("a current-records row for \(extra) was inserted (the chain removed or never signed it)")
        }
    }
}
