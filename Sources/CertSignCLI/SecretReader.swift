import CertificateProviders
import Foundation

/// The one place the CLI reads secrets: from an environment variable (`--…-env VAR`), a file
/// (`--…-file PATH`), standard input (`--…-stdin`) or a prompt without echo when stdin is a terminal.
///
/// A password file, and a password piped to standard input, hold the secret on their first line:
/// the line break and anything after it are ignored (``Secret/firstLine(wiping:)``), as everywhere
/// in this package. An environment variable's value is taken whole.
extension CommandContext {
    /// Reads one secret from `--<stem>-env VAR`, `--<stem>-file PATH`, `--<stem>-stdin` (when the
    /// command declares it) or, when stdin is a terminal, a prompt without echo.
    /// - Parameters:
    ///   - stem: the option stem (`password`, `pin`, `dss-password`, `store-password`).
    ///   - prompt: what the prompt says; nil never prompts.
    ///   - required: whether a missing secret is an error (else nil is returned).
    func secret(
        _ parsed: ParsedArguments,
        name stem: String = "password",
        prompt: String?,
        required: Bool = true
    ) throws -> Secret? {
        let declared = parsed.declared
        if declared.contains("--\(stem)-env"), let variable = parsed.value("--\(stem)-env") {
            return try environmentSecret(variable, option: "--\(stem)-env")
        }
        if declared.contains("--\(stem)-file"), let path = parsed.value("--\(stem)-file") {
            return try readSecretFile(path, option: "--\(stem)-file")
        }
        if declared.contains("--\(stem)-stdin"), parsed.has("--\(stem)-stdin") {
            var bytes = Array(console.readStandardInput())
            return Secret.firstLine(wiping: &bytes)
        }
        if let prompt, console.inputIsTerminal { return try console.promptSecret(prompt) }
        if required {
            let what = (prompt ?? "\(stem): ").trimmingCharacters(in: CharacterSet(charactersIn: ": "))
            let sources = ["env VAR", "file PATH", "stdin"].map { "--\(stem)-\($0)" }
                .filter { declared.contains(String($0.split(separator: " ")[0])) }
            throw CertificateProviderError(
                .passwordRequired,
                "\(what) is needed and stdin is not a terminal; use \(Help.alternatives(sources))"
            )
        }
        return nil
    }

    /// A secret from `--<stem>-env` / `--<stem>-file` only (never prompts); nil when neither is given.
    func optionalSecret(_ parsed: ParsedArguments, name stem: String) throws -> Secret? {
        try secret(parsed, name: stem, prompt: nil, required: false)
    }

    /// A secret that must be given (prompted for on a terminal).
    func requiredSecret(_ parsed: ParsedArguments, name stem: String, prompt: String) throws -> Secret {
        guard let value = try secret(parsed, name: stem, prompt: prompt) else {
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
    func providerParameters(_ parsed: ParsedArguments, for provider: ProviderID) throws -> ProviderParameters {
        var parameters = ProviderParameters()
        func split(_ text: String) -> (ProviderParameters.Key, String) {
            // The parser checked KEY=VALUE.
            let equals = text.firstIndex(of: "=") ?? text.endIndex
            let value = equals == text.endIndex ? "" : String(text[text.index(after: equals)...])
            return (ProviderParameters.Key(String(text[..<equals])), value)
        }
        let schema = try makeRegistry().registration(provider)?.schema
        for item in parsed.values("--param") {
            let (key, value) = split(item)
            do {
                parameters[key] = try schema?.commandLineValue(key, value) ?? .string(value)
            } catch let error as CertificateProviderError where schema?[key]?.isSecret == true {
                // The schema's refusal, as a usage error: the command line itself is wrong.
                throw UsageError(message: error.reason, usage: "--param-env KEY=VAR | --param-file KEY=PATH")
            }
        }
        for item in parsed.values("--param-env") {
            let (key, variable) = split(item)
            parameters[key] = .secret(try environmentSecret(variable, option: "--param-env \(key)=…"))
        }
        for item in parsed.values("--param-file") {
            let (key, path) = split(item)
            parameters[key] = .secret(try readSecretFile(path, option: "--param-file \(key)"))
        }
        return parameters
    }
}
