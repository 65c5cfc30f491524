import CertificateProviders
import CSCProvider
import Foundation
import PKCS12Provider

/// `certsign csc …`: a Cloud Signature Consortium API v2 service. Signing goes through
/// `certsign sign DOC… --provider csc --param …`.
extension Commands {
    static let cscCommands: [CommandDescriptor] = [cscCredentials]

    static let cscCredentialsUsage = "certsign csc credentials --param url=URL --param clientID=ID --param-env clientSecret=VAR [--param trustedCAFile=PEM] [--param allowInsecureHTTP=true]"

    static let cscCredentials = CommandDescriptor(
        words: ["csc", "credentials"], summary: "list the credentials of a CSC API v2 signing service",
        usage: cscCredentialsUsage,
        details: """
        Lists every credential of the OAuth client with its certificate subject, key, SCAL and what
        authorizing it asks for (PIN, OTP). Parameters as for 'certsign sign --provider csc': url,
        clientID, clientSecret (secret: --param-env or --param-file only), trustedCAFile,
        clientIdentity with clientIdentityPassword, allowInsecureHTTP, timeout.
        example: certsign csc credentials --param url=https://csc.example.eu --param clientID=Leonid \\
                   --param-env clientSecret=CSC_SECRET
        """,
        spec: OptionSpec(repeatable: ["--param", "--param-env", "--param-file"])
    ) { parsed, context in
        let parameters = try context.providerParameters(parsed)
        guard parameters[CSCProvider.ParameterKey.url] != nil, parameters[CSCProvider.ParameterKey.clientID] != nil else {
            throw UsageError(message: "--param url=… and --param clientID=… are required", usage: cscCredentialsUsage)
        }
        let provider = CSCProvider(parameters: parameters, clientIdentityResolver: { alias, password in
            try context.identityStore.identity(alias: alias, password: password)
        })
        let credentials = try await provider.credentials()
        let rows = credentials.map { credential -> [String] in
            [credential.id, credential.certificate?.subject ?? "-",
             "\(credential.certificate?.publicKeyAlgorithm.description ?? "?") \(credential.keyLength)",
             String(credential.scal), credential.authSummary]
        }
        let json: [[String: Any]] = credentials.map { credential in
            ["id": credential.id, "subject": credential.certificate?.subject ?? "", "issuer": credential.certificate?.issuer ?? "",
             "key": credential.certificate?.publicKeyAlgorithm.description ?? "", "keyLength": credential.keyLength,
             "keyStatus": credential.keyStatus, "algorithms": credential.keyAlgorithms, "scal": credential.scal,
             "authMode": credential.authMode, "auth": credential.authObjects.map(\.id), "multisign": credential.multisign]
        }
        context.emit(["credentials": json],
                     human: credentials.isEmpty ? "no credentials" : Format.table(["ID", "SUBJECT", "KEY", "SCAL", "AUTH"], rows))
        return CertSign.exitSuccess
    }
}
