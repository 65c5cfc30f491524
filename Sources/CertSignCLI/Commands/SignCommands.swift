import BuiltInProviders
import CertificateProviders
internal import Durability
import Foundation
import PDFSigning
import SignatureJournal
import Signing

#if canImport(Glibc)
import Glibc
#endif

/// `certsign sign`, `certsign verify`, `certsign signatures list | remove`.
extension Commands {
    static let signingCommands: [CommandDescriptor] = [sign, verify, signaturesList, signaturesRemove]

    /// Files above this size show a progress bar (when stderr is a terminal).
    static let progressThreshold: Int64 = 16 << 20

    static var signUsage: String { sign.usage }

    static let sign = CommandDescriptor(
        words: ["sign"],
        summary: "sign documents (CAdES-BES detached .p7s by default)",
        discussion: """
            Give exactly one of --identity, --p12 and --provider. Output: DOCUMENT.p7s next to each
            document, or --out FILE (one document) / --out-dir DIR. An existing signature file is replaced
            only with --force (else sign refuses before signing anything; --skip-existing signs only the
            documents without one). A signature never replaces a document being signed, a symbolic link,
            a device, a FIFO or a directory, and two documents never share one signature file. Signing a
            signed PDF adds a countersignature.
            Many documents are signed with one unlock; a failing document is reported, the rest are still
            signed, and the exit code is then 1. A document whose --tsa timestamp fails gets no file and no
            journal row. Every signature is recorded in the journal. Ctrl-C (SIGINT) or SIGTERM stops a
            batch after the group in flight and exits 130 (143); the same command with --skip-existing
            signs the rest.
            """,
        examples: ["certsign sign invoice-1.pdf invoice-2.pdf --identity ivanov --password-env P12_PASSWORD"]
    ) { (options: SignOptions, context) in
        try await runSign(options, context)
    }

    /// What `sign` was asked to do, checked before anything is opened or signed.
    struct SignPlan {
        /// The documents to sign, in order (less those `--skip-existing` skips).
        var documents: [String]
        /// The documents `--skip-existing` skips, with their existing signature file.
        var skipped: [(document: String, output: String)] = []
        /// The existing output files `--force` replaces (absolute paths).
        var replaced: Set<String> = []
        var options: SigningOptions
        var isPAdES: Bool
        var timestampClient: TimestampAuthorityClient?
        /// PAdES B-LT and B-LTA: the DSS revision and document timestamp after signing (one
        /// revocation cache for the run).
        var padesUpgrade: PAdESLevelUpgrade?
        /// Per document, in order (empty for PAdES, whose outputs signPDF works out).
        var outputs: [SignatureOutput]
        /// Every output file of the command line (also of skipped documents), for cleaning up.
        var outputFiles: [URL?] = []
        /// PAdES: whether a signed PDF goes to standard output.
        var writesPDFToStandardOutput = false
        /// With the signature on stdout, messages go to stderr.
        var writesToStandardOutput: Bool { writesPDFToStandardOutput || outputs.contains(.standardOutput) }
    }

    /// Where the key comes from: the provider, what it is registered with and what `initialize` is
    /// given, and what it stores when it provisions (nil when it stores nothing).
    struct SignKeySource {
        var providerID: ProviderID
        var parameters: ProviderParameters
        var registration: ProviderParameters
        var provisioning: ProviderProvisioning?
    }

    /// One `sign` run once its key is open: what every step of the signing loop reads.
    struct SignRun {
        var plan: SignPlan
        var identity: SigningIdentity
        var coordinator: SigningCoordinator
        var source: SignKeySource
        var arguments: SignOptions
        var context: CommandContext
    }

    /// `certsign sign`: validation, the key source, the identity, the signing loop, the output.
    private static func runSign(_ arguments: SignOptions, _ context: CommandContext) async throws -> Int32 {
        let plan = try signPlan(arguments, context)
        if plan.documents.isEmpty {
            // --skip-existing and every signature exists: nothing to unlock.
            return reportSign([], plan, context, verbose: arguments.verbose)
        }
        let source = try signKeySource(arguments, context)
        // From here on SIGINT / SIGTERM stop the work: while the key opens (a login, an unlock) at
        // once, as nothing is written yet; while signing, after the group in flight.
        let interrupt = SignInterrupt.install()
        defer { interrupt.restore() }
        let opening = Task { () -> (SigningCoordinator, SigningIdentity, [String: [String]]) in
            let (coordinator, identity) = try await openSigningIdentity(source, arguments, context)
            return (coordinator, identity, try await journalRows(of: plan.replaced, in: coordinator.journal))
        }
        guard case let (coordinator, identity, replacedRows)? = try await interrupt.value(of: opening),
            interrupt.exitCode == nil
        else {
            context.console.err(interruptedText([], plan, signal: interrupt.signalName, signingBegan: false))
            return interrupt.exitCode ?? CertSign.exitFailure
        }
        let run = SignRun(
            plan: plan,
            identity: identity,
            coordinator: coordinator,
            source: source,
            arguments: arguments,
            context: context
        )
        let work = Task { try await signDocuments(run) }
        interrupt.onSignal { work.cancel() }
        let outcome: (results: [SignResultDocument], code: Int32?)
        do {
            outcome = try await work.value
        } catch let error as CertificateProviderError where interrupt.exitCode != nil && error.code == .cancelled {
            outcome = ([], nil)
        } catch is CancellationError where interrupt.exitCode != nil {
            outcome = ([], nil)
        }
        // The earlier journal rows of the files --force replaced name a signature that is gone.
        let stale = outcome.results.filter { $0.replaced == true }.flatMap { result in
            (replacedRows[result.signature ?? ""] ?? []).filter { $0 != result.id }
        }
        try await coordinator.journal.remove(ids: stale)
        guard let exitCode = interrupt.exitCode else {
            return outcome.code ?? reportSign(outcome.results, plan, context, verbose: arguments.verbose)
        }
        SigningCoordinator.removeStaleTemporaries(for: plan.outputFiles)
        if outcome.code == nil, !outcome.results.isEmpty {
            _ = reportSign(outcome.results, plan, context, verbose: arguments.verbose)
        }
        context.console.err(interruptedText(outcome.results, plan, signal: interrupt.signalName))
        return exitCode
    }

    /// What `sign` says on standard error when SIGINT / SIGTERM stopped it: how many documents were
    /// signed, how many not, and how to sign the rest (always: also when nothing was signed yet).
    static func interruptedText(
        _ results: [SignResultDocument],
        _ plan: SignPlan,
        signal: String,
        signingBegan: Bool = true
    ) -> String {
        let total = plan.documents.count
        let signed = results.filter { $0.status == "signed" }.count
        if !signingBegan || (!results.isEmpty && signed == 0) {
            return "certsign: interrupted (\(signal)): 0 of \(total) documents signed; nothing written"
        }
        let counts =
            results.isEmpty
            ? "the documents whose signature file exists are signed and recorded, the others are not"
            : "\(signed) of \(total) documents signed, \(total - signed) not signed"
        return "certsign: interrupted (\(signal)): \(counts); no temporary file is left. To sign the rest, run the "
            + "same command with --skip-existing (it skips every document whose signature file exists)"
    }

    /// The signing loop of `sign`, as one task that SIGINT / SIGTERM cancel: the results of the
    /// one-by-one loop, or the exit code of a batch that reported itself (CSC).
    private static func signDocuments(_ run: SignRun) async throws -> (results: [SignResultDocument], code: Int32?) {
        let (plan, source, arguments) = (run.plan, run.source, run.arguments)
        let documents = plan.documents
        if let code = try await signAwaitingApproval(run) { return ([], code) }
        if source.provisioning == nil, !plan.isPAdES, documents.count > 1, arguments.out == nil,
            !documents.contains("-"), plan.timestampClient == nil,
            let key = run.identity.key as? any BatchSigningKey
        {
            // One authorization for many signatures (CSC): see signInBatches.
            let code = try await signInBatches(
                documents,
                key: key,
                coordinator: run.coordinator,
                providerID: source.providerID,
                parameters: source.parameters,
                options: plan.options,
                outputDirectory: arguments.outputDirectory,
                context: run.context
            )
            return ([], code)
        }
        return (try await signEach(run), nil)
    }

    /// The journal rows whose signature file is one of `paths` (the files `--force` replaces).
    private static func journalRows(
        of paths: Set<String>,
        in journal: SignatureJournal
    ) async throws -> [String: [String]] {
        guard !paths.isEmpty else { return [:] }
        var rows: [String: [String]] = [:]
        for record in try await journal.records() {
            guard case .file(let url) = record.storage else { continue }
            let path = url.standardizedFileURL.path
            if paths.contains(path) { rows[Format.path(path), default: []].append(record.id) }
        }
        return rows
    }

    /// Checks what `sign` was asked to do (key source, output, format, digest, standard input) before
    /// anything is opened or signed, and works out where each signature goes.
    private static func signPlan(_ arguments: SignOptions, _ context: CommandContext) throws -> SignPlan {
        // How the options go together was checked when the command line was parsed (SignOptions.validate).
        let documents = arguments.documents
        let timestampClient = try context.timestampClient(arguments.tsa, anchors: arguments.tsaCA, ca: arguments.ca)
        var options = SigningOptions()
        let pades = arguments.format == .pades
        // PAdES embeds a CAdES-BES signature in the PDF.
        options.format = arguments.format == .cms ? .cms : .cadesBES
        if let digest = arguments.digest { options.digestAlgorithm = digest }
        options.isDetached = !arguments.attached
        options.writesPEM = arguments.pem
        if let refusal = Commands.builtInProvider(arguments.provider)?.commandLineRefusal(
            for: ProviderCommandLine(words: ["sign"], optionNames: Set(sign.options.map(\.name)))
        ) {
            throw UsageError(message: refusal.reason, usage: Commands.find(refusal.instead)?.0.usage ?? sign.usage)
        }

        // Where each signature goes, checked before anything is signed.
        var outputs =
            pades ? [] : try signatureOutputs(documents, out: arguments.out, directory: arguments.outputDirectory)
        if let directory = arguments.outputDirectory { try context.makeOutputDirectory(directory) }
        // PAdES writes PDFs: NAME-signed.pdf, --out or --out-dir (--in-place replaces the document as asked).
        let files: [URL?] =
            pades
            ? pdfOutputFiles(documents, arguments) : outputs.map { if case .file(let url) = $0 { url } else { nil } }
        for url in files.compactMap({ $0 }) {
            if let problem = unreplaceableOutput(url.path) {
                throw UsageError(
                    message: "refusing to write the signature to \(url.path): \(problem)"
                        + (arguments.out == nil
                            ? "" : "; --out takes a regular file (replaced atomically) or '-' for standard output"),
                    usage: signUsage
                )
            }
        }
        // The command line first: a secret given as --param KEY=VALUE is a usage error (64).
        if let provider = arguments.provider {
            _ = try context.commandLineParameters(arguments.parameters, for: provider)
        }
        // An existing signature is replaced only with --force, skipped with --skip-existing.
        let existing = Set(files.compactMap { $0?.standardizedFileURL.path }.filter(FileSystem.exists))
        if !existing.isEmpty, !arguments.force, !arguments.skipExisting {
            throw existingOutputsError(files.compactMap { $0?.standardizedFileURL.path }.filter(existing.contains))
        }
        var kept = documents
        var skipped: [(document: String, output: String)] = []
        if arguments.skipExisting, !existing.isEmpty {
            kept = []
            var keptOutputs: [SignatureOutput] = []
            for (index, document) in documents.enumerated() {
                if let output = files[index]?.standardizedFileURL.path, existing.contains(output) {
                    skipped.append((document, output))
                } else {
                    kept.append(document)
                    if !pades { keptOutputs.append(outputs[index]) }
                }
            }
            outputs = keptOutputs
        }
        // What an earlier run left (a killed or interrupted batch's hidden temporary files) goes first.
        SigningCoordinator.removeStaleTemporaries(for: files)
        options.levelUpgrade = try signLevelUpgrade(arguments, timestampClient: timestampClient, context: context)
        return SignPlan(
            documents: kept,
            skipped: skipped,
            replaced: arguments.force ? existing : [],
            options: options,
            isPAdES: pades,
            timestampClient: timestampClient,
            padesUpgrade: pades
                ? try padesLevelUpgrade(arguments, timestampClient: timestampClient, context: context) : nil,
            outputs: outputs,
            outputFiles: files,
            writesPDFToStandardOutput: pades && kept.contains { pdfGoesToStandardOutput($0, arguments) }
        )
    }

    /// The file each PDF is signed into: nil for `--in-place` and for standard output.
    private static func pdfOutputFiles(_ documents: [String], _ arguments: SignOptions) -> [URL?] {
        documents.map { arguments.inPlace || pdfGoesToStandardOutput($0, arguments) ? nil : pdfOutput($0, arguments) }
    }

    /// The level `--level` (default b-t with `--tsa`, else b-b) asks of CMS/CAdES signatures; PAdES
    /// signatures get their timestamp from the PDF signer and B-LT/B-LTA from ``padesLevelUpgrade``.
    private static func signLevelUpgrade(
        _ arguments: SignOptions,
        timestampClient: TimestampAuthorityClient?,
        context: CommandContext
    ) throws -> (any SignatureLevelUpgrade)? {
        let level = arguments.level ?? (timestampClient == nil ? .bB : .bT)
        if arguments.format == .pades { return nil }
        var collector: ValidationDataCollector?
        if level.rank >= SignatureLevel.bLT.rank {
            collector = try context.validationDataCollector(
                anchorFiles: arguments.ca,
                certificateFiles: arguments.tsaCA,
                crlFiles: arguments.crl,
                ocspResponseFiles: arguments.ocspResponse
            )
        }
        return try SigningOptions.levelUpgrade(for: level, authority: timestampClient, collector: collector)
    }

    /// PAdES B-LT or B-LTA, when `--level` asks for it.
    /// - Throws: `.invalidParameter` without `--tsa`.
    private static func padesLevelUpgrade(
        _ arguments: SignOptions,
        timestampClient: TimestampAuthorityClient?,
        context: CommandContext
    ) throws -> PAdESLevelUpgrade? {
        guard let level = arguments.level, level.rank >= SignatureLevel.bLT.rank else { return nil }
        guard let timestampClient else {
            throw CertificateProviderError(.invalidParameter, "\(level) needs a time-stamping authority (--tsa URL)")
        }
        return try PAdESLevelUpgrade(
            level: level,
            authority: timestampClient,
            collector: try context.validationDataCollector(
                anchorFiles: arguments.ca,
                certificateFiles: arguments.tsaCA,
                crlFiles: arguments.crl,
                ocspResponseFiles: arguments.ocspResponse
            ),
            addsVRI: arguments.vri
        )
    }

    /// `.alreadyExists` naming the signature files that exist (the first ten and how many more).
    static func existingOutputsError(_ paths: [String]) -> CertificateProviderError {
        let shown = paths.prefix(10).joined(separator: ", ")
        let more = paths.count > 10 ? " and \(paths.count - 10) more" : ""
        let subject =
            paths.count == 1 ? "a signature file exists already" : "\(paths.count) signature files exist already"
        return CertificateProviderError(
            .alreadyExists,
            "\(subject): \(shown)\(more); nothing was signed. Pass --force to replace "
                + (paths.count == 1 ? "it" : "them") + ", --skip-existing to sign only the documents without one, "
                + "or choose another --out / --out-dir"
        )
    }

    /// Where the key comes from: a provider's key source (`--identity`, `--p12`: ``BuiltInProvider/keySources``)
    /// or `--provider` with its parameters; reads the password the command line names.
    private static func signKeySource(_ arguments: SignOptions, _ context: CommandContext) throws -> SignKeySource {
        if let (name, value) = arguments.keySources.first,
            let (providerID, source) = keySourcesByProvider.first(where: { $0.source.name == name })
        {
            let configuration = try source.configure(
                ProviderKeySource.Request(value: value, context: context.providerContext) { prompt, isRequired in
                    try context.secret(arguments.password, prompt: prompt, required: isRequired)
                }
            )
            return SignKeySource(
                providerID: providerID,
                parameters: configuration.initialization,
                registration: configuration.registration
            )
        }
        let providerID = arguments.provider ?? ProviderID("")
        var parameters = try context.providerParameters(arguments.parameters, for: providerID)
        if arguments.password.isGiven {
            parameters[.init("password")] = .secret(
                try context.secret(arguments.password, prompt: "password: ") ?? Secret("")
            )
        }
        // The provider works with what the caller gave, also when it holds a session.
        return SignKeySource(
            providerID: providerID,
            parameters: parameters,
            registration: parameters,
            provisioning: try BuiltInProviders.all.first { $0.id == providerID }?
                .provisioning(for: parameters, context: context.providerContext)
        )
    }

    /// Every provider's key sources with the provider's ID, in ``BuiltInProviders/all``'s order.
    static var keySourcesByProvider: [(providerID: ProviderID, source: ProviderKeySource)] {
        BuiltInProviders.all.flatMap { provider in provider.keySources.map { (provider.id, $0) } }
    }

    /// The key source options `sign` takes besides `--provider`.
    static var keySources: [ProviderKeySource] { keySourcesByProvider.map(\.source) }

    /// The signing identity from the key source; a provider that stores what it opens (SAP's
    /// contract: `--provider pkcs12 --param file=…`) says where, and never replaces an entry without
    /// `--replace-identity`.
    private static func openSigningIdentity(
        _ source: SignKeySource,
        _ arguments: SignOptions,
        _ context: CommandContext
    ) async throws -> (SigningCoordinator, SigningIdentity) {
        let registry = try context.makeRegistry(parameters: [source.providerID: source.registration])
        let coordinator = SigningCoordinator(registry: registry, journal: try context.openJournal())
        guard let provisioning = source.provisioning else {
            return (coordinator, try await coordinator.identity(for: source.providerID, parameters: source.parameters))
        }
        if provisioning.replacesEntry && !arguments.replaceIdentity {
            throw CertificateProviderError(.alreadyExists, provisioning.refusal)
        }
        let identity = try await coordinator.provider(source.providerID).initialize(options: source.parameters)
        context.console.err("certsign: \(provisioning.storedNote(identity))")
        return (coordinator, identity)
    }

    /// The summary: the JSON document (on stderr when the signature went to stdout), or the count of
    /// signed documents; exit 1 when any failed.
    private static func reportSign(
        _ results: [SignResultDocument],
        _ plan: SignPlan,
        _ context: CommandContext,
        verbose: Bool
    ) -> Int32 {
        let documents = plan.documents
        let toStandardOutput = plan.writesToStandardOutput
        let failures = results.filter { $0.status == "failed" }.count
        func report(_ text: String) {
            if toStandardOutput { context.console.err(text) } else { context.console.out(text) }
        }
        let skipped = plan.skipped.map {
            SignResultDocument(document: Format.path($0.document), status: "skipped", signature: Format.path($0.output))
        }
        if context.json && toStandardOutput {
            context.console.err(JSONOutput.encode(SignDocument(results: skipped + results)))
        } else if context.json {
            context.console.out(JSONOutput.encode(SignDocument(results: skipped + results)))
        } else {
            if verbose {
                for entry in plan.skipped {
                    report("skipped \(Format.printable(entry.document)): \(Format.printable(entry.output)) exists")
                }
            }
            if documents.count > 1 || !skipped.isEmpty {
                let names = verbose ? "" : "; --verbose names them"
                let note = skipped.isEmpty ? "" : ", \(skipped.count) skipped (their signature files exist\(names))"
                report("\(documents.count - failures) of \(documents.count) documents signed\(note)")
            }
        }
        return failures == 0 ? CertSign.exitSuccess : CertSign.exitFailure
    }
}
