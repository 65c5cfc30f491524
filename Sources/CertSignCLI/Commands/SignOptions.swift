import CertificateProviders
import Foundation
import PDFSigning
import Signing

/// The options of `certsign sign`.
extension Commands {
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
        /// The providers' key source options given (`identity` → the alias), by name.
        var keySources: [String: String] = [:]
        var provider: ProviderID?
        var parameters = ProviderParameterInput()
        var password = SecretInput()
        var out: String?
        var outputDirectory: String?
        var replaceIdentity = false
        var force = false
        var skipExisting = false
        var verbose = false
        var attached = false
        var pem = false
        var format = Format.cades
        var digest: DigestAlgorithm?
        var tsa: URL?
        var tsaCA: [String] = []
        var level: SignatureLevel?
        var ca: [String] = []
        var crl: [String] = []
        var ocspResponse: [String] = []
        var field: String?
        var reason: String?
        var location: String?
        var inPlace = false
        var vri = false
        var appearance = AppearanceArguments()
        var certify: PDFDocMDPPermission?
        var approval = ApprovalWaitArguments()

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
            keyOptions + outputOptions + formatOptions + longTermOptions + pdfOptions + certificationOptions
                + appearanceOptions + approvalOptions
        }

        /// Where the key comes from (one of the providers' key sources or --provider) and what unlocks it.
        private static var keyOptions: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = Commands.keySources.map { source in
                .value(
                    \.keySources[source.name],
                    "--\(source.name)",
                    source.placeholder,
                    source.summary,
                    type: source.type.declared,
                    group: "key"
                ) { text in
                    do {
                        try source.check(text)
                    } catch let error as ProviderCommand.UsageError {
                        throw InvalidValue(message: error.message)
                    }
                    return text
                }
            }
            options += [
                .value(
                    \.provider,
                    "--provider",
                    "ID",
                    "sign with any registered provider ('certsign providers'), configured with --param,\n--param-env "
                        + "and --param-file; what you give is what it uses, also when it holds a session",
                    group: "key"
                ) { ProviderID($0) }
            ]
            options += .providerParameters(\.parameters)
            options += .password(\.password, "the password")
            return options
        }

        /// Where the signatures go and what happens to files that exist.
        private static var outputOptions: [OptionBinding<Self>] {
            [
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
                    \.force,
                    "--force",
                    "replace signature files that exist already (atomically; the journal's rows for them are "
                        + "replaced too);\nwithout it, sign refuses before signing anything and names them"
                ),
                .flag(
                    \.skipExisting,
                    "--skip-existing",
                    "sign only the documents whose signature file does not exist yet (resumes an interrupted batch)"
                ),
                .flag(\.verbose, "--verbose", "also name each document --skip-existing skips (else only their count)"),
                .flag(
                    \.replaceIdentity,
                    "--replace-identity",
                    "let '--provider pkcs12 --param file=…' replace an identity stored under the same alias\n(it "
                        + "stores what it opens, and says where)"
                ),
            ]
        }

        /// The signature's container and digest.
        private static var formatOptions: [OptionBinding<Self>] {
            [
                .flag(\.attached, "--attached", "embed the document in the signature (default: detached)"),
                .flag(
                    \.pem,
                    "--pem",
                    "write the CMS signature PEM-armoured (-----BEGIN CMS-----, as openssl cms -outform PEM);\n"
                        + "the file name stays NAME.p7s"
                ),
                .choice(
                    \.format,
                    "--format",
                    "FORMAT",
                    "cms (plain CMS SignedData), cades (CAdES-BES; cades-bes is the same) or pades (inside the PDF: "
                        + "PAdES B-B,\nB-T with --tsa; NAME-signed.pdf beside each PDF, or --out / --out-dir / "
                        + "--in-place)"
                ),
                .value(
                    \.digest,
                    "--digest",
                    "ALG",
                    "sha256, sha384, sha512, streebog256 or streebog512 (GOST R 34.11-2012)",
                    default: "the key's digest: streebog256/512 for GOST keys, else sha256",
                    convert: ValueConversions.digest
                ),
            ]
        }

        /// Timestamps and the long-term levels (the TSA, the level, the trust anchors embedded).
        private static var longTermOptions: [OptionBinding<Self>] {
            [
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
                    "trust anchors for the TSA's certificate (default: the system store, and with --level b-lt\n"
                        + "or b-lta the --ca anchors)",
                    type: .file
                ),
                .value(
                    \.level,
                    "--level",
                    "LEVEL",
                    "b-b, b-t (a signature timestamp), b-lt (b-t with the certificates and OCSP/CRL answers of the\n"
                        + "signer's and the TSA's paths, fetched now) or b-lta (b-lt with an archive timestamp);\n"
                        + "b-t and up need --tsa; PAdES: b-lt adds a /DSS revision, b-lta a document timestamp after it",
                    default: "b-t with --tsa, else b-b",
                    convert: ValueConversions.level
                ),
                .repeatable(
                    \.ca,
                    "--ca",
                    "FILE",
                    "b-lt, b-lta: the trust anchors the signer's path ends at (PEM or DER; embedded with the path)",
                    type: .file
                ),
                .repeatable(
                    \.crl,
                    "--crl",
                    "FILE",
                    "b-lt, b-lta: a CRL (PEM or DER) to embed for the certificates it covers, before fetching any\n"
                        + "(with the answers for every certificate of the paths at hand, nothing is fetched)",
                    type: .file
                ),
                .repeatable(
                    \.ocspResponse,
                    "--ocsp-response",
                    "FILE",
                    "b-lt, b-lta: a DER OCSP response to embed for the certificate it answers for, before asking\n"
                        + "its responder (openssl ocsp -respout writes one)",
                    type: .file
                ),
            ]
        }

        /// PAdES only: the signature field, its reason and location, in-place output, the DSS's VRI.
        private static var pdfOptions: [OptionBinding<Self>] {
            [
                .value(\.field, "--field", "NAME", "PAdES: the signature field's name (default Signature1, 2, …)"),
                .value(\.reason, "--reason", "TEXT", "PAdES: the reason recorded in the signature"),
                .value(\.location, "--location", "TEXT", "PAdES: the location recorded in the signature"),
                .flag(\.inPlace, "--in-place", "PAdES: replace each PDF with its signed version (atomically)"),
                .flag(\.vri, "--vri", "PAdES b-lt, b-lta: a /VRI entry per signature in the DSS (pyHanko's key)"),
            ]
        }

        func validate() throws {
            guard keySources.count + (provider == nil ? 0 : 1) == 1 else {
                let names = Commands.keySources.map { "--\($0.name)" } + ["--provider"]
                let synopses = Commands.keySources.map { "--\($0.name) \($0.placeholder)" } + ["--provider ID"]
                throw InvalidValue(
                    message: keySources.isEmpty && provider == nil
                        ? "say where the key comes from: \(Help.alternatives(synopses))"
                        : "give only one of \(names.dropLast().joined(separator: ", ")) and \(names.last ?? "")"
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
            if force && skipExisting {
                throw InvalidValue(message: "give either --force (replace existing signatures) or --skip-existing")
            }
            if let level, level != .bB, tsa == nil {
                throw InvalidValue(message: "--level \(level.rawValue) needs a time-stamping authority: give --tsa URL")
            }
            if level == SignatureLevel.bB, tsa != nil {
                throw InvalidValue(message: "--level b-b makes no timestamp: drop --tsa, or ask for --level b-t")
            }
            let longTerm = level.map { $0.rank >= SignatureLevel.bLT.rank } ?? false
            if !ca.isEmpty, !longTerm {
                throw InvalidValue(message: "--ca goes with --level b-lt or b-lta")
            }
            if !crl.isEmpty || !ocspResponse.isEmpty, !longTerm {
                throw InvalidValue(message: "--crl and --ocsp-response go with --level b-lt or b-lta")
            }
            if tsa == nil && !tsaCA.isEmpty {
                throw InvalidValue(message: "--tsa-ca goes with --tsa URL")
            }
            let pades = format == .pades
            if !pades, inPlace || field != nil || reason != nil || location != nil {
                throw InvalidValue(message: "--in-place, --field, --reason and --location go with --format pades")
            }
            try validateAppearance()
            try validateCertification()
            if pades, pem {
                throw InvalidValue(message: "a PAdES signature lives inside the PDF: --pem does not apply")
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
            if pades, inPlace, documents.contains("-") {
                throw InvalidValue(message: "--in-place replaces a PDF file: DOCUMENT '-' (standard input) has none")
            }
            if pades, outputDirectory != nil, documents.contains("-") {
                throw InvalidValue(
                    message: "DOCUMENT '-' (standard input) has no name for --out-dir: give --out FILE, or --out - "
                        + "for standard output"
                )
            }
        }
    }
}
