public import CertificateProviders
import RemoteProviderSupport

extension CSCProvider {
    /// `certsign csc credentials --param …`: the client's credentials.
    public static var commands: [ProviderCommand] { [credentialsCommand] }

    /// Lists every credential of the OAuth client with its certificate, key, SCAL and authorization.
    static let credentialsCommand = ProviderCommand(
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
        ],
        takesParameters: true
    ) { invocation in
        let parameters = invocation.parameters
        guard parameters[ParameterKey.url] != nil, parameters[ParameterKey.clientID] != nil else {
            throw ProviderCommand.UsageError("--param url=… and --param clientID=… are required")
        }
        let credentials = try await make(parameters: parameters, context: invocation.context).credentials()
        return ProviderCommand.Output(
            headers: ["ID", "SUBJECT", "KEY", "SCAL", "AUTH"],
            rows: credentials.map { credential in
                [
                    credential.id, credential.certificate?.subject ?? "-",
                    "\(credential.certificate?.publicKeyAlgorithm.description ?? "?") \(credential.keyLength)",
                    String(credential.scal), credential.authSummary,
                ]
            },
            whenEmpty: "no credentials",
            document: CredentialsDocument(credentials: credentials.map(CredentialsDocument.Credential.init))
        )
    }
}

/// `csc credentials --json`: `{"credentials": [CREDENTIAL]}`. Field names are the `CodingKeys`, and
/// the table in docs/JSON.md lists exactly these names (a test compares them).
package struct CredentialsDocument: Encodable, Sendable {
    package struct Credential: Encodable, Sendable {
        var id: String
        var subject: String
        var issuer: String
        var key: String
        var keyLength: Int
        var keyStatus: String
        var algorithms: [String]
        var scal: Int
        var authMode: String
        var auth: [String]
        var multisign: Int
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case id, subject, issuer, key, keyLength, keyStatus, algorithms, scal, authMode, auth, multisign
        }

        init(_ credential: CSCCredential) {
            id = credential.id
            subject = credential.certificate?.subject ?? ""
            issuer = credential.certificate?.issuer ?? ""
            key = credential.certificate?.publicKeyAlgorithm.description ?? ""
            keyLength = credential.keyLength
            keyStatus = credential.keyStatus
            algorithms = credential.keyAlgorithms
            scal = credential.scal
            authMode = credential.authMode
            auth = credential.authObjects.map(\.id)
            multisign = credential.multisign
        }
    }
    var credentials: [Credential]
    package enum CodingKeys: String, CodingKey, CaseIterable { case credentials }
}
