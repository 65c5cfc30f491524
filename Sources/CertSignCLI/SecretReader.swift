import CertificateProviders
import Foundation

/// The one place the CLI reads secrets: from an environment variable (`--…-env VAR`), a file
/// (`--…-file PATH`), standard input (`--…-stdin`) or a prompt without echo when stdin is a terminal.
///
/// A password file, and a password piped to standard input, hold the secret on their first line:
/// the line break and anything after it are ignored (``Secret/firstLine(wiping:)``), as everywhere
/// in this package. An environment variable's value is taken whole.
extension CommandContext {
    /// Reads one secret from where the command line said (`--<stem>-env VAR`, `--<stem>-file PATH`,
    /// `--<stem>-stdin`) or, when none was given and stdin is a terminal, a prompt without echo.
    /// - Parameters:
    ///   - input: the secret's sources as parsed (see ``SecretInput``).
    ///   - prompt: what the prompt says; nil never prompts.
    ///   - required: whether a missing secret is an error (else nil is returned).
    func secret(_ input: SecretInput, prompt: String?, required: Bool = true) throws -> Secret? {
        let stem = input.stem
        switch input.source {
        case .environment(let variable):
            return try environmentSecret(variable, option: "--\(stem)-env")
        case .file(let path):
            return try readSecretFile(path, option: "--\(stem)-file")
        case .standardInput:
            var bytes = Array(console.readStandardInput())
            return Secret.firstLine(wiping: &bytes)
        case nil:
            break
        }
        if let prompt, console.inputIsTerminal { return try console.promptSecret(prompt) }
        if required {
            let what = (prompt ?? "\(stem): ").trimmingCharacters(in: CharacterSet(charactersIn: ": "))
            throw CertificateProviderError(
                .passwordRequired,
                "\(what) is needed and stdin is not a terminal; use \(Help.alternatives(input.alternatives))"
            )
        }
        return nil
    }

    /// A secret from its `--<stem>-env` / `--<stem>-file` source only (never prompts); nil when none is given.
    func optionalSecret(_ input: SecretInput) throws -> Secret? {
        try secret(input, prompt: nil, required: false)
    }

    /// A secret that must be given (prompted for on a terminal).
    func requiredSecret(_ input: SecretInput, prompt: String) throws -> Secret {
        guard let value = try secret(input, prompt: prompt) else {
            throw CertificateProviderError(
                .passwordRequired,
                "\(prompt.trimmingCharacters(in: CharacterSet(charactersIn: ": "))) is needed"
            )
        }
        return value
    }

    /// The value of the environment variable `variable` as a secret.
    /// - Throws: `.invalidParameter` naming the option when the variable is not set.
    func environmentSecret(_ variable: String, option: String) throws -> Secret {
        guard let value = environment[variable] else {
            throw CertificateProviderError.invalidParameter(
                "environment variable \(variable) (from \(option)) is not set"
            )
        }
        return Secret(value)
    }

    /// The secret on the first line of the file at `path`.
    /// - Throws: `.fileSystem` naming the option when the file cannot be read.
    func readSecretFile(_ path: String, option: String) throws -> Secret {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CertificateProviderError(.fileSystem, "cannot read the secret file \(path) (from \(option))")
        }
        defer { try? handle.close() }
        var bytes = Array(handle.readDataToEndOfFile())
        return Secret.firstLine(wiping: &bytes)
    }

    /// Provider parameters from `--param K=V` (typed and checked by the provider's schema, which
    /// refuses secrets there), `--param-env K=VAR` (secret) and `--param-file K=PATH` (secret).
    func providerParameters(_ input: ProviderParameterInput, for provider: ProviderID) throws -> ProviderParameters {
        var parameters = try commandLineParameters(input, for: provider)
        for item in input.environment {
            let key = ProviderParameters.Key(item.key)
            parameters[key] = .secret(try environmentSecret(item.value, option: "--param-env \(key)=…"))
        }
        for item in input.files {
            let key = ProviderParameters.Key(item.key)
            parameters[key] = .secret(try readSecretFile(item.value, option: "--param-file \(key)"))
        }
        return parameters
    }

    /// The `--param K=V` values alone, typed and checked by the provider's schema; nothing is read
    /// from the environment or files, so a command can check its command line first.
    /// - Throws: `UsageError` for a secret given on the command line.
    func commandLineParameters(_ input: ProviderParameterInput, for provider: ProviderID) throws -> ProviderParameters {
        var parameters = ProviderParameters()
        let schema = try makeRegistry().registration(provider)?.schema
        for item in input.values {
            let key = ProviderParameters.Key(item.key)
            do {
                parameters[key] = try schema?.commandLineValue(key, item.value) ?? .string(item.value)
            } catch let error as CertificateProviderError where schema?[key]?.isSecret == true {
                // The schema's refusal, as a usage error: the command line itself is wrong.
                throw UsageError(message: error.reason, usage: "--param-env KEY=VAR | --param-file KEY=PATH")
            }
        }
        return parameters
    }
}
