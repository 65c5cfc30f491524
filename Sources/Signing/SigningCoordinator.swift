public import CertificateProviders
internal import Durability
public import Foundation
public import SignatureJournal

/// Turns any registered provider into standard signatures, keeps a journal of them, lists and
/// removes them (locally and on servers that keep a history) and verifies signatures.
///
/// Providers are looked up by ID in the `ProviderRegistry` given at creation and kept for the
/// coordinator's lifetime, as is each provider's identity once resolved (stored identity first,
/// else `initialize(options:)`), so batch signing asks the provider once. Providers that build
/// signatures on their server (`DocumentSigning`) receive the document (or, for detached
/// signatures of files, its digest); all others sign through their `SigningKey` with ``CMSSigner``.
public actor SigningCoordinator {
    let registry: ProviderRegistry
    /// The journal every signature is recorded in.
    public nonisolated let journal: SignatureJournal
    private var providers: [ProviderID: any CertificateProvider] = [:]
    var identities: [ProviderID: ResolvedIdentity] = [:]

    /// An identity with what batch signing needs from it, computed once.
    struct ResolvedIdentity {
        let identity: SigningIdentity
        let fingerprint: String
        /// How its signatures are made.
        let strategy: SigningStrategy
        /// DER ESS signing-certificate-v2 values by digest, made on first use.
        var signingCertificateAttributes: [DigestAlgorithm: [UInt8]] = [:]
    }

    /// Creates a coordinator.
    /// - Parameters:
    ///   - registry: the providers it may use.
    ///   - journal: where signatures are recorded.
    public init(registry: ProviderRegistry, journal: SignatureJournal) {
        self.registry = registry
        self.journal = journal
    }

    // MARK: Identities

    /// The provider registered under `id` (one instance per coordinator).
    /// - Throws: `.providerNotFound`; whatever the factory throws.
    public func provider(_ id: ProviderID) throws -> any CertificateProvider {
        if let provider = providers[id] { return provider }
        let provider = try registry.makeProvider(id)
        providers[id] = provider
        return provider
    }

    /// The signing identity of a provider: cached, else its stored identity, else `initialize`.
    ///
    /// Non-empty `parameters` are first set on the provider over its current ones (SAP's
    /// `setParameters` before `getStoredCertificate`), so an identity stored under an `alias` and
    /// unlocked by a `storePassword` is found with the parameters that name it; a provider whose
    /// `setParameters(_:)` is `.unsupportedOperation` gets them only through `initialize`.
    /// `storedCertificate()` returning nil, or throwing `.unsupportedOperation` or
    /// `.passwordRequired`, leads to `initialize(options: parameters)`; other errors are thrown.
    public func identity(
        for id: ProviderID,
        parameters: ProviderParameters = ProviderParameters()
    ) async throws -> SigningIdentity {
        try await resolve(id, parameters: parameters).identity
    }

    func resolve(_ id: ProviderID, parameters: ProviderParameters) async throws -> ResolvedIdentity {
        if let cached = identities[id] { return cached }
        let provider = try provider(id)
        if !parameters.isEmpty {
            do {
                try provider.setParameters(provider.parameters.merging(parameters))
            } catch let error as CertificateProviderError where error.code == .unsupportedOperation {}
        }
        var identity: SigningIdentity?
        do {
            identity = try provider.storedCertificate()
        } catch let error as CertificateProviderError
            where error.code == .unsupportedOperation || error.code == .passwordRequired
        {
            identity = nil
        }
        let resolved: SigningIdentity
        if let identity {
            resolved = identity
        } else {
            resolved = try await provider.initialize(options: parameters)
        }
        let entry = ResolvedIdentity(
            identity: resolved,
            fingerprint: resolved.certificate.sha256FingerprintHex,
            strategy: SigningStrategy(provider: provider, identity: resolved)
        )
        identities[id] = entry
        return entry
    }

    /// Forgets cached identities (all, or one provider's), e.g. after the user switched certificates.
    public func forgetIdentity(of id: ProviderID? = nil) {
        if let id { identities[id] = nil } else { identities.removeAll() }
    }

    // MARK: Signing

    /// Signs a document and records it in the journal.
    ///
    /// - Parameters:
    ///   - document: bytes or a file; a file is streamed for detached signatures.
    ///   - id: the provider ID.
    ///   - parameters: set on the provider before its stored identity is looked up, and passed to
    ///     `initialize(options:)` when it has none (see ``identity(for:parameters:)``).
    ///   - options: format, detached, digest, signing time.
    ///   - output: where to write the `.p7s` (atomically); nil keeps the signature in the journal.
    ///   - progress: called per chunk with bytes done and total.
    /// - Returns: the record, the signature and the signer certificate.
    /// - Throws: `.cancelled` (nothing written, nothing recorded); `.providerNotFound`; the
    ///   provider's and key's errors; the error of `options.levelUpgrade` (nothing written, nothing
    ///   recorded); `.fileSystem`; journal errors (the output file is then removed again, so no
    ///   signature exists without its record).
    public func sign(
        document: Document,
        provider id: ProviderID,
        parameters: ProviderParameters = ProviderParameters(),
        options: SigningOptions = SigningOptions(),
        output: URL? = nil,
        progress: SigningProgress? = nil
    ) async throws -> SigningResult {
        do {
            let resolved = try await resolve(id, parameters: parameters)
            let result = try await produce(
                document: document,
                id: id,
                resolved: resolved,
                options: options,
                output: output,
                progress: progress
            )
            try await record([result])
            return result
        } catch is CancellationError {
            throw CertificateProviderError(.cancelled, "signing '\(document.name)' was cancelled")
        }
    }

    /// Signs many documents with one identity and records them in one journal transaction: the
    /// batch form of ``sign(document:provider:parameters:options:output:progress:)``.
    ///
    /// The provider and its identity are resolved once. When a document fails, the signatures
    /// made before it are still recorded, then the error is thrown. With a local key the documents
    /// go through the pipeline of ``signEach(_:outputs:provider:parameters:options:progress:)``
    /// (every core, one directory sync and one journal commit per group); `progress` is then called
    /// for each document once its group is committed.
    ///
    /// When the identity's key is a `BatchSigningKey` (a remote service that authorizes each use,
    /// such as a CSC credential), the documents are signed in chunks of its `maximumBatchSize`, each
    /// chunk with one key operation (one authorization for N signatures); a chunk fails or succeeds
    /// as a whole, and no output file of a failed chunk is written.
    ///
    /// - Parameters:
    ///   - documents: the documents, signed in order.
    ///   - id: the provider ID.
    ///   - parameters: set on the provider before its stored identity is looked up, and passed to
    ///     `initialize(options:)` when it has none (see ``identity(for:parameters:)``).
    ///   - options: format, detached, digest, signing time (shared by all).
    ///   - outputDirectory: when given, each signature is written atomically to
    ///     `<directory>/<document name>.p7s`; otherwise signatures are kept in the journal.
    ///   - progress: called after each document with documents done and the total.
    /// - Returns: one result per document, in order.
    /// - Throws: `.invalidParameter` for a document name that is not a file name (with an output
    ///   directory); as ``sign(document:provider:parameters:options:output:progress:)``.
    public func sign(
        documents: [Document],
        provider id: ProviderID,
        parameters: ProviderParameters = ProviderParameters(),
        options: SigningOptions = SigningOptions(),
        outputDirectory: URL? = nil,
        progress: SigningProgress? = nil
    ) async throws -> [SigningResult] {
        var results: [SigningResult] = []
        results.reserveCapacity(documents.count)
        do {
            let resolved = try await resolve(id, parameters: parameters)
            func output(for document: Document) throws -> URL? { try Self.output(for: document, in: outputDirectory) }
            switch resolved.strategy {
            case .localKey where options.levelUpgrade == nil:
                let outcomes = try await signGroups(
                    documents,
                    outputs: try documents.map(output(for:)),
                    provider: id,
                    parameters: parameters,
                    options: options,
                    progress: progress,
                    stoppingAtFirstFailure: true
                )
                return try outcomes.map { try $0.get() }
            case .batchKey(let key):
                // One key operation per chunk (a remote service authorizes once for N signatures).
                let chunkSize = max(1, key.maximumBatchSize)
                for start in stride(from: 0, to: documents.count, by: chunkSize) {
                    let chunk = Array(documents[start..<min(start + chunkSize, documents.count)])
                    for result in try await produceBatch(
                        chunk,
                        outputs: try chunk.map(output(for:)),
                        id: id,
                        resolved: resolved,
                        key: key,
                        options: options
                    ) {
                        results.append(result)
                        progress?(Int64(results.count), Int64(documents.count))
                    }
                }
            case .localKey, .externalKey, .serverDocument:
                for document in documents {
                    results.append(
                        try await produce(
                            document: document,
                            id: id,
                            resolved: resolved,
                            options: options,
                            output: try output(for: document),
                            progress: nil
                        )
                    )
                    progress?(Int64(results.count), Int64(documents.count))
                }
            }
        } catch {
            if !results.isEmpty { try await record(results) }
            if error is CancellationError {
                throw CertificateProviderError(
                    .cancelled,
                    "batch signing was cancelled after \(results.count) documents"
                )
            }
            throw error
        }
        try await record(results)
        return results
    }

    /// `<directory>/<document name>.p7s`, or nil without a directory.
    /// - Throws: `.invalidParameter` for a document name that is not a file name.
    private static func output(for document: Document, in outputDirectory: URL?) throws -> URL? {
        guard let outputDirectory else { return nil }
        guard !document.name.isEmpty, !document.name.contains("/"), document.name != ".", document.name != ".."
        else {
            throw CertificateProviderError.invalidParameter(
                "the document name '\(document.name)' cannot be used as a file name"
            )
        }
        return outputDirectory.appendingPathComponent(document.name + ".p7s")
    }

    /// The largest number of documents whose records ``signEach(_:outputs:provider:parameters:options:progress:)``
    /// commits in one journal transaction (and whose output directories it syncs at once).
    public static let batchGroupSize = 500

    /// Signs many documents with one identity, each to its own output, as fast as the machine
    /// allows, and records them in the journal: the batch form for back offices and the CLI.
    ///
    /// Unlike ``sign(documents:provider:parameters:options:outputDirectory:progress:)``, a document
    /// that fails (cannot be read, its output cannot be written) fails alone: its result is the
    /// error and the others are still signed.
    ///
    /// With a local key (OpenSSL holds it) the documents go through a pipeline on every core:
    /// read → hash → sign → write each `.p7s` to a hidden temporary file. Durability is per group of
    /// at most ``batchGroupSize`` documents: after the group, one `syncfs(2)` per file system it wrote
    /// to makes the bytes durable, every temporary file is renamed into place, each output directory
    /// is synced once, then the group's records are committed in one journal transaction. (A group
    /// with fewer than 8 files on a file system `fsync`s and renames each of them at once instead:
    /// `syncfs` also flushes other programs' unwritten data on that file system.) A final name thus
    /// only ever appears for bytes that are on the device, also across a power loss. When a file
    /// system cannot be synced, the group's documents on it fail with a `.fileSystem` error naming
    /// the directory and their temporary files are removed. While a group is committed, the next one
    /// is already signing; it is acknowledged only after, in order, and when the batch ends early
    /// (an error, cancellation) its files are removed unacknowledged.
    ///
    /// **Acknowledged** means: the record is committed in the journal (the result is returned, or
    /// the group was committed before a crash). After a crash, every record the journal has names a
    /// complete `.p7s` that verifies; no `.p7s` is ever torn (a crash leaves the old file, the new
    /// one, or a hidden `.NAME.tmp-…` file). Files of the group being written when the process died
    /// may exist without a record (complete, verifiable, just not acknowledged); sign them again.
    /// Signing them again also removes the hidden temporary files the killed batch left for them:
    /// before it writes, a batch removes every `.NAME.tmp-…` file for its own outputs, whatever its
    /// age (two writers of one output at once are a conflict anyway: the later rename would win).
    /// As for single signatures, the journal runs WAL with `synchronous=NORMAL`: a killed process
    /// loses no commit, a power loss may lose the last commits (see `SignatureJournal`).
    ///
    /// Keys that are not local (remote, PKCS#11, `DocumentSigning` servers) sign one document after
    /// the other through ``sign(document:provider:parameters:options:output:progress:)``'s path,
    /// with the same per-group commit.
    ///
    /// - Parameters:
    ///   - documents: the documents.
    ///   - outputs: one entry per document: the `.p7s` to write (replaced atomically), or nil to
    ///     keep the signature in the journal. Two documents must not share an output.
    ///   - id: the provider ID.
    ///   - parameters: set on the provider before its stored identity is looked up, and passed to
    ///     `initialize(options:)` when it has none (see ``identity(for:parameters:)``).
    ///   - options: format, detached, digest, signing time (shared by all; one signing time for a
    ///     batch when nil).
    ///   - progress: called for each document, in order, once its group is committed, with documents
    ///     done and the total.
    /// - Returns: one result per document, in order: the signature or why it failed.
    ///   Cancelled (the task), the batch stops after the group in flight, which is committed whole
    ///   (its documents not yet signed fail with `.cancelled`); every later document fails with
    ///   `.cancelled`, and no file of a later group is left.
    /// - Throws: `.invalidParameter` when `outputs` and `documents` differ in length;
    ///   `.providerNotFound`; the provider's errors when it has no identity; journal errors (the
    ///   group's output files are then removed again).
    public func signEach(
        _ documents: [Document],
        outputs: [URL?],
        provider id: ProviderID,
        parameters: ProviderParameters = ProviderParameters(),
        options: SigningOptions = SigningOptions(),
        progress: SigningProgress? = nil
    ) async throws -> [Result<SigningResult, CertificateProviderError>] {
        try await signGroups(
            documents,
            outputs: outputs,
            provider: id,
            parameters: parameters,
            options: options,
            progress: progress,
            stoppingAtFirstFailure: false
        )
    }

    /// Before a batch writes: removes, per output directory, the hidden temporary files an earlier
    /// killed or interrupted batch left for this batch's outputs, whatever their age.
    package static func removeStaleTemporaries(for outputs: [URL?]) {
        var names: [String: Set<String>] = [:]
        for case let output? in outputs {
            names[output.deletingLastPathComponent().path, default: []].insert(output.lastPathComponent)
        }
        for (directory, names) in names {
            _ = FileSystem.removeStaleTemporaries(in: directory, for: names, olderThan: 0)
        }
    }
}
