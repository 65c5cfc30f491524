import CertificateProviders
import Foundation
import PKCS12Provider
import Signing

#if canImport(Glibc)
import Glibc
#endif

/// The PKCS#12 provider's parameter keys, short at the CLI's call sites.
typealias PKCS12Key = PKCS12CertificateProvider.ParameterKey

/// `certsign sign`, `certsign verify`, `certsign signatures list | remove`.
extension Commands {
    static let signingCommands: [CommandDescriptor] = [sign, verify, signaturesList, signaturesRemove]

    /// Files above this size show a progress bar (when stderr is a terminal).
    static let progressThreshold: Int64 = 16 << 20

    static var signUsage: String { sign.usage }

    /// `certsign sign DOCUMENT... (--identity ALIAS | --p12 FILE | --provider ID) …`.
    struct SignOptions: CommandOptions {
        /// `--format`.
        enum Format: String, CaseIterable, Sendable {
            case cms
            case cades
            case cadesBES = "cades-bes"
            case pades
        }

        var documents: [String] = []
        var identity: String?
        var p12: String?
        var provider: ProviderID?
        var parameters = ProviderParameterInput()
        var password = SecretInput()
        var out: String?
        var outputDirectory: String?
        var replace = false
        var attached = false
        var format = Format.cades
        var digest: DigestAlgorithm?
        var tsa: URL?
        var tsaCA: [String] = []
        var field: String?
        var reason: String?
        var location: String?
        var inPlace = false

        static var arguments: [ArgumentBinding<Self>] {
            [
                .many(
                    \.documents,
                    "DOCUMENT",
                    "a file to sign; '-' reads standard input (its signature goes to standard output)",
                    type: .file
                )
            ]
        }

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                .value(
                    \.identity,
                    "--identity",
                    "ALIAS",
                    "sign with a stored identity (PASSWORD = its store password)",
                    group: "key",
                    convert: ValueConversions.alias
                ),
                .value(
                    \.p12,
                    "--p12",
                    "FILE",
                    "sign with a .p12/.pfx file used directly, nothing stored (PASSWORD = the file's password)",
                    type: .file,
                    group: "key"
                ),
                .value(
                    \.provider,
                    "--provider",
                    "ID",
                    "sign with any registered provider ('certsign providers'), configured with --param,\n--param-env "
                        + "and --param-file; what you give is what it uses, also when it holds a session",
                    group: "key"
                ) { ProviderID($0) },
            ]
            options += .providerParameters(\.parameters)
            options += .password(\.password, "the password")
            options += [
                .value(
                    \.out,
                    "--out",
                    "FILE",
                    "write the signature (one document) to FILE; '-' writes it to standard output",
                    type: .file
                ),
                .value(
                    \.outputDirectory,
                    "--out-dir",
                    "DIR",
                    "write each signature as DIR/NAME.p7s (DIR is created when missing)",
                    type: .directory
                ),
                .flag(
                    \.replace,
                    "--replace",
                    "let '--provider pkcs12 --param file=…' replace an identity stored under the same alias\n(it "
                        + "stores what it opens, and says where)"
                ),
                .flag(\.attached, "--attached", "embed the document in the signature (default: detached)"),
                .choice(
                    \.format,
                    "--format",
                    "FORMAT",
                    "cms (plain CMS SignedData), cades (CAdES-BES) or pades (inside the PDF: PAdES B-B, B-T with "
                        + "--tsa;\nNAME-signed.pdf beside each PDF, or --out / --out-dir / --in-place)"
                ),
                .value(
                    \.digest,
                    "--digest",
                    "ALG",
                    "sha256, sha384, sha512, streebog256 or streebog512 (GOST R 34.11-2012)",
                    default: "the key's digest: streebog256/512 for GOST keys, else sha256",
                    convert: ValueConversions.digest
                ),
                .value(
                    \.tsa,
                    "--tsa",
                    "URL",
                    "timestamp each new signature at this RFC 3161 TSA (CAdES-T, PAdES B-T; see certsign timestamp)",
                    type: .url,
                    convert: ValueConversions.timestampAuthority
                ),
                .repeatable(
                    \.tsaCA,
                    "--tsa-ca",
                    "FILE",
                    "trust anchors for the TSA's certificate (default: the system store)",
                    type: .file
                ),
                .value(\.field, "--field", "NAME", "PAdES: the signature field's name (default Signature1, 2, …)"),
                .value(\.reason, "--reason", "TEXT", "PAdES: the reason recorded in the signature"),
                .value(\.location, "--location", "TEXT", "PAdES: the location recorded in the signature"),
                .flag(\.inPlace, "--in-place", "PAdES: replace each PDF with its signed version (atomically)"),
            ]
            return options
        }

        func validate() throws {
            let sources = [identity != nil, p12 != nil, provider != nil].filter { $0 }
            guard sources.count == 1 else {
                throw InvalidValue(
                    message: sources.isEmpty
                        ? "say where the key comes from: --identity ALIAS, --p12 FILE or --provider ID"
                        : "give only one of --identity, --p12 and --provider"
                )
            }
            if out != nil && documents.count > 1 {
                throw InvalidValue(message: "--out names one output file; use --out-dir DIR for several documents")
            }
            if out != nil && outputDirectory != nil {
                throw InvalidValue(message: "give either --out or --out-dir")
            }
            if !parameters.isEmpty && provider == nil {
                throw InvalidValue(message: "--param, --param-env and --param-file go with --provider")
            }
            if tsa == nil && !tsaCA.isEmpty {
                throw InvalidValue(message: "--tsa-ca goes with --tsa URL")
            }
            let pades = format == .pades
            if !pades, inPlace || field != nil || reason != nil || location != nil {
                throw InvalidValue(message: "--in-place, --field, --reason and --location go with --format pades")
            }
            if pades, attached {
                throw InvalidValue(message: "a PAdES signature lives inside the PDF: --attached does not apply")
            }
            if pades, inPlace, out != nil || outputDirectory != nil {
                throw InvalidValue(message: "--in-place replaces the document: do not give --out or --out-dir with it")
            }
            // Standard input is read once: by one document, or by the password.
            let fromStandardInput = documents.filter { $0 == "-" }.count
            if fromStandardInput > 1 {
                throw InvalidValue(message: "standard input ('-') can be read only once")
            }
            if fromStandardInput == 1 && password.readsStandardInput {
                throw InvalidValue(
                    message: "DOCUMENT '-' and --password-stdin both read standard input; give the password with "
                        + "--password-env or --password-file"
                )
            }
            if pades, documents.contains("-") || out == "-" {
                throw InvalidValue(
                    message: "PAdES signs PDF files in place or into another file: '-' (standard input or output) "
                        + "does not apply"
                )
            }
        }
    }

    static let sign = CommandDescriptor(
        words: ["sign"],
        summary: "sign documents (CAdES-BES detached .p7s by default)",
        discussion: """
            Give exactly one of --identity, --p12 and --provider. Output: DOCUMENT.p7s next to each
            document, or --out FILE (one document) / --out-dir DIR. A signature never replaces a document
            being signed, a symbolic link, a device, a FIFO or a directory, and two documents never share
            one signature file. Signing a signed PDF adds a countersignature.
            Many documents are signed with one unlock; a failing document is reported, the rest are still
            signed, and the exit code is then 1. Every signature is recorded in the journal.
            """,
        examples: ["certsign sign invoice-1.pdf invoice-2.pdf --identity ivanov --password-env P12_PASSWORD"]
    ) { (options: SignOptions, context) in
        try await runSign(options, context)
    }

    /// What `sign` was asked to do, checked before anything is opened or signed.
    struct SignPlan {
        var documents: [String]
        var options: SigningOptions
        var isPAdES: Bool
        var timestampClient: TimestampAuthorityClient?
        /// Per document, in order (empty for PAdES, whose outputs signPDF works out).
        var outputs: [SignatureOutput]
        /// With the signature on stdout, messages go to stderr.
        var writesToStandardOutput: Bool { outputs.contains(.standardOutput) }
    }

    /// Where the key comes from: the provider and what it is given.
    struct SignKeySource {
        var providerID: ProviderID
        var parameters: ProviderParameters
        var pkcs12Parameters: ProviderParameters
        var providerParameters: [ProviderID: ProviderParameters]
        var provisionsStore: Bool
    }

    /// `certsign sign`: validation, the key source, the identity, the signing loop, the output.
    private static func runSign(_ arguments: SignOptions, _ context: CommandContext) async throws -> Int32 {
        let plan = try signPlan(arguments, context)
        let source = try signKeySource(arguments, context)
        let (coordinator, identity) = try await openSigningIdentity(source, arguments, context)
        let documents = plan.documents
        if !source.provisionsStore, !plan.isPAdES, documents.count > 1, arguments.out == nil,
            !documents.contains("-"), plan.timestampClient == nil,
            let key = identity.key as? any BatchSigningKey
        {
            // One authorization for many signatures (CSC): see signInBatches.
            return try await signInBatches(
                documents,
                key: key,
                coordinator: coordinator,
                providerID: source.providerID,
                parameters: source.parameters,
                options: plan.options,
                outputDirectory: arguments.outputDirectory,
                context: context
            )
        }
        let results = try await signEach(
            plan,
            identity: identity,
            coordinator: coordinator,
            source: source,
            arguments: arguments,
            context: context
        )
        return reportSign(results, plan, context)
    }

    /// Checks what `sign` was asked to do (key source, output, format, digest, standard input) before
    /// anything is opened or signed, and works out where each signature goes.
    private static func signPlan(_ arguments: SignOptions, _ context: CommandContext) throws -> SignPlan {
        // How the options go together was checked when the command line was parsed (SignOptions.validate).
        let documents = arguments.documents
        let timestampClient = try context.timestampClient(arguments.tsa, anchors: arguments.tsaCA)
        var options = SigningOptions()
        let pades = arguments.format == .pades
        // PAdES embeds a CAdES-BES signature in the PDF.
        options.format = arguments.format == .cms ? .cms : .cadesBES
        if let digest = arguments.digest { options.digestAlgorithm = digest }
        options.isDetached = !arguments.attached
        if arguments.provider == .fmpDSS {
            throw UsageError(
                message:
                    "the fmp-dss provider signs platform resources (a table cell on the server), not files: use "
                    + "'certsign dss sign --resource R --table T --column C --hhive-id N --certificate-id N'",
                usage: dssSignUsage
            )
        }

        // Where each signature goes, checked before anything is signed.
        // PAdES writes PDFs (checked by signPDF); only its --out is checked here, as a file to replace.
        let outputs =
            pades ? [] : try signatureOutputs(documents, out: arguments.out, directory: arguments.outputDirectory)
        if let directory = arguments.outputDirectory { try context.makeOutputDirectory(directory) }
        let checkedOutputs =
            pades ? (arguments.out.map { [SignatureOutput.file(URL(fileURLWithPath: $0))] } ?? []) : outputs
        for output in checkedOutputs {
            guard case .file(let url) = output else { continue }
            if let problem = unreplaceableOutput(url.path) {
                throw UsageError(
                    message:
                        "refusing to write the signature to \(url.path): \(problem); --out takes a regular file "
                        + "(replaced atomically) or '-' for standard output",
                    usage: signUsage
                )
            }
        }
        return SignPlan(
            documents: documents,
            options: options,
            isPAdES: pades,
            timestampClient: timestampClient,
            outputs: outputs
        )
    }

    /// Where the key comes from: `--identity` (the store), `--p12` (in memory) or `--provider` with its
    /// parameters; reads the password the command line names.
    private static func signKeySource(_ arguments: SignOptions, _ context: CommandContext) throws -> SignKeySource {
        var providerID: ProviderID
        var parameters = ProviderParameters()
        var pkcs12Parameters = ProviderParameters()
        var providerParameters: [ProviderID: ProviderParameters] = [:]
        var provisionsStore = false
        if let alias = arguments.identity {
            providerID = .pkcs12
            guard try context.identityStore.metadata(alias: alias) != nil else {
                throw CertificateProviderError(
                    .notStored,
                    "no identity is stored under the alias '\(alias)' in \(context.storeDirectory.path)"
                )
            }
            pkcs12Parameters[PKCS12Key.alias] = .string(alias)
            if let password = try context.secret(arguments.password, prompt: "store password for '\(alias)': ") {
                pkcs12Parameters[PKCS12Key.storePassword] = .secret(password)
            }
        } else if let file = arguments.p12 {
            providerID = .pkcs12
            // Opened in memory by the provider: nothing is stored, no copy of the key reaches disk.
            parameters[PKCS12Key.data] = .data(try context.readInputFile(file, what: "PKCS#12 file"))
            if let password = try context.secret(arguments.password, prompt: "PKCS#12 password: ", required: false) {
                parameters[PKCS12Key.password] = .secret(password)
            }
            pkcs12Parameters[PKCS12Key.inMemory] = .boolean(true)
        } else {
            providerID = arguments.provider ?? ProviderID("")
            parameters = try context.providerParameters(arguments.parameters, for: providerID)
            if arguments.password.isGiven {
                parameters[.init("password")] = .secret(
                    try context.secret(arguments.password, prompt: "password: ") ?? Secret("")
                )
            }
            if providerID == .pkcs12 {
                provisionsStore = parameters[PKCS12Key.file] != nil || parameters[PKCS12Key.data] != nil
                if try parameters.boolean(PKCS12Key.inMemory) == true { provisionsStore = false }
                // The provider reads alias, store password and the rest from what was given.
                pkcs12Parameters = pkcs12Parameters.merging(parameters)
            } else {
                // The provider works with what the caller gave, also when it holds a session.
                providerParameters[providerID] = parameters
            }
        }
        return SignKeySource(
            providerID: providerID,
            parameters: parameters,
            pkcs12Parameters: pkcs12Parameters,
            providerParameters: providerParameters,
            provisionsStore: provisionsStore
        )
    }

    /// The signing identity from the key source; `--provider pkcs12 --param file=…` stores what it opens
    /// (SAP's contract) and says where, never replacing an entry without `--replace`.
    private static func openSigningIdentity(
        _ source: SignKeySource,
        _ arguments: SignOptions,
        _ context: CommandContext
    ) async throws -> (SigningCoordinator, SigningIdentity) {
        let parameters = source.parameters
        let registry = try context.makeRegistry(pkcs12: source.pkcs12Parameters, parameters: source.providerParameters)
        let coordinator = SigningCoordinator(registry: registry, journal: try context.openJournal())
        let identity: SigningIdentity
        if source.provisionsStore {
            // SAP's contract: initialize stores what it provisions. Say what and where, and never
            // replace an entry silently.
            let alias = try parameters.string(PKCS12Key.alias) ?? PKCS12CertificateProvider.defaultAlias
            if try context.identityStore.metadata(alias: alias) != nil && !arguments.replace {
                throw CertificateProviderError(
                    .alreadyExists,
                    "an identity is already stored under the alias '\(alias)' in \(context.storeDirectory.path); "
                        + "pass --replace to replace it, --param alias=NAME to store under another name, or --p12 "
                        + "FILE to sign without storing"
                )
            }
            let provider = try await coordinator.provider(.pkcs12)
            identity = try await provider.initialize(options: parameters)
            let entry = context.storeDirectory.appendingPathComponent("identities").appendingPathComponent(alias).path
            context.console.err(
                "certsign: stored the identity of '\(identity.certificate.subject)' in the identity store as "
                    + "'\(alias)' (\(entry)); '--identity \(alias)' signs with it again, '--p12 FILE' signs without "
                    + "storing"
            )
        } else {
            identity = try await coordinator.identity(for: source.providerID, parameters: parameters)
        }
        return (coordinator, identity)
    }

    /// Signs each document in turn (one unlock for all); a failing document is recorded and the others
    /// are still signed.
    private static func signEach(
        _ plan: SignPlan,
        identity: SigningIdentity,
        coordinator: SigningCoordinator,
        source: SignKeySource,
        arguments: SignOptions,
        context: CommandContext
    ) async throws -> [SignResultDocument] {
        let documents = plan.documents
        let options = plan.options
        let pades = plan.isPAdES
        let timestampClient = plan.timestampClient
        let outputs = plan.outputs
        let providerID = source.providerID
        let parameters = source.parameters
        var results: [SignResultDocument] = []
        let console = context.console
        // With the signature on stdout, messages go to stderr.
        let toStandardOutput = plan.writesToStandardOutput
        func report(_ text: String) { if toStandardOutput { console.err(text) } else { console.out(text) } }
        // Several files into files: one library batch (a pipeline on every core, one commit per group);
        // one document keeps its byte progress.
        let workingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        var batched: [Result<SigningResult, CertificateProviderError>]?
        if documents.count > 1, !pades, timestampClient == nil, !documents.contains("-"), !toStandardOutput {
            let progress: SigningProgress = { done, total in console.progress("signing", done: done, total: total) }
            batched = try await coordinator.signEach(
                documents.map { .file(URL(fileURLWithPath: $0, isDirectory: false, relativeTo: workingDirectory)) },
                outputs: outputs.map { output -> URL? in if case .file(let url) = output { url } else { nil } },
                provider: providerID,
                parameters: parameters,
                options: options,
                progress: progress
            )
        }
        func sign(
            _ index: Int,
            _ document: Document,
            output: URL?,
            progress: SigningProgress?
        ) async throws
            -> SigningResult
        {
            // A server's signature by another certificate: signed again here, after one refresh.
            guard let batched, !isStaleCertificate(batched[index]) else {
                return try await healingStaleCertificate(
                    coordinator: coordinator,
                    providerID: providerID,
                    context: context
                ) {
                    try await coordinator.sign(
                        document: document,
                        provider: providerID,
                        parameters: parameters,
                        options: options,
                        output: output,
                        progress: progress
                    )
                }
            }
            // The CLI's own words for a missing, unreadable or directory document.
            if case .failure(let error) = batched[index], error.code == CertificateProviderError.Code.fileSystem {
                _ = try context.documentSize(documents[index])
            }
            return try batched[index].get()
        }
        for (index, path) in documents.enumerated() {
            do {
                try Task.checkCancellation()
                if pades {
                    let digest =
                        try options.digestAlgorithm ?? DigestAlgorithm.preferred(for: identity.key.publicKeyAlgorithm)
                    let server = try await coordinator.provider(providerID) as? any DocumentSigning
                    results.append(
                        try await signPDF(
                            path,
                            identity: identity,
                            server: server,
                            timestampClient: timestampClient,
                            arguments: arguments,
                            digest: digest,
                            context: context
                        )
                    )
                    continue
                }
                let document: Document
                var size: Int64
                if path == "-" {
                    var data = console.readStandardInput()
                    let bytes = Array(data)
                    data.resetBytes(in: 0..<data.count)
                    document = .bytes(bytes, name: "stdin")
                    size = Int64(bytes.count)
                } else {
                    size = batched == nil ? try context.documentSize(path) : 0
                    document = .file(URL(fileURLWithPath: path, isDirectory: false, relativeTo: workingDirectory))
                }
                let label = documents.count > 1 ? "signing \(index + 1)/\(documents.count)" : "signing"
                var progress: SigningProgress?
                if size >= progressThreshold || documents.count > 1 {
                    progress = { done, total in console.progress(label, done: done, total: total) }
                }
                var outputURL: URL?
                if case .file(let url) = outputs[index] { outputURL = url }
                let result = try await sign(index, document, output: outputURL, progress: progress)
                console.clearProgress()
                var signature = result.signature
                var timestamps: [AddedTimestampDocument]?
                if let timestampClient {
                    if let outputURL {
                        timestamps = try await upgradeSignatureFile(
                            outputURL.path,
                            client: timestampClient,
                            journal: coordinator.journal,
                            context: context
                        ).document.timestamps
                    } else {
                        // Standard output: timestamp the bytes before they go out; the journal keeps them.
                        let stamped = try await SignatureTimestamper.addTimestamps(
                            to: signature,
                            authority: timestampClient
                        )
                        signature = stamped.signature
                        var record = result.record
                        record.format = .cadesT
                        record.storage = .inline(signature)
                        try await coordinator.journal.update(record)
                        timestamps = stamped.addedTokens.compactMap { $0 }.map {
                            AddedTimestampDocument(time: Format.isoDate($0.time), tsa: $0.authority)
                        }
                    }
                }
                if outputURL == nil { console.outBytes(signature) }
                size = 0
                results.append(
                    SignResultDocument(
                        document: displayPath(path, in: workingDirectory),
                        status: "signed",
                        signature: outputURL.map { displayPath($0.path, in: workingDirectory) } ?? "-",
                        id: result.record.id,
                        signer: result.signerCertificate.subject,
                        format: timestampClient == nil ? options.format.rawValue : SignatureFormat.cadesT.rawValue,
                        detached: options.isDetached,
                        digest: result.record.digestAlgorithm.rawValue,
                        timestamps: timestamps
                    )
                )
                if !context.json { report("signed \(path) -> \(outputURL?.path ?? "standard output")") }
            } catch let error as CertificateProviderError {
                context.console.clearProgress()
                results.append(.failed(Format.path(path), error))
                context.console.err("certsign: \(path): \(error.reason)")
            }
        }
        return results
    }

    /// The summary: the JSON document (on stderr when the signature went to stdout), or the count of
    /// signed documents; exit 1 when any failed.
    private static func reportSign(
        _ results: [SignResultDocument],
        _ plan: SignPlan,
        _ context: CommandContext
    ) -> Int32 {
        let documents = plan.documents
        let toStandardOutput = plan.writesToStandardOutput
        let failures = results.filter { $0.status == "failed" }.count
        func report(_ text: String) {
            if toStandardOutput { context.console.err(text) } else { context.console.out(text) }
        }
        if context.json && toStandardOutput {
            context.console.err(JSONOutput.encode(SignDocument(results: results)))
        } else if context.json {
            context.console.out(JSONOutput.encode(SignDocument(results: results)))
        } else if documents.count > 1 {
            report("\(documents.count - failures) of \(documents.count) documents signed")
        }
        return failures == 0 ? CertSign.exitSuccess : CertSign.exitFailure
    }

    /// Where one signature goes.
    enum SignatureOutput: Equatable {
        case file(URL)
        case standardOutput
    }

    /// The output of every document, in order: `--out FILE`, `--out -`, `--out-dir DIR`, or
    /// `DOCUMENT.p7s` (standard output for DOCUMENT `-`).
    /// - Throws: `UsageError` when a signature would replace a document being signed, or two
    ///   documents would get the same signature file.
    static func signatureOutputs(
        _ documents: [String],
        out: String?,
        directory: String?
    ) throws -> [SignatureOutput] {
        // No file-system access per document beyond what is needed: URLs are built with
        // `isDirectory` given (so Foundation does not stat them) against a working directory read
        // once, and the output folder is made into a URL once.
        let workingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        func fileURL(_ path: String) -> URL {
            URL(fileURLWithPath: path, isDirectory: false, relativeTo: workingDirectory).absoluteURL
        }
        let outputDirectory = directory.map {
            URL(fileURLWithPath: $0, isDirectory: true, relativeTo: workingDirectory).absoluteURL
        }
        let outputs: [SignatureOutput] = documents.map { path in
            if let out {
                return out == "-" ? .standardOutput : .file(fileURL(out))
            }
            if let outputDirectory {
                let name = (path == "-" ? "stdin" : (path as NSString).lastPathComponent) + ".p7s"
                return .file(outputDirectory.appendingPathComponent(name, isDirectory: false))
            }
            return path == "-" ? .standardOutput : .file(fileURL(path + ".p7s"))
        }
        var identities = SignatureFileIdentities()
        let inputs = Set(documents.filter { $0 != "-" }.map { identities.file($0) ?? identities.resolved($0) })
        let someInputMissing = inputs.contains { if case .path = $0 { true } else { false } }
        var seen: [SignatureFileIdentities.Key: String] = [:]
        for (document, output) in zip(documents, outputs) {
            guard case .file(let url) = output else { continue }
            // A signature file that does not exist yet can only be a document that does not exist either.
            let existing = identities.file(url.path)
            if inputs.contains(existing ?? (someInputMissing ? identities.resolved(url.path) : .path(""))) {
                throw UsageError(
                    message:
                        "the signature of \(document) would replace the document \(url.path); choose another --out",
                    usage: signUsage
                )
            }
            let target = identities.output(url)
            if let earlier = seen[target] {
                throw UsageError(
                    message:
                        "\(earlier) and \(document) would both be signed into \(url.path); sign them into different "
                        + "--out-dir folders or rename one",
                    usage: signUsage
                )
            }
            seen[target] = document
        }
        return outputs
    }

    /// ``Format/path(_:)`` of a file without asking the file system (no `getcwd`, no `stat`): the
    /// working directory is read once by the caller.
    static func displayPath(_ path: String, in workingDirectory: URL) -> String {
        path == "-"
            ? path
            : URL(fileURLWithPath: path, isDirectory: false, relativeTo: workingDirectory).absoluteURL
                .standardizedFileURL.path
    }

    /// Tells files apart for ``signatureOutputs(_:out:directory:)`` with one `stat(2)` per document and one per
    /// output folder: an existing file is its device and inode (two spellings, a symbolic link or a
    /// hard link to one file are the same file); a signature file is its folder's device and inode
    /// plus its name. Paths that cannot be `stat`ed fall back to resolving the path name by name.
    struct SignatureFileIdentities {
        enum Key: Hashable {
            case file(dev_t, ino_t)
            case entry(dev_t, ino_t, String)
            case path(String)
        }
        private var folders: [String: Key] = [:]

        /// The file `path` names (following links), or nil when it cannot be `stat`ed.
        func file(_ path: String) -> Key? {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return .file(info.st_dev, info.st_ino)
        }

        /// `path` with every symbolic link resolved, name by name (for paths that do not exist).
        func resolved(_ path: String) -> Key {
            .path(URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path)
        }

        /// Where a signature file goes: its folder (`stat`ed once per folder) and its name.
        mutating func output(_ url: URL) -> Key {
            let folder = url.deletingLastPathComponent().path
            let name = url.lastPathComponent
            let key: Key
            if let known = folders[folder] {
                key = known
            } else {
                key = file(folder) ?? resolved(folder)
                folders[folder] = key
            }
            switch key {
            case .file(let device, let inode): return .entry(device, inode, name)
            case .path(let resolvedFolder): return .path(resolvedFolder + "/" + name)
            case .entry: return .path(url.standardizedFileURL.resolvingSymlinksInPath().path)
            }
        }
    }

    /// Why a signature must not be written over `path` (a link, device, FIFO, socket or
    /// directory), or nil when it is missing or a regular file.
    static func unreplaceableOutput(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFLNK:
            return
                "it is a symbolic link (certsign never replaces one; name the file it points to, or '-' for standard "
                + "output)"
        case S_IFDIR: return "it is a directory (use --out-dir for a folder)"
        case S_IFIFO: return "it is a FIFO"
        case S_IFCHR, S_IFBLK: return "it is a device"
        default: return "it is not a regular file"
        }
    }

    static let signaturesList = CommandDescriptor(
        words: ["signatures", "list"],
        summary: "list signatures: the local journal and server histories",
        examples: ["certsign --json signatures list"]
    ) { context in
        let coordinator = SigningCoordinator(registry: try context.makeRegistry(), journal: try context.openJournal())
        let list = try await coordinator.signatures()
        for (id, error) in list.unavailable.sorted(by: { $0.key < $1.key }) {
            if id == .fmpDSS && error.code == .authenticationFailed && error.reason.contains("not logged in") {
                // The platform keeps a history only for a logged-in user: say why it is missing.
                context.console.err("certsign: fmp-dss: not logged in (certsign dss login)")
            } else if !context.isUnconfigured(error) || id == .fmpDSS {
                context.console.err(
                    "certsign: warning: the signature history of '\(id)' is unavailable: \(error.reason)"
                )
            }
        }
        let entries = list.entries
        context.emit(
            encoding: SignaturesDocument(signatures: entries.map(SignatureEntryDocument.init)),
            human: entries.isEmpty
                ? "no signatures"
                : Format.table(
                    ["ID", "WHERE", "CREATED", "DOCUMENT", "SIGNER"],
                    entries.map {
                        [
                            $0.id, $0.location.description, $0.createdAt.map(Format.localDate) ?? "-", $0.summary,
                            $0.record?.signerSubject ?? "-",
                        ]
                    }
                )
        )
        return CertSign.exitSuccess
    }

    /// `certsign signatures remove ID`: a signature id or a prefix of one.
    struct SignaturesRemoveOptions: CommandOptions {
        var id = ""

        static var arguments: [ArgumentBinding<Self>] {
            [
                .one(
                    \.id,
                    "ID",
                    "the signature's id as 'certsign signatures list' prints it, or a unique prefix of it",
                    convert: ValueConversions.signatureID
                )
            ]
        }
    }

    static let signaturesRemove: CommandDescriptor = CommandDescriptor(
        words: ["signatures", "remove"],
        summary: "remove a signature record (journal row or server history entry)",
        discussion: "The journal row is removed; a .p7s file written earlier is left where it is.",
        examples: ["certsign signatures remove 0F1C"]
    ) { (options: SignaturesRemoveOptions, context) in
        let given = options.id
        let coordinator = SigningCoordinator(registry: try context.makeRegistry(), journal: try context.openJournal())
        let entries = try await coordinator.signatures().entries
        // The full id, else a unique prefix (as git takes abbreviated commits), case-insensitive.
        var matches = entries.filter { $0.id == given }
        if matches.isEmpty, !given.isEmpty {
            matches = entries.filter { $0.id.lowercased().hasPrefix(given.lowercased()) }
        }
        guard let entry = matches.first else {
            throw CertificateProviderError(.notStored, "no signature has the id \(given) or an id that starts with it")
        }
        let id = entry.id
        guard matches.allSatisfy({ $0.id == id }) else {
            throw UsageError(
                message: "the id prefix \(given) is ambiguous; it matches: "
                    + matches.map { "\($0.id) (\($0.location))" }.joined(separator: ", "),
                usage: signaturesRemove.usage
            )
        }
        guard matches.count == 1 else {
            throw CertificateProviderError.invalidParameter(
                "id \(id) exists in several places: \(matches.map(\.location.description).joined(separator: ", "))"
            )
        }
        try await coordinator.removeSignature(id: id, location: entry.location)
        context.emit(
            encoding: SignaturesDocument(removed: .init(id: id, location: entry.location.description)),
            human: "removed \(id) (\(entry.location))"
        )
        return CertSign.exitSuccess
    }
}

extension CommandContext {
    /// The signature journal in the store directory (created on first use).
    func openJournal() throws -> SignatureJournal {
        do {
            try FileManager.default.createDirectory(
                at: storeDirectory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw CertificateProviderError(
                .fileSystem,
                "cannot create the store directory \(storeDirectory.path): \(error.localizedDescription)"
            )
        }
        return try SignatureJournal(url: storeDirectory.appendingPathComponent("journal.sqlite"))
    }

    /// The size of a document, with errors that say what is wrong with the path.
    func documentSize(_ path: String) throws -> Int64 { try checkReadableFile(path, what: "document") }

    /// Whether a provider error only says the provider is not set up (no session, no parameters).
    func isUnconfigured(_ error: CertificateProviderError) -> Bool {
        [.invalidParameter, .passwordRequired, .notStored, .authenticationFailed].contains(error.code)
    }
}
