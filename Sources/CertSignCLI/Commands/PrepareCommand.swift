import CertificateProviders
import Foundation
import PDFSigning
import Signing

/// `certsign prepare`: two-phase signing, first half. Each document's signature is built without the
/// key and kept in a `.pending` file; the value is made elsewhere and put in by `certsign complete`.
extension Commands {
    static let pendingSigningCommands: [CommandDescriptor] = [
        prepare, complete, pendingList, pendingShow, pendingCancel, pendingResume, worker,
    ]

    static var prepareUsage: String { prepare.usage }

    /// `certsign prepare DOCUMENT... --certificate FILE …`.
    struct PrepareOptions: CommandOptions {
        /// `--format`: the words of `sign --format`.
        enum Format: String, CaseIterable, Sendable {
            case cms
            case cades
            case cadesBES = "cades-bes"
            case pades
        }

        /// `--scheme`.
        enum Scheme: String, CaseIterable, Sendable {
            case rsaPKCS1v15 = "rsa-pkcs1v15"
            case rsaPSS = "rsa-pss"
        }

        var documents: [String] = []
        var certificate = ""
        var chain: [String] = []
        var format = Format.cades
        var attached = false
        var digest: DigestAlgorithm?
        var scheme: Scheme?
        var level: SignatureLevel?
        var tsa: URL?
        var tsaCA: [String] = []
        var ca: [String] = []
        var field: String?
        var reason: String?
        var location: String?
        var outputDirectory: String?

        static var arguments: [ArgumentBinding<Self>] {
            [
                .many(
                    \.documents,
                    "DOCUMENT",
                    "a file to prepare a signature of (a PDF with --format pades)",
                    type: .file
                )
            ]
        }

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.certificate,
                    "--certificate",
                    "FILE",
                    "the signer's certificate (PEM or DER; certificates after the first go with it as its chain)",
                    type: .file,
                    required: true,
                    default: .none
                ) { $0 },
                .repeatable(
                    \.chain,
                    "--chain",
                    "FILE",
                    "more certificates of the signer's chain (PEM or DER)",
                    type: .file
                ),
                .choice(
                    \.format,
                    "--format",
                    "FORMAT",
                    "cms, cades (CAdES-BES, a .p7s; cades-bes is the same) or pades (inside the PDF, completed as\n"
                        + "NAME-signed.pdf or in place)"
                ),
                .flag(\.attached, "--attached", "cades: embed the document (complete reads it again)"),
                .value(
                    \.digest,
                    "--digest",
                    "ALG",
                    "sha256, sha384, sha512, streebog256 or streebog512",
                    default: "the key's digest: streebog256/512 for GOST keys, else sha256",
                    convert: ValueConversions.digest
                ),
                .value(
                    \.scheme,
                    "--scheme",
                    "SCHEME",
                    "how an RSA key signs: rsa-pkcs1v15 or rsa-pss",
                    type: .choice(Scheme.allCases.map(\.rawValue)),
                    default: "the key's: rsa-pkcs1v15, ecdsa or GOST"
                ) { text in
                    guard let scheme = Scheme(rawValue: text) else {
                        throw InvalidValue(message: "unknown --scheme '\(text)' (rsa-pkcs1v15 or rsa-pss)")
                    }
                    return scheme
                },
            ] + completionOptions
        }

        /// The level `complete` adds, where the pending files go, and the PDF's signature field.
        private static var completionOptions: [OptionBinding<Self>] {
            [
                .value(
                    \.level,
                    "--level",
                    "LEVEL",
                    "the level complete adds: b-b, b-t, b-lt or b-lta (b-t and up need --tsa)",
                    default: "b-t with --tsa, else b-b",
                    convert: ValueConversions.level
                ),
                .value(
                    \.tsa,
                    "--tsa",
                    "URL",
                    "the RFC 3161 TSA complete asks (pades: its token's room is reserved now)",
                    type: .url,
                    convert: ValueConversions.timestampAuthority
                ),
                .repeatable(\.tsaCA, "--tsa-ca", "FILE", "trust anchors for the TSA's certificate", type: .file),
                .repeatable(
                    \.ca,
                    "--ca",
                    "FILE",
                    "b-lt, b-lta: the trust anchors the signer's path ends at",
                    type: .file
                ),
                .value(\.field, "--field", "NAME", "pades: the signature field's name (default Signature1, 2, …)"),
                .value(\.reason, "--reason", "TEXT", "pades: the reason recorded in the signature"),
                .value(\.location, "--location", "TEXT", "pades: the location recorded in the signature"),
                .value(
                    \.outputDirectory,
                    "--out-dir",
                    "DIR",
                    "write each DIR/NAME.pending (default: NAME.pending beside the document)",
                    type: .directory
                ),
            ]
        }

        func validate() throws {
            if documents.contains("-") {
                throw InvalidValue(message: "prepare reads files: '-' (standard input) does not apply")
            }
            if let level, level != .bB, tsa == nil {
                throw InvalidValue(message: "--level \(level.rawValue) needs a time-stamping authority: give --tsa URL")
            }
            if level == .bB, tsa != nil {
                throw InvalidValue(message: "--level b-b makes no timestamp: drop --tsa, or ask for --level b-t")
            }
            if tsa == nil, !tsaCA.isEmpty { throw InvalidValue(message: "--tsa-ca goes with --tsa URL") }
            if !ca.isEmpty, (level?.rank ?? 0) < SignatureLevel.bLT.rank {
                throw InvalidValue(message: "--ca goes with --level b-lt or b-lta")
            }
            if format == .pades, attached {
                throw InvalidValue(message: "a PAdES signature lives inside the PDF: --attached does not apply")
            }
            if format != .pades, field != nil || reason != nil || location != nil {
                throw InvalidValue(message: "--field, --reason and --location go with --format pades")
            }
        }
    }

    static let prepare = CommandDescriptor(
        words: ["prepare"],
        summary: "prepare signatures whose value is made elsewhere (two-phase signing): writes NAME.pending",
        discussion: """
            No key is needed: --certificate says whose signature it will be. For each DOCUMENT the signed
            attributes (and, for --format pades, the PDF's incremental update with its /ByteRange fixed) are
            built once and written to NAME.pending (mode 0600, atomically; the document is left as it is), and
            the digest to sign and the data to sign are printed as hex and base64 with their algorithm. Sign
            the digest where the key is (openssl pkeyutl -sign, a phone, a smart card), then finish with
            'certsign complete NAME.pending --signature-value FILE'. The level (--level, --tsa, --ca) is added
            on completion. An existing NAME.pending is refused: complete it or cancel it first.
            """,
        examples: [
            "certsign prepare contract.pdf --format pades --certificate signer.pem",
            "certsign prepare report.txt --certificate signer.pem --scheme rsa-pss --level b-t --tsa http://tsa.example/tsr",
            "certsign complete contract.pdf.pending --signature-value contract.pdf.sig",
        ]
    ) { (options: PrepareOptions, context) in
        try await runPrepare(options, context)
    }
}
