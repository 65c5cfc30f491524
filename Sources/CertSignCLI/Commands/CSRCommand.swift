import CertificateIssuing
import CertificateProviders
internal import Durability
import Foundation

/// `certsign csr`: a PKCS#10 certificate request signed by a provider's key.
extension Commands {
    /// `certsign csr --provider ID <params> --subject DN [--san NAME]… [--digest ALG] [--out FILE]`.
    struct CSROptions: CommandOptions {
        var provider: ProviderID?
        var parameters = ProviderParameterInput()
        var subject: String?
        var subjectAlternativeNames: [String] = []
        var digest: DigestAlgorithm?
        var out: String?

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                .value(
                    \.provider,
                    "--provider",
                    "ID",
                    "the provider whose key signs the request: vault-transit, aws-kms, pkcs11, pkcs12, or any\nprovider that "
                        + "can sign before it has a certificate",
                    required: true
                ) { ProviderID($0) }
            ]
            options += .providerParameters(\.parameters)
            options += [
                .value(
                    \.subject,
                    "--subject",
                    "DN",
                    "the subject, most significant last: \"CN=Иван Петров,O=ООО Ромашка,C=RU\" (UTF-8)",
                    required: true
                ),
                .repeatable(
                    \.subjectAlternativeNames,
                    "--san",
                    "NAME",
                    "a subject alternative name to ask for: DNS:host, email:address, IP:address or URI:uri"
                ),
                .value(
                    \.digest,
                    "--digest",
                    "ALG",
                    "sha256, sha384 or sha512",
                    default: "sha256",
                    convert: ValueConversions.digest
                ),
                .value(
                    \.out,
                    "--out",
                    "FILE",
                    "write the request (PEM) to FILE instead of standard output",
                    type: .file
                ),
            ]
            return options
        }

        func validate() throws {
            guard provider != nil else { throw InvalidValue(message: "--provider ID is required") }
            guard let subject, !subject.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw InvalidValue(message: "--subject DN is required (\"CN=…,O=…\")")
            }
        }
    }

    static var csrUsage: String { csr.usage }

    static let csr = CommandDescriptor(
        words: ["csr"],
        summary: "make a PKCS#10 certificate request signed by a provider's key (for a key without a certificate)",
        discussion: """
            A key in Vault / OpenBao transit or AWS KMS (or on a token, or in a PKCS#12 file) signs a request for
            a certificate; a CA answers it (openssl x509 -req, or a real CA), and the certificate it
            returns is then given to 'certsign sign --provider ID --param certificate=FILE'. Parameters
            as for 'certsign sign --provider ID' (certificate is not needed); secrets only through
            --param-env or --param-file. RSA keys sign the request with PKCS#1 v1.5, EC keys with ECDSA.
            The request is read back and verified with its public key before it is written (--out FILE
            is replaced atomically); on an error nothing is written and the exit code is 1.
            """,
        examples: [
            """
            certsign csr --provider vault-transit --param url=https://vault.example:8200 --param key=docs \\
                       --param-env token=VAULT_TOKEN --subject "CN=Иван Петров,O=ООО Ромашка,C=RU" \\
                       --san email:ivan@example.ru --out docs.csr
            """
        ]
    ) { (options: CSROptions, context) in
        try await runCSR(options, context)
    }

    private static func runCSR(_ options: CSROptions, _ context: CommandContext) async throws -> Int32 {
        let id = options.provider ?? ProviderID("")
        let parameters = try context.providerParameters(options.parameters, for: id)
        if let digest = options.digest, ![DigestAlgorithm.sha256, .sha384, .sha512].contains(digest) {
            throw UsageError(
                message: "--digest for a request is sha256, sha384 or sha512, not \(digest)",
                usage: csrUsage
            )
        }
        if let out = options.out, let problem = unreplaceableOutput(out) {
            throw UsageError(message: "refusing to write the request to \(out): \(problem)", usage: csrUsage)
        }
        let registry = try context.makeRegistry(parameters: [id: parameters])
        let provider = try registry.makeProvider(id)
        guard let requester = provider as? any CertificateRequestSigning else {
            throw CertificateProviderError.unsupportedOperation(
                "the \(id) provider cannot sign a certificate request (its keys come with their certificates); "
                    + "vault-transit, pkcs11 and pkcs12 can"
            )
        }
        let key = try await requester.certificateRequestKey(options: parameters)
        let pem = try await CertificateRequestBuilder.makeRequest(
            subject: options.subject ?? "",
            subjectAlternativeNames: options.subjectAlternativeNames,
            digestAlgorithm: options.digest ?? .sha256,
            key: key
        )
        let fingerprint = HexText.lowercase(DigestAlgorithm.sha256.hash(key.publicKeyDERRepresentation))
        guard let out = options.out else {
            context.console.outBytes(Array(pem.utf8))
            return CertSign.exitSuccess
        }
        // A request is public: 0644 (less the umask), written atomically.
        try FileSystem.writeAtomically(out, Array(pem.utf8), mode: 0o644)
        context.emit(
            encoding: CSRDocument(
                request: Format.path(out),
                provider: id.rawValue,
                subject: options.subject ?? "",
                publicKeyAlgorithm: key.publicKeyAlgorithm.description,
                publicKeySHA256: fingerprint
            ),
            human: "wrote the certificate request for \(options.subject ?? "") (\(key.publicKeyAlgorithm) key, "
                + "SHA-256 \(fingerprint)) to \(Format.path(out))"
        )
        return CertSign.exitSuccess
    }

    /// `certsign --json csr --out FILE`'s answer.
    struct CSRDocument: Encodable {
        /// The request file.
        var request: String
        /// The provider whose key signed it.
        var provider: String
        /// The subject asked for.
        var subject: String
        /// The key's algorithm.
        var publicKeyAlgorithm: String
        /// The SHA-256 of the key's SubjectPublicKeyInfo (hex).
        var publicKeySHA256: String
    }
}
