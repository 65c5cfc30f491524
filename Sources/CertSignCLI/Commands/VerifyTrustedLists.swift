import CertificateProviders
import Foundation
import PDFSigning
import Signing
import TrustedLists
import ValidationReporting

/// Where `verify` and `trust show` take EU trusted lists from: `--trusted-list` files, or the
/// verified cache `trust refresh` fills (`verify --trust eu [--cache DIR]`, `trust show --cache DIR`).
struct TrustedListSelection: Sendable {
    /// The `--trusted-list` files.
    var files: [String] = []
    /// The `--lotl-signer` certificate files.
    var signers: [String] = []
    /// `--cache DIR` (nil: the default directory).
    var cache: String?
    /// Whether the lists come from the cache.
    var usesCache = false

    /// Whether any trusted list is asked for.
    var isEmpty: Bool { files.isEmpty && !usesCache }
}

/// `verify --trusted-list FILE… --lotl-signer CERT…` or `verify --trust eu`: EU trusted lists as
/// the signers' trust anchors.
extension Commands {
    /// The trusted-list options of `verify` and `trust show`.
    static func trustedListOptions<Options: CommandOptions>(
        _ selection: WritableKeyPath<Options, TrustedListSelection>
    ) -> [OptionBinding<Options>] {
        [
            .repeatable(
                selection.appending(path: \.files),
                "--trusted-list",
                "FILE",
                "an EU trusted list (ETSI TS 119 612 XML): the list of the lists (LOTL), whose TLs are then\n"
                    + "the further --trusted-list files and are checked with the certificates its pointers\n"
                    + "name, or a TL alone; its CA services anchor signers' chains, each judged by the\n"
                    + "service's status at the time the chain is checked at",
                type: .file
            ),
            .repeatable(
                selection.appending(path: \.signers),
                "--lotl-signer",
                "CERT",
                "the LOTL's signing certificate (PEM or DER; for a TL given alone, its signer's; with the cache,\n"
                    + "instead of those `trust refresh` stored)",
                type: .file
            ),
            cacheOption(selection.appending(path: \.cache)),
        ]
    }

    /// The cross-option rules of `--trusted-list`, `--lotl-signer`, `--cache` and `--trust eu`.
    static func validateTrustedListOptions(_ selection: TrustedListSelection, noChainCheck: Bool = false) throws {
        if !selection.files.isEmpty && selection.usesCache {
            throw InvalidValue(
                message: "--trusted-list and --trust eu contradict each other: give the lists, or use the cache"
            )
        }
        if !selection.files.isEmpty && selection.signers.isEmpty {
            throw InvalidValue(
                message: "--trusted-list needs --lotl-signer CERT: the certificate that signs the list of the lists "
                    + "(or the TL given alone)"
            )
        }
        if selection.isEmpty && !selection.signers.isEmpty {
            throw InvalidValue(message: "--lotl-signer checks trusted lists: give them with --trusted-list FILE")
        }
        if selection.cache != nil && !selection.usesCache {
            throw InvalidValue(message: "--cache DIR is where --trust eu reads the trusted lists: add --trust eu")
        }
        if !selection.isEmpty && noChainCheck {
            throw InvalidValue(
                message: "\(selection.usesCache ? "--trust eu" : "--trusted-list") and --no-chain-check contradict "
                    + "each other"
            )
        }
    }

    /// The lists `selection` names, verified at `time`; nil when it names none.
    static func loadTrustedLists(
        _ selection: TrustedListSelection,
        at time: Date,
        context: CommandContext
    ) throws -> TrustedListSet? {
        if selection.usesCache {
            let signers =
                selection.signers.isEmpty
                ? nil : try context.certificates(inFiles: selection.signers, option: "--lotl-signer")
            let cache = trustedListCache(selection.cache)
            do {
                return try cache.load(lotlSigners: signers, at: time)
            } catch let error as TrustedListError {
                let refresh = "certsign trust refresh --lotl URL --cache \(cache.directory.path)"
                throw CertificateProviderError(
                    CertificateProviderError.Code(error.code.rawValue),
                    error.code == .cacheEmpty
                        ? "\(error.reason): run `\(refresh)`"
                        : "the trusted-list cache is refused: \(error.reason); run `\(refresh)` to update it"
                )
            }
        }
        guard !selection.files.isEmpty else { return nil }
        let signers = try context.certificates(inFiles: selection.signers, option: "--lotl-signer")
        do {
            return try TrustedListSet.load(
                files: selection.files.map { URL(fileURLWithPath: $0) },
                lotlSigners: signers,
                at: time
            )
        } catch let error as TrustedListError {
            throw CertificateProviderError(CertificateProviderError.Code(error.code.rawValue), error.reason)
        }
    }
}

extension Commands {
    /// Each valid signer's qualification (its chain checked), decided by the `--trusted-list`
    /// services at the time its chain was checked at; nil without lists.
    static func qualificationDocuments(
        _ result: VerificationResult,
        _ lists: TrustedListSet?
    )
        -> [QualificationDocument]?
    {
        guard let lists else { return nil }
        return result.signers.enumerated().compactMap { index, signer -> QualificationDocument? in
            guard signer.isValid, signer.chainChecked, let certificate = signer.signerCertificate else { return nil }
            let time = signer.checkedAt ?? result.validationTime
            let qualification = lists.qualification(of: certificate, chain: signer.chain, at: time)
            var timestampService: String?
            var timestampQualified: Bool?
            var timestampAnchor: TrustServiceReferenceDocument?
            if let timestamp = signer.timestamp, timestamp.indication == .passed, let tsa = timestamp.tsa {
                timestampService = lists.qualifiedTimestampService(for: tsa, at: timestamp.time)?.name
                timestampQualified = timestampService != nil
                timestampAnchor = lists.service(anchoring: tsa, types: TrustedListSet.timestampServiceTypes).map {
                    TrustServiceReferenceDocument($0.service, in: $0.list)
                }
            }
            return QualificationDocument(
                signer: index + 1,
                level: qualification.level.rawValue,
                reason: qualification.reason,
                service: qualification.service?.name,
                timestampQualified: timestampQualified,
                timestampService: timestampService,
                anchor: signer.chain.last.flatMap { lists.service(anchoring: $0) }.map {
                    TrustServiceReferenceDocument($0.service, in: $0.list)
                },
                timestampAnchor: timestampAnchor
            )
        }
    }

    /// `qualification: LEVEL — reason` (and `timestamp: qualified (QTST "…")`) for each document.
    static func qualificationText(_ documents: [QualificationDocument]?, signers: Int) -> String {
        (documents ?? []).map { document in
            let prefix = signers > 1 ? "signer \(document.signer): " : ""
            var text = "\nqualification: \(prefix)\(document.level) — \(Format.printable(document.reason))"
            if let anchor = document.anchor { text += "\ntrust anchor: \(prefix)trusted-list service \(anchor.text)" }
            if let qualified = document.timestampQualified {
                text +=
                    "\ntimestamp:    \(prefix)"
                    + (qualified
                        ? "qualified (QTST \"\(Format.printable(document.timestampService ?? ""))\")"
                        : "not qualified (no TSA/QTST service of the trusted lists granted then)")
                if let anchor = document.timestampAnchor {
                    text += "\ntimestamp anchor: \(prefix)trusted-list service \(anchor.text)"
                }
            }
            return text
        }.joined()
    }
}

extension Commands {
    /// The report entries of `result`'s signers, each naming the trusted-list services that anchored
    /// its chain and its timestamp's (`documents`: the qualifications computed with the lists).
    static func reportSignatures(
        of result: VerificationResult,
        _ documents: [QualificationDocument]?
    ) -> [ValidationReport.Signature] {
        var signatures = ValidationReport.Signature.signatures(of: result)
        guard signatures.count == result.signers.count else { return signatures }
        for document in documents ?? [] {
            let index = document.signer - 1
            signatures[index].trustServices = trustServices(document, signer: result.signers[index])
        }
        return signatures
    }

    /// The trusted-list services `document` names, for the validation report: the signer's chain's
    /// anchor and its timestamp's.
    static func trustServices(
        _ document: QualificationDocument,
        signer: SignerVerification?
    ) -> [ValidationReport.TrustService] {
        var services: [ValidationReport.TrustService] = []
        if let anchor = document.anchor { services.append(reference(anchor, .signature, anchor: signer?.chain.last)) }
        if let anchor = document.timestampAnchor {
            services.append(reference(anchor, .timestamp, anchor: signer?.timestamp?.tsa))
        }
        return services
    }

    /// A PDF signature judged as a CMS one is with `lists` (each chain by its anchoring service's
    /// status at the time it was checked at), and its qualifications; as it is without lists.
    static func judged(
        _ signature: PDFSignatureReport,
        by lists: TrustedListSet?
    ) -> (PDFSignatureReport, [QualificationDocument]?) {
        guard let lists, signature.kind != .documentTimestamp else { return (signature, nil) }
        var judged = signature
        judged.verification = lists.judge(signature.verification)
        return (judged, qualificationDocuments(judged.verification, lists))
    }

    /// The lines of ``qualificationText(_:signers:)`` for one signature.
    static func qualificationLines(_ documents: [QualificationDocument]?) -> [String] {
        qualificationText(documents, signers: 1).split(separator: "\n").map(String.init)
    }

    private static func reference(
        _ document: TrustServiceReferenceDocument,
        _ purpose: ValidationReport.TrustService.Purpose,
        anchor: Certificate?
    ) -> ValidationReport.TrustService {
        ValidationReport.TrustService(
            purpose: purpose,
            name: document.service,
            typeURI: document.typeURI,
            territory: document.territory,
            anchor: anchor
        )
    }
}
