import CertificateProviders
internal import Durability
import Foundation
import SignatureJournal

/// The journal and history part of ``SigningCoordinator``: committing made signatures (durably,
/// once per group), listing the journal with the providers' server histories, and removal.
extension SigningCoordinator {
    // MARK: Recording

    /// Makes a group durable and acknowledged: flushes the file systems of its deferred files with
    /// one `syncfs` each and renames those files into place (``BatchSigningPipeline/makeDurable(_:temporaries:)``),
    /// syncs each output directory of its signatures once, then appends its records in one
    /// transaction. A file system or directory that cannot be synced fails the signatures in it
    /// (their files are removed).
    func commit(
        _ group: inout [Result<SigningResult, CertificateProviderError>],
        temporaries: [String?]
    ) async throws {
        if temporaries.contains(where: { $0 != nil }) {
            BatchSigningPipeline.makeDurable(&group, temporaries: temporaries)
        }
        // (A `[String: CertificateProviderError?]` filled with `= .none` stayed empty: assigning nil
        // through the subscript removes the key, so no directory was ever synced.)
        var directories = Set<String>()
        for case .success(let result) in group {
            if let output = result.outputURL { directories.insert(output.deletingLastPathComponent().path) }
        }
        var failures: [String: CertificateProviderError] = [:]
        for directory in directories {
            do { try FileSystem.syncDirectory(directory) } catch let error as CertificateProviderError {
                failures[directory] = error
            } catch {
                failures[directory] = CertificateProviderError(.fileSystem, "syncing '\(directory)': \(error)")
            }
        }
        for index in group.indices where !failures.isEmpty {
            guard case .success(let result) = group[index], let output = result.outputURL,
                let error = failures[output.deletingLastPathComponent().path]
            else { continue }
            try? FileManager.default.removeItem(at: output)
            group[index] = .failure(error)
        }
        let made = group.compactMap { try? $0.get() }
        if !made.isEmpty { try await record(made) }
    }

    /// Appends the results' records in one transaction; on failure removes their output files, so
    /// no signature file exists without its record.
    func record(_ results: [SigningResult]) async throws {
        do {
            try await journal.append(contentsOf: results.map(\.record))
        } catch {
            for result in results {
                if let output = result.outputURL { try? FileManager.default.removeItem(at: output) }
            }
            throw error
        }
    }

    // MARK: Listing and removal

    /// The journal's records merged with the server history of every registered provider that
    /// keeps one (`SignatureHistoryProviding`), newest first.
    ///
    /// A provider whose history cannot be read is listed in ``SignatureList/unavailable``; the
    /// others still appear.
    /// - Parameter providers: the providers whose server history is asked for (those with a session,
    ///   say); nil asks every registered one, an empty set none (the journal alone).
    /// - Throws: journal errors.
    public func signatures(historiesOf providers: Set<ProviderID>? = nil) async throws -> SignatureList {
        var entries = try await journal.records().map { record in
            SignatureEntry(
                id: record.id,
                location: .journal,
                providerID: record.providerID,
                createdAt: record.createdAt,
                summary: record.documentName,
                record: record,
                remoteRecord: nil
            )
        }
        var unavailable: [ProviderID: CertificateProviderError] = [:]
        for id in registry.registeredIDs where providers?.contains(id) ?? true {
            let provider: any CertificateProvider
            do { provider = try self.provider(id) } catch let error as CertificateProviderError {
                unavailable[id] = error
                continue
            }
            guard let history = provider as? any SignatureHistoryProviding else { continue }
            do {
                for remote in try await history.signatures() {
                    entries.append(
                        SignatureEntry(
                            id: remote.id,
                            location: .server(id),
                            providerID: id,
                            createdAt: remote.createdAt,
                            summary: remote.summary,
                            record: nil,
                            remoteRecord: remote
                        )
                    )
                }
            } catch let error as CertificateProviderError {
                unavailable[id] = error
            }
        }
        entries.sort { ($0.createdAt ?? .distantPast) > ($1.createdAt ?? .distantPast) }
        return SignatureList(entries: entries, unavailable: unavailable)
    }

    /// Removes a signature where it lives: a journal row (the `.p7s` file, if any, is kept), or a
    /// server record through the provider's `removeSignature(id:)`.
    /// - Throws: `.notStored` when there is no such signature; `.unsupportedOperation` when the
    ///   provider keeps no history; the provider's errors.
    public func removeSignature(id: String, location: SignatureEntry.Location) async throws {
        switch location {
        case .journal:
            guard try await journal.remove(id: id) else {
                throw CertificateProviderError(.notStored, "the journal has no signature with id \(id)")
            }
        case .server(let providerID):
            guard let history = try provider(providerID) as? any SignatureHistoryProviding else {
                throw CertificateProviderError.unsupportedOperation(
                    "provider '\(providerID)' keeps no signature history"
                )
            }
            try await history.removeSignature(id: id)
        }
    }
}
