import CSCProvider
import CertificateProviders
import Foundation
import PKCS12Provider
import SignatureJournal
import Signing

/// `certsign csc …`: a Cloud Signature Consortium API v2 service. Signing goes through
/// `certsign sign DOC… --provider csc --param …`.
extension Commands {
    static let cscCommands: [CommandDescriptor] = [cscCredentials]

    static var cscCredentialsUsage: String { cscCredentials.usage }

    /// `certsign csc credentials --param …`.
    struct CSCCredentialsOptions: CommandOptions {
        var parameters = ProviderParameterInput()

        static var options: [OptionBinding<Self>] { .providerParameters(\.parameters) }
    }

    static let cscCredentials = CommandDescriptor(
        words: ["csc", "credentials"],
        summary: "list the credentials of a CSC API v2 signing service",
        discussion: """
            Lists every credential of the OAuth client with its certificate subject, key, SCAL and what
            authorizing it asks for (PIN, OTP). Parameters as for 'certsign sign --provider csc': url and
            clientID (required), clientSecret (secret: --param-env or --param-file only), trustedCAFile,
            clientIdentity with clientIdentityPassword, allowInsecureHTTP, timeout.
            """,
        examples: [
            """
            certsign csc credentials --param url=https://csc.example.eu --param clientID=Leonid \\
                       --param-env clientSecret=CSC_SECRET
            """
        ]
    ) { (options: CSCCredentialsOptions, context) in
        let parameters = try context.providerParameters(options.parameters, for: .csc)
        guard parameters[CSCProvider.ParameterKey.url] != nil, parameters[CSCProvider.ParameterKey.clientID] != nil
        else {
            throw UsageError(message: "--param url=… and --param clientID=… are required", usage: cscCredentialsUsage)
        }
        let provider = try CSCProvider(
            parameters: parameters,
            clientIdentityLookup: { alias, password in
                try context.identityStore.identity(alias: alias, password: password)
            }
        )
        let credentials = try await provider.credentials()
        let rows = credentials.map { credential -> [String] in
            [
                credential.id, credential.certificate?.subject ?? "-",
                "\(credential.certificate?.publicKeyAlgorithm.description ?? "?") \(credential.keyLength)",
                String(credential.scal), credential.authSummary,
            ]
        }
        let json = credentials.map { credential in
            CredentialsDocument.Credential(
                id: credential.id,
                subject: credential.certificate?.subject ?? "",
                issuer: credential.certificate?.issuer ?? "",
                key: credential.certificate?.publicKeyAlgorithm.description ?? "",
                keyLength: credential.keyLength,
                keyStatus: credential.keyStatus,
                algorithms: credential.keyAlgorithms,
                scal: credential.scal,
                authMode: credential.authMode,
                auth: credential.authObjects.map(\.id),
                multisign: credential.multisign
            )
        }
        context.emit(
            encoding: CredentialsDocument(credentials: json),
            human: credentials.isEmpty
                ? "no credentials" : Format.table(["ID", "SUBJECT", "KEY", "SCAL", "AUTH"], rows)
        )
        return CertSign.exitSuccess
    }
}

extension Commands {
    /// `certsign sign DOC…` with a key that signs in batches (a CSC credential): the documents are
    /// signed in chunks of the key's `maximumBatchSize` per output directory, each chunk with one
    /// authorization (one PIN / OTP use) through `SigningCoordinator.sign(documents:)`. Output, JSON
    /// and exit code are those of the one-by-one loop; a failing chunk reports each of its documents.
    static func signInBatches(
        _ paths: [String],
        key: any BatchSigningKey,
        coordinator: SigningCoordinator,
        providerID: ProviderID,
        parameters: ProviderParameters,
        options: SigningOptions,
        outputDirectory: String?,
        context: CommandContext
    ) async throws -> Int32 {
        var results: [SignResultDocument] = []
        var failures = 0
        func fail(_ path: String, _ error: CertificateProviderError) {
            failures += 1
            results.append(.failed(Format.path(path), error))
            context.console.err("certsign: \(Format.printable(path)): \(Format.printable(error.reason))")
        }
        // Readable documents grouped by the directory their signature goes to, in order.
        var groups: [(directory: URL, paths: [String])] = []
        for path in paths {
            do {
                _ = try context.documentSize(path)
            } catch let error as CertificateProviderError {
                fail(path, error)
                continue
            }
            let directory =
                outputDirectory.map { URL(fileURLWithPath: $0) }
                ?? URL(fileURLWithPath: path).deletingLastPathComponent()
            if let index = groups.firstIndex(where: { $0.directory == directory }) {
                groups[index].paths.append(path)
            } else {
                groups.append((directory, [path]))
            }
        }
        let chunkSize = max(1, key.maximumBatchSize)
        for group in groups {
            for start in stride(from: 0, to: group.paths.count, by: chunkSize) {
                try Task.checkCancellation()
                let chunk = Array(group.paths[start..<min(start + chunkSize, group.paths.count)])
                do {
                    let signed = try await coordinator.sign(
                        documents: chunk.map { .file(URL(fileURLWithPath: $0)) },
                        provider: providerID,
                        parameters: parameters,
                        options: options,
                        outputDirectory: group.directory
                    )
                    for (path, result) in zip(chunk, signed) {
                        let output = result.outputURL?.path ?? ""
                        results.append(
                            SignResultDocument(
                                document: Format.path(path),
                                status: "signed",
                                signature: Format.path(output),
                                id: result.record.id,
                                signer: result.signerCertificate.subject,
                                format: options.format.rawValue,
                                detached: options.isDetached,
                                digest: result.record.digestAlgorithm.rawValue
                            )
                        )
                        if !context.json {
                            context.console.out("signed \(Format.printable(path)) -> \(Format.printable(output))")
                        }
                    }
                } catch let error as CertificateProviderError {
                    for path in chunk { fail(path, error) }
                }
            }
        }
        if context.json {
            context.console.out(
                JSONOutput.encode(SignDocument(results: results))
            )
        } else {
            context.console.out("\(paths.count - failures) of \(paths.count) documents signed")
        }
        return failures == 0 ? CertSign.exitSuccess : CertSign.exitFailure
    }
}
