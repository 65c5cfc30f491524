public import CertificateProviders
public import Foundation

/// Turns any registered provider into standard signatures, keeps a journal of them, lists and
/// removes them (locally and on servers that keep a history) and verifies signatures.
///
/// Providers are looked up by ID in the `ProviderRegistry` given at creation and kept for the
/// coordinator's lifetime, as is each provider's identity once resolved (stored identity first,
/// else `initialize(options:)`), so batch signing asks the provider once. Providers that build
/// signatures on their server (`DocumentSigning`) receive the document (or, for detached
/// signatures of files, its digest); all others sign through their `SigningKey` with ``CMSSigner``.
public actor SigningCoordinator {
    private let registry: ProviderRegistry
    /// The journal every signature is recorded in.
    public nonisolated let journal: SignatureJournal
    private var providers: [ProviderID: any CertificateProvider] = [:]
    private var identities: [ProviderID: ResolvedIdentity] = [:]

    /// An identity with what batch signing needs from it, computed once.
    private struct ResolvedIdentity {
        let identity: SigningIdentity
        let fingerprint: String
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
    /// `storedCertificate()` returning nil, or throwing `.unsupportedOperation` or
    /// `.passwordRequired`, leads to `initialize(options: parameters)`; other errors are thrown.
    public func identity(
        for id: ProviderID,
        parameters: ProviderParameters = ProviderParameters()
    ) async throws -> SigningIdentity {
        try await resolve(id, parameters: parameters).identity
    }

    private func resolve(_ id: ProviderID, parameters: ProviderParameters) async throws -> ResolvedIdentity {
        if let cached = identities[id] { return cached }
        let provider = try provider(id)
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
        let entry = ResolvedIdentity(identity: resolved, fingerprint: resolved.certificate.sha256FingerprintHex)
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
    ///   - parameters: passed to `initialize(options:)` when the provider has no stored identity.
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
            let provider = try provider(id)
            let resolved = try await resolve(id, parameters: parameters)
            let result = try await produce(
                document: document,
                id: id,
                provider: provider,
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
    ///   - parameters: passed to `initialize(options:)` when the provider has no stored identity.
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
            let provider = try provider(id)
            let resolved = try await resolve(id, parameters: parameters)
            if !(provider is any DocumentSigning), options.levelUpgrade == nil,
                CMSSigner.localKey(of: resolved.identity) != nil
            {
                let outcomes = try await signGroups(
                    documents,
                    outputs: try documents.map { try Self.output(for: $0, in: outputDirectory) },
                    provider: id,
                    parameters: parameters,
                    options: options,
                    progress: progress,
                    stoppingAtFirstFailure: true
                )
                return try outcomes.map { try $0.get() }
            }
            func output(for document: Document) throws -> URL? { try Self.output(for: document, in: outputDirectory) }
            if !(provider is any DocumentSigning), CMSSigner.localKey(of: resolved.identity) == nil,
                let key = resolved.identity.key as? any BatchSigningKey
            {
                // One key operation per chunk (a remote service authorizes once for N signatures).
                let chunkSize = max(1, key.maximumBatchSize)
                for start in stride(from: 0, to: documents.count, by: chunkSize) {
                    let chunk = Array(documents[start..<min(start + chunkSize, documents.count)])
                    let outputs = try chunk.map(output(for:))
                    for result in try await produceBatch(
                        chunk,
                        outputs: outputs,
                        id: id,
                        resolved: resolved,
                        key: key,
                        options: options
                    ) {
                        results.append(result)
                        progress?(Int64(results.count), Int64(documents.count))
                    }
                }
            } else {
                for document in documents {
                    results.append(
                        try await produce(
                            document: document,
                            id: id,
                            provider: provider,
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
    /// loses no commit, a power loss may lose the last commits (see ``SignatureJournal``).
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
    ///   - parameters: passed to `initialize(options:)` when the provider has no stored identity.
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

    /// The groups of ``signEach(_:outputs:provider:parameters:options:progress:)``; with
    /// `stoppingAtFirstFailure` (the form of ``sign(documents:provider:parameters:options:outputDirectory:progress:)``)
    /// the first failed document ends the batch: what was signed before it is recorded, the files
    /// made after it are removed, and its error is thrown.
    private func signGroups(
        _ documents: [Document],
        outputs: [URL?],
        provider id: ProviderID,
        parameters: ProviderParameters,
        options: SigningOptions,
        progress: SigningProgress?,
        stoppingAtFirstFailure: Bool
    ) async throws -> [Result<SigningResult, CertificateProviderError>] {
        guard outputs.count == documents.count else {
            throw CertificateProviderError.invalidParameter(
                "\(documents.count) documents but \(outputs.count) outputs: give one output (or nil) per document"
            )
        }
        let provider = try provider(id)
        let resolved = try await resolve(id, parameters: parameters)
        var options = options
        if options.signingTime == nil { options.signingTime = Date() }
        var signer: BatchSigningPipeline.Signer?
        // A level upgrade (a TSA, validation data) is asked for per signature on the one-by-one path.
        if !(provider is any DocumentSigning), options.levelUpgrade == nil,
            let key = CMSSigner.localKey(of: resolved.identity)
        {
            let algorithm = try CMSSigner.resolve(options.digestAlgorithm, for: resolved.identity)
            signer = BatchSigningPipeline.Signer(
                providerID: id,
                identity: resolved.identity,
                key: key,
                fingerprint: resolved.fingerprint,
                options: options,
                digestAlgorithm: algorithm,
                signingTime: options.signingTime ?? Date(),
                signingCertificateAttribute: options.format == .cadesBES
                    ? try signingCertificateAttribute(for: id, algorithm: algorithm) : nil
            )
        }
        Self.removeStaleTemporaries(for: outputs)
        var outcomes: [Result<SigningResult, CertificateProviderError>] = []
        outcomes.reserveCapacity(documents.count)
        let starts = Array(stride(from: 0, to: documents.count, by: Self.batchGroupSize))
        // With a local key the next group signs (on every core) while this one is committed
        // (syncfs, renames, directory sync, journal): at most one group in flight, taken in order.
        try await withThrowingTaskGroup(of: BatchSigningPipeline.Group.self) { inFlight in
            var pending = false
            /// Starts signing the documents of `range` (local key only).
            func startSigning(_ range: Range<Int>, _ signer: BatchSigningPipeline.Signer) {
                inFlight.addTask {
                    await BatchSigningPipeline.run(
                        documents,
                        outputs: outputs,
                        range: range,
                        signer: signer,
                        deferringSync: BatchSigningPipeline.syncPlan(outputs, range: range)
                    )
                }
            }
            for (number, start) in starts.enumerated() {
                let range = start..<min(start + Self.batchGroupSize, documents.count)
                var group: [Result<SigningResult, CertificateProviderError>]
                // Per document, the temporary file still to be synced (with its file system) and renamed.
                var temporaries = [String?](repeating: nil, count: range.count)
                if let signer {
                    if !pending { startSigning(range, signer) }
                    guard let made = try await inFlight.next() else { break }
                    pending = false
                    group = made.results
                    temporaries = made.temporaries
                } else {
                    group = []
                    for index in range {
                        do {
                            group.append(
                                .success(
                                    try await produce(
                                        document: documents[index],
                                        id: id,
                                        provider: provider,
                                        resolved: resolved,
                                        options: options,
                                        output: outputs[index],
                                        progress: nil
                                    )
                                )
                            )
                        } catch let error as CertificateProviderError {
                            group.append(.failure(error))
                        } catch is CancellationError {
                            group.append(
                                .failure(
                                    CertificateProviderError(
                                        .cancelled,
                                        "signing '\(documents[index].name)' was cancelled"
                                    )
                                )
                            )
                        }
                    }
                }
                var firstFailure: CertificateProviderError?
                if stoppingAtFirstFailure, let failed = group.firstIndex(where: { (try? $0.get()) == nil }) {
                    // The all-or-before form: nothing after the failed document is kept.
                    for index in (failed + 1)..<group.count {
                        if case .success(let later) = group[index] {
                            BatchSigningPipeline.discard(later, temporary: temporaries[index])
                        }
                    }
                    if case .failure(let error) = group[failed] { firstFailure = error }
                    group.removeSubrange(failed...)
                    temporaries.removeSubrange(failed...)
                }
                if let signer, firstFailure == nil, !Task.isCancelled, number + 1 < starts.count {
                    startSigning(
                        starts[number + 1]..<min(starts[number + 1] + Self.batchGroupSize, documents.count),
                        signer
                    )
                    pending = true
                }
                do {
                    try await commit(&group, temporaries: temporaries)
                    for outcome in group {
                        outcomes.append(outcome)
                        progress?(Int64(outcomes.count), Int64(documents.count))
                    }
                    if let firstFailure { throw firstFailure }
                    if stoppingAtFirstFailure, let failed = group.first(where: { (try? $0.get()) == nil }),
                        case .failure(let error) = failed
                    {
                        throw error
                    }
                    if Task.isCancelled && stoppingAtFirstFailure {
                        let signed = outcomes.filter { (try? $0.get()) != nil }.count
                        throw CertificateProviderError(
                            .cancelled,
                            "batch signing was cancelled after \(signed) documents"
                        )
                    }
                } catch {
                    // The batch ends here: what the next group made is never acknowledged.
                    if pending, let made = try? await inFlight.next() {
                        for (index, outcome) in made.results.enumerated() {
                            if case .success(let result) = outcome {
                                BatchSigningPipeline.discard(result, temporary: made.temporaries[index])
                            }
                        }
                    }
                    throw error
                }
                if Task.isCancelled {
                    // Stopped after the group in flight: what the next group made is never
                    // acknowledged, and every document after this group is not signed.
                    if pending, let made = try? await inFlight.next() {
                        for (index, outcome) in made.results.enumerated() {
                            if case .success(let result) = outcome {
                                BatchSigningPipeline.discard(result, temporary: made.temporaries[index])
                            }
                        }
                    }
                    outcomes += documents[outcomes.count...].map {
                        .failure(CertificateProviderError(.cancelled, "signing '\($0.name)' was cancelled"))
                    }
                    break
                }
            }
        }
        return outcomes
    }

    /// Makes a group durable and acknowledged: flushes the file systems of its deferred files with
    /// one `syncfs` each and renames those files into place (``BatchSigningPipeline/makeDurable(_:temporaries:)``),
    /// syncs each output directory of its signatures once, then appends its records in one
    /// transaction. A file system or directory that cannot be synced fails the signatures in it
    /// (their files are removed).
    private func commit(
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
    private func record(_ results: [SigningResult]) async throws {
        do {
            try await journal.append(contentsOf: results.map(\.record))
        } catch {
            for result in results {
                if let output = result.outputURL { try? FileManager.default.removeItem(at: output) }
            }
            throw error
        }
    }

    /// A document's digest, size and, when needed, its content.
    private struct DigestedDocument {
        var digest: [UInt8]
        var size: Int64
        var content: [UInt8]?
    }

    /// Signs a chunk of documents with one batch operation of the key; writes every output file
    /// only once all signatures are made; does not touch the journal.
    private func produceBatch(
        _ documents: [Document],
        outputs: [URL?],
        id: ProviderID,
        resolved: ResolvedIdentity,
        key: any BatchSigningKey,
        options: SigningOptions
    ) async throws -> [SigningResult] {
        let signingTime = options.signingTime ?? Date()
        let algorithm = try CMSSigner.resolve(options.digestAlgorithm, for: resolved.identity)
        var digested: [DigestedDocument] = []
        for document in documents {
            digested.append(try await digest(of: document, algorithm: algorithm, options: options, progress: nil))
        }
        try Task.checkCancellation()
        let signatures = try await CMSSigner.signBatch(
            digested.map { ($0.digest, options.isDetached ? nil : $0.content) },
            identity: resolved.identity,
            key: key,
            format: options.format,
            digestAlgorithm: algorithm,
            signingTime: signingTime
        )
        try Task.checkCancellation()
        var results: [SigningResult] = []
        do {
            for index in documents.indices {
                let upgraded = try await options.upgrade(signatures[index], of: documents[index].name)
                results.append(
                    try finish(
                        signature: upgraded?.signature ?? signatures[index],
                        upgraded: upgraded,
                        signer: resolved.identity.certificate,
                        fingerprint: resolved.fingerprint,
                        document: documents[index],
                        digested: digested[index],
                        algorithm: algorithm,
                        id: id,
                        options: options,
                        signingTime: signingTime,
                        output: outputs[index]
                    )
                )
            }
        } catch {
            for result in results {
                if let output = result.outputURL { try? FileManager.default.removeItem(at: output) }
            }
            throw error
        }
        return results
    }

    private func digest(
        of document: Document,
        algorithm: DigestAlgorithm,
        options: SigningOptions,
        progress: SigningProgress?
    ) async throws -> DigestedDocument {
        let digest: [UInt8]
        let size: Int64
        var content: [UInt8]?
        switch document.source {
        case .bytes(let bytes):
            digest = algorithm.hash(bytes)
            size = Int64(bytes.count)
            content = bytes
            progress?(size, size)
        case .file(let url):
            if options.isDetached {
                let result = try await FileDigest.compute(
                    url: url,
                    algorithm: algorithm,
                    chunkSize: options.chunkSize,
                    progress: progress
                )
                digest = result.digest
                size = result.size
            } else {
                let bytes = try await FileDigest.read(
                    url: url,
                    limit: CMSSigner.attachedFileSizeLimit,
                    chunkSize: options.chunkSize,
                    progress: progress
                )
                digest = algorithm.hash(bytes)
                size = Int64(bytes.count)
                content = bytes
            }
        }
        return DigestedDocument(digest: digest, size: size, content: content)
    }

    /// Makes one signature and writes its output file; does not touch the journal.
    private func produce(
        document: Document,
        id: ProviderID,
        provider: any CertificateProvider,
        resolved: ResolvedIdentity,
        options: SigningOptions,
        output: URL?,
        progress: SigningProgress?
    ) async throws -> SigningResult {
        let identity = resolved.identity
        let signingTime = options.signingTime ?? Date()
        let algorithm = try CMSSigner.resolve(options.digestAlgorithm, for: identity)
        let digested = try await digest(of: document, algorithm: algorithm, options: options, progress: progress)
        let digest = digested.digest
        let content = digested.content
        try Task.checkCancellation()

        let signature: [UInt8]
        let signer: Certificate
        let fingerprint: String
        if let server = provider as? any DocumentSigning {
            let payload: DocumentSigningRequest.Payload = content.map { .content($0) } ?? .digest(digest, algorithm)
            var request = DocumentSigningRequest(
                payload: payload,
                format: options.format,
                isDetached: options.isDetached,
                digestAlgorithm: algorithm
            )
            if content == nil, case .file(let url) = document.source { request.contentFile = url }
            signature = try await server.signDocument(request)
            try checkServerSignature(
                signature,
                request: request,
                expectedSigner: identity.certificate,
                document: document,
                content: content,
                provider: id
            )
            signer = identity.certificate
            fingerprint = resolved.fingerprint
        } else {
            let attached = options.isDetached ? nil : content
            if let local = CMSSigner.localKey(of: identity) {
                // Local keys sign synchronously on this actor (no executor hop per signature), through
                // the identity's cached prepared SignedData.
                signature = try CMSSigner.signLocallyWithTemplate(
                    digest: digest,
                    attachedContent: attached,
                    identity: identity,
                    key: local,
                    format: options.format,
                    digestAlgorithm: algorithm,
                    signingTime: signingTime
                )
            } else {
                signature = try await CMSSigner.sign(
                    digest: digest,
                    attachedContent: attached,
                    identity: identity,
                    format: options.format,
                    digestAlgorithm: algorithm,
                    signingTime: signingTime
                )
            }
            signer = identity.certificate
            fingerprint = resolved.fingerprint
        }
        try Task.checkCancellation()
        let upgraded = try await options.upgrade(signature, of: document.name)
        return try finish(
            signature: upgraded?.signature ?? signature,
            upgraded: upgraded,
            signer: signer,
            fingerprint: fingerprint,
            document: document,
            digested: digested,
            algorithm: algorithm,
            id: id,
            options: options,
            signingTime: signingTime,
            output: output
        )
    }

    /// Writes a made signature to its output file (when given) and builds its result.
    private func finish(
        signature: [UInt8],
        upgraded: UpgradedSignature? = nil,
        signer: Certificate,
        fingerprint: String,
        document: Document,
        digested: DigestedDocument,
        algorithm: DigestAlgorithm,
        id: ProviderID,
        options: SigningOptions,
        signingTime: Date,
        output: URL?
    ) throws -> SigningResult {
        let storage: SignatureRecord.Storage
        if let output {
            // Signatures are public artifacts: 0644 (less the umask), written atomically.
            try FileSystem.writeAtomically(output.path, signature, mode: 0o644)
            storage = .file(output)
        } else {
            storage = .inline(signature)
        }
        let record = SignatureRecord(
            createdAt: signingTime,
            providerID: id,
            signerSubject: signer.subject,
            signerFingerprint: fingerprint,
            documentName: document.name,
            documentSize: digested.size,
            documentDigest: digested.digest,
            digestAlgorithm: algorithm,
            format: options.levelUpgrade?.format ?? options.format,
            isDetached: options.isDetached,
            storage: storage
        )
        var result = SigningResult(record: record, signature: signature, outputURL: output, signerCertificate: signer)
        result.addedTimestamps = upgraded?.addedTimestamps ?? []
        return result
    }

    /// The cached ESS signing-certificate-v2 of a provider's identity.
    private func signingCertificateAttribute(for id: ProviderID, algorithm: DigestAlgorithm) throws -> [UInt8]? {
        guard let resolved = identities[id] else { return nil }
        if let cached = resolved.signingCertificateAttributes[algorithm] { return cached }
        let attribute = try SignedDataBuilder.signingCertificateV2(
            for: resolved.identity.certificate,
            digestAlgorithm: algorithm
        )
        identities[id]?.signingCertificateAttributes[algorithm] = attribute
        return attribute
    }

    /// Checks a server-made signature before anything is written or recorded: it verifies over the
    /// document (without trust anchors: the server's chain is the caller's business), it has one
    /// signer and that signer is the provider's selected certificate, and its format, digest and
    /// detached-ness are the ones asked for.
    /// - Throws: `.serverRejected` when it does not verify; `.serverSignatureMismatch` when it is
    ///   not what was asked for.
    private func checkServerSignature(
        _ signature: [UInt8],
        request: DocumentSigningRequest,
        expectedSigner: Certificate,
        document: Document,
        content: [UInt8]?,
        provider: ProviderID
    ) throws {
        // The selected certificate's fitness and key size are the caller's choice, as for local
        // keys; what is judged here is whether the server did what it was asked.
        let policy = ValidationPolicy(algorithms: .permissive, requiresSigningKeyUsage: false)
        let result: VerificationResult
        if let content {
            result = CMSVerifier.verify(signature: signature, content: content, trustAnchors: [], policy: policy)
        } else if case .file(let url) = document.source {
            result = try CMSVerifier.verify(signature: signature, contentFileAt: url, trustAnchors: [], policy: policy)
        } else {
            result = CMSVerifier.verify(signature: signature, content: nil, trustAnchors: [], policy: policy)
        }
        try VerificationResult.checkServerSignature(
            result,
            expectedSigner: expectedSigner,
            request: request,
            returned: "provider '\(provider)' returned a signature",
            document: "'\(document.name)'",
            consequence: "nothing was written or recorded"
        )
    }

    // MARK: Verification

    /// Verifies a CMS / CAdES signature, every signer of it, under a policy.
    ///
    /// - Parameters:
    ///   - signature: DER, BER or PEM.
    ///   - content: the signed document (required for detached signatures; files are streamed; for
    ///     an attached signature it must equal the embedded content).
    ///   - trust: trust anchors; empty checks only the signature, and the result says so.
    ///   - policy: validation time, algorithms, key usage, revocation (default strict, offline).
    /// - Throws: `.fileSystem` when a content file cannot be read.
    public func verify(
        signature: [UInt8],
        content: Document?,
        trust: [Certificate],
        policy: ValidationPolicy = ValidationPolicy()
    ) throws -> VerificationResult {
        switch content?.source {
        case .none: return CMSVerifier.verify(signature: signature, content: nil, trustAnchors: trust, policy: policy)
        case .bytes(let bytes)?:
            return CMSVerifier.verify(signature: signature, content: bytes, trustAnchors: trust, policy: policy)
        case .file(let url)?:
            return try CMSVerifier.verify(signature: signature, contentFileAt: url, trustAnchors: trust, policy: policy)
        }
    }

    // MARK: Listing and removal

    /// The journal's records merged with the server history of every registered provider that
    /// keeps one (`SignatureHistoryProviding`), newest first.
    ///
    /// A provider whose history cannot be read is listed in ``SignatureList/unavailable``; the
    /// others still appear.
    /// - Throws: journal errors.
    public func signatures() async throws -> SignatureList {
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
        for id in registry.registeredIDs {
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
