import CSCProvider
import CertificateProviders
import Foundation
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
            clientIdentityLookup: context.clientIdentityLookup
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
