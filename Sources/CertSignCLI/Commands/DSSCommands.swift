import CertificateProviders
import DSSEmulator
internal import Durability
import FMPDSSProvider
import Foundation
import PKCS12Provider
import RemoteSigning

/// `certsign dss …`: the Foresight Mobile Platform DSS calls of the HHFWDss sample, and
/// `certsign emulator`, the package's own DSS server.
extension Commands {
    static let dssCommands: [CommandDescriptor] = [dssLogin, dssCertificates, dssSign, dssSigns, dssRemove, emulator]

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

    /// `certsign dss certificates [--dss-password-env VAR | --dss-password-file PATH]`.
    struct DSSCertificatesOptions: CommandOptions {
        var dssPassword = SecretInput()

        static var options: [OptionBinding<Self>] {
            .secretSources(\.dssPassword, "dss-password", "the DSS password")
        }
    }

    static let dssCertificates = CommandDescriptor(
        words: ["dss", "certificates"],
        summary: "list the DSS certificates of the logged-in user",
        discussion: "The DSS password is asked for when stdin is a terminal and no source is given.",
        examples: ["certsign dss certificates --dss-password-env DSS_PASSWORD"]
    ) { (options: DSSCertificatesOptions, context) in
        try context.requireFMPSession(for: "certificates")
        let dssPassword = try context.requiredSecret(options.dssPassword, prompt: "DSS password: ")
        let provider = try context.fmpProvider([FMPDSSProvider.ParameterKey.dssPassword: .secret(dssPassword)])
        let result = try await context.reportingEnvelope(provider) { try await provider.certificates() }
        let rows = result.value.map {
            [String($0.id), $0.subject, $0.notAfter.map(Format.localDate) ?? "-", $0.hasPIN ? "yes" : "no"]
        }
        context.emit(
            encoding: envelopeJSON(result.envelope),
            human: result.value.isEmpty
                ? "no certificates" : Format.table(["ID", "SUBJECT", "VALID UNTIL", "PIN"], rows)
        )
        return CertSign.exitSuccess
    }

    static var dssSignUsage: String { dssSign.usage }

    /// `certsign dss sign --resource R --table T --column C --hhive-id N --certificate-id N …`.
    struct DSSSignOptions: CommandOptions {
        // Required options are always set by the parser; --params defaults to {}.
        var resource = ""
        var table = ""
        var params: JSONValue = [:]
        var column = ""
        var hhiveID = 0
        var certificateID = 0
        var dssPassword = SecretInput()
        var pin = SecretInput()

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                .value(
                    \.resource,
                    "--resource",
                    "R",
                    "the platform resource",
                    required: true,
                    convert: ValueConversions.nonEmpty("--resource")
                ),
                .value(
                    \.table,
                    "--table",
                    "T",
                    "the resource's table",
                    required: true,
                    convert: ValueConversions.nonEmpty("--table")
                ),
                .value(\.params, "--params", "JSON", "the resource's parameters as JSON", default: "{}") { text in
                    do {
                        return try JSONValue(parsing: text)
                    } catch {
                        throw InvalidValue(message: "--params must be JSON, such as '{}' or '{\"year\": 2026}'")
                    }
                },
                .value(
                    \.column,
                    "--column",
                    "C",
                    "the column of the cell",
                    required: true,
                    convert: ValueConversions.nonEmpty("--column")
                ),
                .integer(\.hhiveID, "--hhive-id", "N", "the row of the cell", in: Int.min...Int.max, required: true) {
                    $0
                },
                .integer(
                    \.certificateID,
                    "--certificate-id",
                    "N",
                    "the DSS certificate to sign with ('certsign dss certificates')",
                    in: Int.min...Int.max,
                    required: true
                ) { $0 },
            ]
            options += .secretSources(\.dssPassword, "dss-password", "the DSS password")
            options += .secretSources(\.pin, "pin", "the certificate's PIN")
            return options
        }
    }

    static let dssSign = CommandDescriptor(
        words: ["dss", "sign"],
        summary: "sign a platform resource cell on the DSS server",
        discussion: """
            Signs the cell (resource, table, column, row = --hhive-id) with the DSS certificate
            --certificate-id; prints the signature id. A sign request is never retried automatically.
            """,
        examples: [
            """
            certsign dss sign --resource GetBudgetPlanning --table ПланированиеБюджета --column Номер \\
                       --hhive-id 1 --certificate-id 12831 --dss-password-env DSS_PASSWORD --pin-env DSS_PIN
            """
        ]
    ) { (options: DSSSignOptions, context) in
        let (resource, table, column, params) = (options.resource, options.table, options.column, options.params)
        let (hhiveID, certificateID) = (options.hhiveID, options.certificateID)
        try context.requireFMPSession(for: "sign")
        let dssPassword = try context.requiredSecret(options.dssPassword, prompt: "DSS password: ")
        var parameters: ProviderParameters = [
            FMPDSSProvider.ParameterKey.dssPassword: .secret(dssPassword),
            FMPDSSProvider.ParameterKey.certificateID: .integer(certificateID),
        ]
        if let pin = try context.secret(
            options.pin,
            prompt: "PIN of certificate \(certificateID): ",
            required: false
        ) {
            parameters[FMPDSSProvider.ParameterKey.pin] = .secret(pin)
        }
        let provider = try context.fmpProvider(parameters)
        let result = try await context.reportingEnvelope(provider) {
            try await provider.sign(resource: resource, table: table, params: params, column: column, hhiveID: hhiveID)
        }
        context.emit(encoding: envelopeJSON(result.envelope), human: "signed: signature_id \(result.value)")
        return CertSign.exitSuccess
    }

    /// `certsign dss signs [--out-dir DIR]`.
    struct DSSSignsOptions: CommandOptions {
        var outputDirectory: String?

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.outputDirectory,
                    "--out-dir",
                    "DIR",
                    "also write each signature as DIR/<id>.p7s (to check with certsign verify)",
                    type: .directory
                )
            ]
        }
    }

    static let dssSigns = CommandDescriptor(
        words: ["dss", "signs"],
        summary: "list the signatures the DSS server keeps for the user",
        examples: ["certsign dss signs"]
    ) { (options: DSSSignsOptions, context) in
        let provider = try context.fmpProvider()
        let result = try await context.reportingEnvelope(provider) { try await provider.signs() }
        if let directory = options.outputDirectory {
            try context.makeOutputDirectory(directory)
            for signature in result.value {
                try FileSystem.writeAtomically(
                    URL(fileURLWithPath: directory).appendingPathComponent("\(signature.id).p7s").path,
                    signature.signature
                )
            }
        }
        let rows = result.value.map {
            [
                String($0.id), "\($0.resource) / \($0.table) / \($0.column) / \($0.hhiveID)", String($0.certificateID),
                $0.createdAt.map(Format.localDate) ?? "-",
            ]
        }
        context.emit(
            encoding: envelopeJSON(result.envelope),
            human: result.value.isEmpty
                ? "no signatures"
                : Format.table(["ID", "RESOURCE / TABLE / COLUMN / ROW", "CERTIFICATE", "CREATED"], rows)
        )
        return CertSign.exitSuccess
    }

    /// `certsign dss remove ID`: the server's signature id, a whole number.
    struct DSSRemoveOptions: CommandOptions {
        var id = 0

        static var arguments: [ArgumentBinding<Self>] {
            [
                .one(\.id, "ID", "the signature_id ('certsign dss signs' lists them)") { text in
                    guard let id = Int(text) else {
                        throw InvalidValue(message: "the signature id must be a whole number, not '\(text)'")
                    }
                    return id
                }
            ]
        }
    }

    static let dssRemove = CommandDescriptor(
        words: ["dss", "remove"],
        summary: "remove a signature from the DSS server",
        examples: ["certsign dss remove 121"]
    ) { (options: DSSRemoveOptions, context) in
        let id = options.id
        let provider = try context.fmpProvider()
        let result = try await context.reportingEnvelope(provider) { try await provider.removeSign(id: id) }
        context.emit(
            encoding: envelopeJSON(result.envelope),
            human: "removed signature \(id) (status \(FMPClient.responseStatus(from: result.envelope) ?? "?"))"
        )
        return CertSign.exitSuccess
    }

    /// The platform envelope as an `Encodable` JSON value (the server's `result` passes through as it
    /// came; an envelope that is not JSON, which the client never builds, prints as `{}`).
    static func envelopeJSON(_ envelope: FMPEnvelope) -> JSONValue {
        (try? JSONValue(parsing: envelope.jsonString)) ?? .object([:])
    }
}

/// The TLS settings of the last `dss login` (`fmp-tls.json` in the store, 0600): how to reach a server
/// behind a private CA or demanding a client certificate. The session itself is the provider's
/// (`fmp-session.json`); this keeps only what the provider must be given again on every call, and
/// never the identity's password, only where it comes from.
struct FMPLoginTLS: Codable, Equatable {
    var trustedCAFile: String?
    var clientIdentity: String?
    var clientIdentityPasswordEnv: String?
    var clientIdentityPasswordFile: String?
    var isEmpty: Bool { trustedCAFile == nil && clientIdentity == nil }
}

extension CommandContext {
    /// A stable per-machine device id: a UUID-shaped SHA-256 of /etc/machine-id (or the host name).
    var machineDeviceID: String {
        let seed = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8)) ?? ProcessInfo.processInfo.hostName
        let digest = DigestAlgorithm.sha256.hash(
            Array("certsign-device:\(seed.trimmingCharacters(in: .whitespacesAndNewlines))".utf8)
        )
        let hex = Format.hex(Array(digest.prefix(16)))
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4),
            hex.dropFirst(20),
        ]
        return parts.map(String.init).joined(separator: "-").uppercased()
    }

    /// The FMP DSS provider over this invocation's store (its session lives there), with `parameters`.
    /// - Parameter tls: the TLS settings to use; nil means those of the last login.
    func fmpProvider(
        _ parameters: ProviderParameters = ProviderParameters(),
        tls: FMPLoginTLS? = nil
    ) throws -> FMPDSSProvider {
        let store = identityStore
        let provider = try FMPDSSProvider(
            parameters: [FMPDSSProvider.ParameterKey.storeDirectory: .string(storeDirectory.path)],
            clientIdentityLookup: { alias, password in try store.identity(alias: alias, password: password) },
            warning: warningPrinter
        )
        let tlsParameters = try fmpTLSParameters(try tls ?? loadFMPLoginTLS())
        try provider.setParameters(provider.parameters.merging(tlsParameters).merging(parameters))
        return provider
    }

    /// Prints a library's warning on stderr.
    var warningPrinter: @Sendable (String) -> Void {
        let console = self.console
        return { console.err("certsign: warning: \($0)") }
    }

    var fmpLoginTLSURL: URL { storeDirectory.appendingPathComponent("fmp-tls.json") }

    /// Keeps the TLS settings of a successful login (removes them when the login used none).
    func saveFMPLoginTLS(_ tls: FMPLoginTLS) throws {
        if tls.isEmpty {
            try? FileManager.default.removeItem(at: fmpLoginTLSURL)
            return
        }
        try FileSystem.makePrivateDirectory(storeDirectory.path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileSystem.writeAtomically(fmpLoginTLSURL.path, Array(try encoder.encode(tls)))
    }

    /// The TLS settings of the last login; none when there are none.
    func loadFMPLoginTLS() throws -> FMPLoginTLS {
        guard let data = FileManager.default.contents(atPath: fmpLoginTLSURL.path) else { return FMPLoginTLS() }
        do {
            return try JSONDecoder().decode(FMPLoginTLS.self, from: data)
        } catch {
            throw CertificateProviderError(
                .storeCorrupted,
                "the saved DSS TLS settings \(fmpLoginTLSURL.path) are damaged; run 'certsign dss login …' again"
            )
        }
    }

    /// The provider parameters for `tls`: the CA file, the client identity's alias and its password
    /// read from the environment variable or file the login named.
    func fmpTLSParameters(_ tls: FMPLoginTLS) throws -> ProviderParameters {
        var parameters = ProviderParameters()
        if let file = tls.trustedCAFile { parameters[FMPDSSProvider.ParameterKey.trustedCAFile] = .string(file) }
        guard let alias = tls.clientIdentity else { return parameters }
        parameters[FMPDSSProvider.ParameterKey.clientIdentity] = .string(alias)
        if let variable = tls.clientIdentityPasswordEnv {
            parameters[FMPDSSProvider.ParameterKey.clientIdentityPassword] =
                .secret(try environmentSecret(variable, option: "--client-identity-password-env"))
        } else if let path = tls.clientIdentityPasswordFile {
            parameters[FMPDSSProvider.ParameterKey.clientIdentityPassword] =
                .secret(try readSecretFile(path, option: "--client-identity-password-file"))
        }
        return parameters
    }

    /// Runs a provider call; on failure with `--json`, prints the platform envelope of the failed
    /// call on stdout before the error goes to stderr.
    func reportingEnvelope<T>(_ provider: FMPDSSProvider, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            if json, let envelope = provider.lastEnvelope {
                console.out(JSONOutput.encode(Commands.envelopeJSON(envelope)))
            }
            throw error
        }
    }
}
