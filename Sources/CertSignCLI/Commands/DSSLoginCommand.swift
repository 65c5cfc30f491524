import CertificateProviders
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import PKCS12Provider
import RemoteProviderSupport

/// `certsign dss login`: authenticates against the platform and keeps the session.
extension Commands {
    /// `certsign dss login --host URL …`.
    struct DSSLoginOptions: CommandOptions {
        // Required options (--host, --environment, --project, --user) are always set by the parser.
        var host = URL(fileURLWithPath: "/")
        var apiVersion = "v1"
        var environment = ""
        var project = ""
        var device: String?
        var user = ""
        var allowInsecureHTTP = false
        var caFile: String?
        var clientIdentity: String?
        var clientIdentityPassword = SecretInput()
        var password = SecretInput()

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                .value(\.host, "--host", "URL", "the platform's address (https://…)", type: .url, required: true) {
                    text in
                    _ = try ValueConversions.nonEmpty("--host")(text)
                    return try ValueConversions.httpURL(text) {
                        "--host must be an http:// or https:// URL, not '\($0)'"
                    }
                },
                .value(\.apiVersion, "--api-version", "V", "the platform API version"),
                .value(
                    \.environment,
                    "--environment",
                    "E",
                    "the platform environment",
                    required: true,
                    convert: ValueConversions.nonEmpty("--environment")
                ),
                .value(
                    \.project,
                    "--project",
                    "P",
                    "the platform project",
                    required: true,
                    convert: ValueConversions.nonEmpty("--project")
                ),
                .value(
                    \.device,
                    "--device",
                    "ID",
                    "the X-Device-Id to send",
                    default: "a stable id derived from this machine's id"
                ),
                .value(
                    \.user,
                    "--user",
                    "U",
                    "the platform user name",
                    required: true,
                    convert: ValueConversions.nonEmpty("--user")
                ),
                .flag(
                    \.allowInsecureHTTP,
                    "--allow-insecure-http",
                    "allow an http:// host that is not loopback (the password then crosses the network in clear)"
                ),
                .value(
                    \.caFile,
                    "--ca-file",
                    "FILE",
                    "PEM CA certificates to trust for the server, besides the system store",
                    type: .file
                ),
                .value(
                    \.clientIdentity,
                    "--client-identity",
                    "ALIAS",
                    "present this stored identity (certsign identity import) as the TLS client certificate",
                    convert: ValueConversions.alias
                ),
            ]
            options += .secretSources(
                \.clientIdentityPassword,
                "client-identity-password",
                "the client identity's password"
            )
            options += .password(\.password, "the user's platform password")
            return options
        }

        func validate() throws {
            if clientIdentity == nil, clientIdentityPassword.isGiven {
                throw InvalidValue(message: "--client-identity-password-env/-file need --client-identity ALIAS")
            }
        }
    }

    static let dssLogin = CommandDescriptor(
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
        ]
    ) { (options: DSSLoginOptions, context) in
        let host = options.host
        let policy = RemoteEndpointPolicy(allowsInsecureHTTP: options.allowInsecureHTTP)
        try policy.validate(host)
        let user = options.user
        let device = options.device ?? context.machineDeviceID
        var parameters: ProviderParameters = [
            FMPDSSProvider.ParameterKey.host: .url(host),
            FMPDSSProvider.ParameterKey.apiVersion: .string(options.apiVersion),
            FMPDSSProvider.ParameterKey.environment: .string(options.environment),
            FMPDSSProvider.ParameterKey.project: .string(options.project),
            FMPDSSProvider.ParameterKey.device: .string(device),
            FMPDSSProvider.ParameterKey.username: .string(user),
            FMPDSSProvider.ParameterKey.allowInsecureHTTP: .boolean(policy.allowsInsecureHTTP),
        ]
        guard let password = try context.secret(options.password, prompt: "platform password for \(user): ") else {
            throw CertificateProviderError(.passwordRequired, "the platform password is needed")
        }
        var tls = FMPLoginTLS(
            trustedCAFile: options.caFile.map { URL(fileURLWithPath: $0).standardizedFileURL.path },
            clientIdentity: options.clientIdentity,
            clientIdentityPasswordEnv: options.clientIdentityPassword.environmentVariable,
            clientIdentityPasswordFile: options.clientIdentityPassword.filePath
                .map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        )
        if tls.trustedCAFile == nil, tls.clientIdentity == nil { tls = FMPLoginTLS() }
        parameters[FMPDSSProvider.ParameterKey.password] = .secret(password)
        let provider = try context.fmpProvider(parameters, tls: tls)
        let result = try await context.reportingEnvelope(provider) { try await provider.login() }
        try context.saveFMPLoginTLS(tls)
        context.emit(
            encoding: envelopeJSON(result.envelope),
            human: "Authentication success (\(user) at \(host.absoluteString), device \(device))"
        )
        return CertSign.exitSuccess
    }
}
