import CertificateProviders

/// Copying a journal's chain into another journal: ``SignatureJournal/copyChain(to:)``.
extension SignatureJournal {
    /// Copies this journal's whole chain, entry by entry and unchanged (hashes, hosts and process
    /// IDs included), into `destination`, which must be empty; then verifies both chains and checks
    /// that their heads are equal, which proves the copy holds exactly this history.
    ///
    /// Pages of entries are appended one transaction each; a copy that stopped half-way is taken up
    /// again where it stopped (the destination's head must then be this chain's entry at its count).
    /// - Returns: the head both journals now share.
    /// - Throws: `.alreadyExists` when the destination holds another history; `.storeCorrupted`
    ///   when either chain does not verify; the backends' errors.
    public func copyChain(to destination: SignatureJournal) async throws -> JournalHead {
        let source = try verify()
        var copied = try await destination.head()
        if copied.count > 0 {
            let mine = try chainBackend.entries(after: copied.count - 1, limit: 1).first
            guard let mine, mine.hash == copied.hash else {
                throw CertificateProviderError(
                    .alreadyExists,
                    "the journal \(destination.location) already holds another history (\(copied.count) entries); "
                        + "copy into an empty database"
                )
            }
        }
        while copied.count < source.count {
            let page = try chainBackend.entries(after: copied.count, limit: Self.verificationPageSize)
            guard let last = page.last else { break }
            try await destination.appendVerbatim(page, after: copied)
            copied = last.head
        }
        let verified = try await destination.verify(expecting: source)
        guard verified == source else {
            throw CertificateProviderError(
                .storeCorrupted,
                "the copy in \(destination.location) ends at \(verified), not at the source's head \(source)"
            )
        }
        return verified
    }

    /// Appends `entries` as they are, in one transaction, when this journal's head is `expected`.
    func appendVerbatim(_ entries: [JournalEntry], after expected: JournalHead) throws {
        try chainBackend.appendEntries { head, _ in
            guard head == expected else {
                throw CertificateProviderError(
                    .alreadyExists,
                    "the journal \(location) changed while it was copied into (head \(head), expected \(expected))"
                )
            }
            return entries
        }
    }
}
