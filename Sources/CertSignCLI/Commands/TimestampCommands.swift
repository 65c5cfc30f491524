import CertificateProviders
internal import Durability
import Foundation
import HTTPClient
import PDFSigning
import RemoteProviderSupport
import SignatureJournal
import Signing

/// `certsign timestamp` (CAdES-BES/CMS → CAdES-T in place) and the TSA, revocation and fetcher
/// helpers `sign --tsa` and `verify --crl / --check-revocation / --tsa-ca` use.
extension Commands {
    static let timestampCommands: [CommandDescriptor] = [timestamp]

    static var timestampUsage: String { timestamp.usage }

    /// `certsign timestamp SIGNATURE... --tsa URL [--tsa-ca FILE]...`.
    struct TimestampOptions: CommandOptions {
        var signatures: [String] = []
        var tsa: URL?
        var tsaCA: [String] = []

        static var arguments: [ArgumentBinding<Self>] {
            [
                .many(
                    \.signatures,
                    "SIGNATURE",
                    "a signature file (.p7s, CMS or CAdES-BES), or a PDF (gets a document timestamp)",
                    type: .file
                )
            ]
        }

        static var options: [OptionBinding<Self>] { timestampAuthorityOptions(\.tsa, \.tsaCA) }
    }

    /// The required `--tsa URL` and `--tsa-ca FILE...` of `timestamp` and `extend`.
    static func timestampAuthorityOptions<Options: CommandOptions>(
        _ tsa: WritableKeyPath<Options, URL?>,
        _ tsaCA: WritableKeyPath<Options, [String]>
    ) -> [OptionBinding<Options>] {
        [
            .value(
                tsa,
                "--tsa",
                "URL",
                "the time-stamping authority (RFC 3161 over HTTP; http:// is fine: answers are signed)",
                type: .url,
                required: true,
                convert: ValueConversions.timestampAuthority
            ),
            .repeatable(
                tsaCA,
                "--tsa-ca",
                "FILE",
                "trust anchors for the TSA's certificate (PEM or DER) (default: the system store; for extend,\n"
                    + "also the --ca anchors)",
                type: .file
            ),
        ]
    }

    static let timestamp = CommandDescriptor(
        words: ["timestamp"],
        summary: "add RFC 3161 timestamps in place: CAdES-T signatures, PDF document timestamps",
        discussion: """
            Every signer of each SIGNATURE gets a timestamp over its signature value
            (id-aa-signatureTimeStampToken); signers that have one already are left as they are. Each file is
            replaced atomically, and its journal row, if any, says cades-t. A PDF gets a PAdES document timestamp
            instead (/Type /DocTimeStamp, ETSI.RFC3161) over the whole file, in a new revision, so its
            signatures stay valid. A failing file is reported, the others are still done, and the exit code is
            then 1.
            """,
        examples: [
            "certsign timestamp invoice.pdf.p7s --tsa http://tsa.example/tsr --tsa-ca tsa-root.pem",
            "certsign timestamp contract-signed.pdf --tsa http://tsa.example/tsr --tsa-ca tsa-root.pem",
        ]
    ) { (options: TimestampOptions, context) in
        guard let client = try context.timestampClient(options.tsa, anchors: options.tsaCA)
        else {
            throw UsageError(message: "give the time-stamping authority with --tsa URL", usage: timestampUsage)
        }
        let journal = try context.openJournal()
        var results: [TimestampResultDocument] = []
        var failures = 0
        for path in options.signatures {
            do {
                let upgrade =
                    try isPDFFile(path, context: context, what: "signature")
                    ? try await timestampPDF(path, client: client)
                    : try await upgradeSignatureFile(path, client: client, journal: journal, context: context)
                results.append(upgrade.document)
                if !context.json {
                    context.console.out(
                        upgrade.added == 0
                            ? "\(Format.printable(path)): every signer already has a timestamp"
                            : upgrade.document.field.map {
                                "timestamped \(Format.printable(path)): document timestamp in field '\($0)', \(upgrade.times)"
                            }
                                ?? "timestamped \(Format.printable(path)): \(upgrade.added) signer(s), \(upgrade.times)"
                    )
                }
            } catch let error as CertificateProviderError {
                failures += 1
                results.append(
                    TimestampResultDocument(
                        signature: Format.path(path),
                        status: "failed",
                        error: error.reason,
                        code: error.code.rawValue
                    )
                )
                context.console.err(ErrorText.documentFailure(path, error, command: context.command))
            }
        }
        if context.json {
            context.console.out(
                JSONOutput.encode(
                    TimestampDocument(
                        timestamped: results.filter { $0.status == "timestamped" }.count,
                        failed: failures,
                        results: results
                    )
                )
            )
        }
        return failures == 0 ? CertSign.exitSuccess : CertSign.exitFailure
    }

    /// What upgrading one file did.
    struct TimestampUpgrade {
        var added: Int
        var times: String
        var document: TimestampResultDocument
    }

    /// Adds a document timestamp to the PDF at `path`, in place (atomically).
    static func timestampPDF(_ path: String, client: TimestampAuthorityClient) async throws -> TimestampUpgrade {
        let url = URL(fileURLWithPath: path)
        let result = try await PDFSigner.addDocumentTimestamp(toPDFAt: url, writingTo: url, authority: client)
        let tokens = result.timestamp.map { [$0] } ?? []
        return TimestampUpgrade(
            added: tokens.count,
            times: tokens.map { "\(Format.localDate($0.time)) by \($0.authority)" }.joined(separator: "; "),
            document: TimestampResultDocument(
                signature: Format.path(path),
                status: "timestamped",
                timestamps: tokens.map { AddedTimestampDocument(time: Format.isoDate($0.time), tsa: $0.authority) },
                field: result.fieldName
            )
        )
    }

    /// Timestamps every signer of the signature file at `path` that has no timestamp yet, replaces
    /// the file atomically, and marks its journal rows `cades-t`.
    static func upgradeSignatureFile(
        _ path: String,
        client: TimestampAuthorityClient,
        journal: SignatureJournal,
        context: CommandContext
    ) async throws -> TimestampUpgrade {
        let original = try context.readInputFile(path, what: "signature")
        let result = try await SignatureTimestamper.addTimestamps(to: original, authority: client)
        let tokens = result.addedTokens.compactMap { $0 }
        var document = TimestampResultDocument(
            signature: Format.path(path),
            status: tokens.isEmpty ? "unchanged" : "timestamped",
            signers: result.addedTokens.count,
            timestamps: tokens.map { AddedTimestampDocument(time: Format.isoDate($0.time), tsa: $0.authority) }
        )
        guard !tokens.isEmpty else { return TimestampUpgrade(added: 0, times: "", document: document) }
        // Signatures are public artifacts: 0644 (less the umask), written atomically, PEM when they were.
        try FileSystem.writeAtomically(path, SignaturePEM.encoding(result.signature, like: original), mode: 0o644)
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        var updated = 0
        for var record in try await journal.records() {
            guard case .file(let url) = record.storage, url.standardizedFileURL.path == absolute else { continue }
            record.format = .cadesT
            try await journal.update(record)
            updated += 1
        }
        document.journalRowsUpdated = updated
        return TimestampUpgrade(
            added: tokens.count,
            times: tokens.map { "\(Format.localDate($0.time)) by \($0.authority)" }.joined(separator: "; "),
            document: document
        )
    }
}

extension CommandContext {
    /// The fetcher for TSA, OCSP and CRL requests: the package transport with clear-text http
    /// allowed to any host, because these objects are signed and checked after they arrive and
    /// nothing secret is sent (see `TransportBinaryFetcher`).
    func binaryFetcher() throws -> TransportBinaryFetcher {
        TransportBinaryFetcher(
            transport: try CurlTransport(
                configuration: .init(endpointPolicy: RemoteEndpointPolicy(allowsInsecureHTTP: true))
            )
        )
    }

    /// The TSA client of `--tsa URL [--tsa-ca FILE]...` (the URL checked, and `--tsa-ca` only with
    /// `--tsa`, when the command line was parsed), or nil without `--tsa`. The TSA's certificate must
    /// lead to the `--tsa-ca` anchors when there are any; else to the system store or, for the
    /// long-term levels, to the `--ca` anchors (`ca`), which `verify` trusts for
    /// timestamps too.
    func timestampClient(
        _ url: URL?,
        anchors: [String],
        ca: [String] = []
    ) throws
        -> TimestampAuthorityClient?
    {
        guard let url else { return nil }
        let replacesSystemStore = !anchors.isEmpty
        return TimestampAuthorityClient(
            configuration: .init(
                url: url,
                trustAnchors: replacesSystemStore
                    ? try timestampAnchors(anchors) : try certificates(inFiles: ca, option: "--ca"),
                trustAnchorsReplaceSystemStore: replacesSystemStore
            ),
            fetcher: try binaryFetcher()
        )
    }

    /// A validation data collector for one run (one revocation cache: each distinct certificate is
    /// asked for once): paths end at the certificates of `anchorFiles` (`--ca`) or at a self-signed
    /// root, and may go through those of `certificateFiles` (`--tsa-ca`).
    /// - Parameters:
    ///   - crlFiles: CRLs (PEM or DER) to use before fetching any (`sign --crl`).
    ///   - ocspResponseFiles: DER OCSP responses to use before asking any responder
    ///     (`sign --ocsp-response`).
    /// - Throws: `.malformedInput` naming a file that is not a CRL or not an OCSP response.
    func validationDataCollector(
        anchorFiles: [String],
        certificateFiles: [String],
        crlFiles: [String] = [],
        ocspResponseFiles: [String] = []
    ) throws -> ValidationDataCollector {
        var crls: [CertificateRevocationList] = []
        for file in crlFiles {
            do {
                crls += try CertificateRevocationList.lists(derOrPEM: try readInputFile(file, what: "CRL file"))
            } catch let error as CertificateProviderError where error.code == .malformedInput {
                throw CertificateProviderError(.malformedInput, "--crl \(file): \(error.reason)")
            }
        }
        var responses: [[UInt8]] = []
        for file in ocspResponseFiles {
            let bytes = try readInputFile(file, what: "OCSP response file")
            guard RevocationOpenSSL.isOCSPResponse(bytes) else {
                throw CertificateProviderError(
                    .malformedInput,
                    "--ocsp-response \(file) is not a DER OCSP response (as openssl ocsp -respout writes one)"
                )
            }
            responses.append(bytes)
        }
        return ValidationDataCollector(
            cache: RevocationDataCache(fetcher: try binaryFetcher(), crls: crls, ocspResponses: responses),
            trustAnchors: try certificates(inFiles: anchorFiles, option: "--ca"),
            certificates: try certificates(inFiles: certificateFiles, option: "--tsa-ca")
        )
    }

    /// The certificates of every `--tsa-ca FILE`.
    func timestampAnchors(_ files: [String]) throws -> [Certificate] {
        try certificates(inFiles: files, option: "--tsa-ca")
    }

    /// The certificates (PEM or DER, bundles allowed) of every file given with `option` (`--ca`,
    /// `--tsa-ca`).
    /// - Throws: `.malformedInput` naming the option and the file when one is empty or holds no
    ///   certificate; the file errors of ``readInputFile(_:what:)``.
    func certificates(inFiles files: [String], option: String) throws -> [Certificate] {
        var certificates: [Certificate] = []
        for file in files {
            let bytes = try readInputFile(file, what: "\(option) certificate file")
            do {
                certificates += try Certificate.certificates(derOrPEM: bytes)
            } catch let error as CertificateProviderError where error.code == .malformedInput {
                throw CertificateProviderError(.malformedInput, "\(option) \(file): \(error.reason)")
            }
        }
        return certificates
    }

    /// Applies `--crl FILE...`, `--check-revocation`, `--revocation-max-age DURATION` and
    /// `--tsa-ca FILE...` to a verification policy.
    func applyRevocationOptions(
        crls: [String],
        checkRevocation: Bool,
        maximumAge: TimeInterval? = nil,
        timestampAnchorFiles: [String],
        to policy: inout ValidationPolicy
    ) throws {
        if let maximumAge { policy.revocationMaximumAge = maximumAge }
        for file in crls {
            let bytes = try readInputFile(file, what: "CRL file")
            do {
                _ = try CertificateRevocationList.lists(derOrPEM: bytes)
            } catch let error as CertificateProviderError where error.code == .malformedInput {
                throw CertificateProviderError(.malformedInput, "--crl \(file): \(error.reason)")
            }
            policy.crls.append(bytes)
        }
        policy.checkRevocation = checkRevocation
        let anchors = try timestampAnchors(timestampAnchorFiles)
        if !anchors.isEmpty { policy.timestampTrustAnchors = anchors }
    }

    /// Verifies with the policy; with `checkRevocation` the OCSP / CRL answers are fetched first
    /// (10 s and 256 KiB per OCSP answer, 16 MiB per CRL).
    func verify(
        signature: [UInt8],
        content: Document?,
        trust: [Certificate],
        policy: ValidationPolicy,
        coordinator: SigningCoordinator
    ) async throws -> VerificationResult {
        guard policy.checkRevocation else {
            return try await coordinator.verify(signature: signature, content: content, trust: trust, policy: policy)
        }
        return try await CMSVerifier.verify(
            signature: signature,
            content: content,
            trustAnchors: trust,
            policy: policy,
            fetcher: try binaryFetcher()
        )
    }
}
