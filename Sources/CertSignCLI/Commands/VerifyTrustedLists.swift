import CertificateProviders
import Foundation
import Signing
import TrustedLists

/// `verify --trusted-list FILE… --lotl-signer CERT…`: EU trusted lists as the signers' trust anchors.
extension Commands {
    /// The trusted-list options of `verify` (and the lists `trust show` reads).
    static func trustedListOptions<Options: CommandOptions>(
        _ lists: WritableKeyPath<Options, [String]>,
        _ signers: WritableKeyPath<Options, [String]>
    ) -> [OptionBinding<Options>] {
        [
            .repeatable(
                lists,
                "--trusted-list",
                "FILE",
                "an EU trusted list (ETSI TS 119 612 XML): the list of the lists (LOTL), whose TLs are then\n"
                    + "the further --trusted-list files and are checked with the certificates its pointers\n"
                    + "name, or a TL alone; its CA services anchor signers' chains, each judged by the\n"
                    + "service's status at the time the chain is checked at",
                type: .file
            ),
            .repeatable(
                signers,
                "--lotl-signer",
                "CERT",
                "the LOTL's signing certificate (PEM or DER; for a TL given alone, its signer's)",
                type: .file
            ),
        ]
    }

    /// The cross-option rules of `--trusted-list` and `--lotl-signer`.
    static func validateTrustedListOptions(lists: [String], signers: [String], noChainCheck: Bool = false) throws {
        if !lists.isEmpty && signers.isEmpty {
            throw InvalidValue(
                message: "--trusted-list needs --lotl-signer CERT: the certificate that signs the list of the lists "
                    + "(or the TL given alone)"
            )
        }
        if lists.isEmpty && !signers.isEmpty {
            throw InvalidValue(message: "--lotl-signer checks trusted lists: give them with --trusted-list FILE")
        }
        if !lists.isEmpty && noChainCheck {
            throw InvalidValue(message: "--trusted-list and --no-chain-check contradict each other")
        }
    }

    /// Why `verify --trusted-list` does not take a PDF yet: its signatures' chains would be anchored by
    /// every service ever granted without the judgement of each service's status at the chain's time.
    static func trustedListsRefusePDF(_ path: String) -> CertificateProviderError {
        CertificateProviderError(
            .unsupportedOperation,
            "\(path): --trusted-list verifies CMS / CAdES signatures only for now; verify the PDF with --ca"
        )
    }

    /// The lists of `--trusted-list`, verified at `time`; nil when none is given.
    static func loadTrustedLists(
        _ files: [String],
        signerFiles: [String],
        at time: Date,
        context: CommandContext
    ) throws -> TrustedListSet? {
        guard !files.isEmpty else { return nil }
        let signers = try context.certificates(inFiles: signerFiles, option: "--lotl-signer")
        do {
            return try TrustedListSet.load(
                files: files.map { URL(fileURLWithPath: $0) },
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
            if let timestamp = signer.timestamp, timestamp.indication == .passed, let tsa = timestamp.tsa {
                timestampService = lists.qualifiedTimestampService(for: tsa, at: timestamp.time)?.name
                timestampQualified = timestampService != nil
            }
            return QualificationDocument(
                signer: index + 1,
                level: qualification.level.rawValue,
                reason: qualification.reason,
                service: qualification.service?.name,
                timestampQualified: timestampQualified,
                timestampService: timestampService
            )
        }
    }

    /// `qualification: LEVEL — reason` (and `timestamp: qualified (QTST "…")`) for each document.
    static func qualificationText(_ documents: [QualificationDocument]?, signers: Int) -> String {
        (documents ?? []).map { document in
            let prefix = signers > 1 ? "signer \(document.signer): " : ""
            var text = "\nqualification: \(prefix)\(document.level) — \(Format.printable(document.reason))"
            if let qualified = document.timestampQualified {
                text +=
                    "\ntimestamp:    \(prefix)"
                    + (qualified
                        ? "qualified (QTST \"\(Format.printable(document.timestampService ?? ""))\")"
                        : "not qualified (no TSA/QTST service of the trusted lists granted then)")
            }
            return text
        }.joined()
    }
}
