import CertificateProviders
import Foundation
import HTTPClient
import RemoteProviderSupport

/// `certsign dss login`: authenticates against the platform and keeps the session.
extension FMPDSSProvider {
    /// `certsign dss login --host URL …`.
    static let loginCommand = ProviderCommand(
        words: ["dss", "login"],
        summary: "authenticate to a Foresight Mobile Platform and keep the session",
        discussion: """
            The session (host, environment, project, device, tokens) is kept 0600 in the store as
            fmp-session.json, so the other dss commands need no connection flags. http:// is refused
            except on loopback unless --allow-insecure-http is given. The CA file, the alias and where the
            identity password comes from (the variable's name or the file's path, never the password) are
            kept with the session for the other dss commands.
            """,
        examples: [
            """
            certsign dss login --host https://fmp.example.ru --environment Leonid_environment \\
                       --project Leonid_project --user Leonid --password-env FMP_PASSWORD
            """
        ],
        options: [
            .init("host", .value(placeholder: "URL", type: .url), "the platform's address (https://…)", required: true),
            .init(
                "api-version",
                .value(placeholder: "V"),
                "the platform API version",
                default: schema[ParameterKey.apiVersion]?.defaultValue
            ),
            .init("environment", .value(placeholder: "E"), "the platform environment", required: true),
            .init("project", .value(placeholder: "P"), "the platform project", required: true),
            .init(
                "device",
                .value(placeholder: "ID"),
                "the X-Device-Id to send",
                default: "a stable id derived from this machine's id"
            ),
            .init("user", .value(placeholder: "U"), "the platform user name", required: true),
            .init(
                "allow-insecure-http",
                .flag,
                "allow an http:// host that is not loopback (the password then crosses the network in clear)"
            ),
            .init(
                "ca-file",
                .value(placeholder: "FILE", type: .file),
                "PEM CA certificates to trust for the server, besides the system store"
            ),
            .init(
                "client-identity",
                .value(placeholder: "ALIAS"),
                "present this stored identity (certsign identity import) as the TLS client certificate"
            ),
            .init("client-identity-password", .secret(standardInput: false), "the client identity's password"),
            .init("password", .secret(standardInput: true), "the user's platform password"),
        ]
    ) { invocation in
        let login = try LoginValues(invocation)
        let policy = RemoteEndpointPolicy(allowsInsecureHTTP: invocation.flags.contains("allow-insecure-http"))
        try policy.validate(login.host)
        let device = invocation.values["device"] ?? machineDeviceID
        var parameters: ProviderParameters = [
            ParameterKey.host: .url(login.host),
            ParameterKey.environment: .string(login.environment),
            ParameterKey.project: .string(login.project),
            ParameterKey.device: .string(device),
            ParameterKey.username: .string(login.user),
            ParameterKey.allowInsecureHTTP: .boolean(policy.allowsInsecureHTTP),
        ]
        if let version = invocation.values["api-version"] { parameters[ParameterKey.apiVersion] = .string(version) }
        parameters[ParameterKey.password] = .secret(
            try invocation.requiredSecret("password", prompt: "platform password for \(login.user): ")
        )
        let provider = try commandProvider(invocation, parameters, tls: login.tls)
        let result = try await reportingEnvelope(provider) { try await provider.login() }
        try login.tls.save(in: try storeDirectory(of: invocation))
        return ProviderCommand.Output(
            text: "Authentication success (\(login.user) at \(login.host.absoluteString), device \(device))",
            document: envelopeDocument(result.envelope)
        )
    }

    /// What `dss login` was given, checked before anything is read or sent.
    struct LoginValues {
        var host: URL
        var environment: String
        var project: String
        var user: String
        var tls: FMPLoginTLS

        /// - Throws: `ProviderCommand.UsageError` naming the option that does not fit.
        init(_ invocation: ProviderCommand.Invocation) throws {
            let text = try invocation.requiredValue("host")
            guard let host = URL(string: text), let scheme = host.scheme?.lowercased(),
                ["http", "https"].contains(scheme),
                host.host != nil
            else {
                throw ProviderCommand.UsageError("--host must be an http:// or https:// URL, not '\(text)'")
            }
            self.host = host
            environment = try invocation.requiredValue("environment")
            project = try invocation.requiredValue("project")
            user = try invocation.requiredValue("user")
            let passwordSource = invocation.secretSources["client-identity-password"]
            let alias = invocation.values["client-identity"]
            if alias == nil, passwordSource != nil {
                throw ProviderCommand.UsageError("--client-identity-password-env/-file need --client-identity ALIAS")
            }
            let caFile = invocation.values["ca-file"].map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            guard caFile != nil || alias != nil else {
                tls = FMPLoginTLS()
                return
            }
            var tls = FMPLoginTLS(trustedCAFile: caFile, clientIdentity: alias)
            switch passwordSource {
            case .environment(let variable): tls.clientIdentityPasswordEnv = variable
            case .file(let path): tls.clientIdentityPasswordFile = URL(fileURLWithPath: path).standardizedFileURL.path
            case .standardInput, nil: break
            }
            self.tls = tls
        }
    }
}
