import CertificateProviders
import Signing

/// One- or two-line error messages: what went wrong and what to do.
enum ErrorText {
    static func render(_ error: CertificateProviderError, hint: String?) -> String {
        // Reasons and hints name files and quote servers: escaped, so neither can forge a line.
        var text = "certsign: error: \(Format.printable(error.reason))"
        if let hint { text += "\n  hint: \(Format.printable(hint))" }
        return text
    }

    /// The line for one document of a batch that failed (`certsign: PATH: reason`), and the hint for
    /// it on the next line when there is one: a batch goes on, so its failures are not rendered by
    /// ``render(_:hint:)``, but they need the same advice.
    static func documentFailure(
        _ path: String,
        _ error: CertificateProviderError,
        command: CommandDescriptor?
    ) -> String {
        var text = "certsign: \(Format.printable(path)): \(Format.printable(error.reason))"
        if let hint = hint(for: error, command: command) { text += "\n  hint: \(Format.printable(hint))" }
        return text
    }

    /// What to do about `error`, for the command that failed (nil when the reason says it already).
    static func hint(
        for error: CertificateProviderError,
        command: CommandDescriptor?,
        provider: String? = nil
    ) -> String? {
        if let specific = providerHint(for: error, command: command, provider: provider) { return specific }
        // GOST and CryptoPro errors already say what to install or how to convert.
        if error.reason.hasPrefix("GOST needs ") || error.reason.contains("CryptoPro CSP") { return nil }
        let words = command?.words ?? []
        let group = words.first ?? ""
        switch error.code {
        case .notStored where error.reason.contains("(--store) does not exist"):
            return "check the --store path; 'certsign identity import' or 'certsign dss login' creates a store"
        case .notStored:
            if group == "signatures" { return "run 'certsign signatures list' to see the signature ids" }
            if group == "pending" {
                return "run 'certsign pending list' (with the --dir of the .pending files) to see the ids"
            }
            return "run 'certsign identity list' to see what is stored"
        case .alreadyExists where words == ["emulator"]:
            return
                "give --force to replace it with this emulator's CA, or another --ca-out FILE (--state DIR keeps one CA)"
        case .alreadyExists:
            if words == ["identity", "export"] {
                return "name a new file with --out; export never replaces an existing file"
            }
            if error.reason.contains("--replace-identity") || error.reason.contains("--force") { return nil }
            guard words == ["identity", "import"] else { return nil }
            return "pass --replace-identity to replace it, or choose another --alias"
        case .authenticationFailed:
            if error.reason.contains("not logged in") { return "log in first: certsign dss login --host URL …" }
            return "log in again ('certsign dss login …') and check the user name and password"
        case .network, .timeout:
            if words == ["emulator"] {
                return
                    "the address or port cannot be used (busy?): choose another --port (0 picks a free one) or --host"
            }
            return "check that the server is reachable and try again"
        case .passwordRequired:
            return passwordHint(error, command: command, provider: provider)
        case .timestampInvalid where error.reason.contains("does not chain to a trusted TSA anchor"):
            // sign, timestamp and extend (a renewal too) take the TSA's CA; verify takes it for checking.
            guard command?.options.contains(where: { $0.name == "--tsa-ca" }) == true else { return nil }
            return "name the TSA's CA certificate with --tsa-ca FILE (PEM or DER)"
        case .wrongPassword where error.reason.contains("PKCS#12 file"):
            // A .p12 made on Windows may be protected with another password than the user's login.
            return "check the password (it is case-sensitive; PKCS#12 passwords from Windows may differ from the "
                + "login password)"
        case .storeCorrupted where error.reason.contains("postgresql://") || error.reason.contains("PostgreSQL"):
            return "the database was changed outside certsign: compare it with a published head ('certsign journal "
                + "verify --published COUNT:HASH') and restore it from a backup"
        default:
            return hint(for: error.code)
        }
    }

    /// Names the options of `command` that can supply the secret the error asks for: for a provider
    /// without a `password` parameter (`--password-…` would give it one it refuses), its own secret
    /// parameters through `--param-env`/`--param-file`.
    static func passwordHint(
        _ error: CertificateProviderError,
        command: CommandDescriptor?,
        provider: String? = nil
    ) -> String? {
        if let provider, let schema = Commands.builtInProvider(ProviderID(provider))?.schema,
            schema["password"] == nil
        {
            let secrets = schema.parameters.filter(\.isSecret).map(\.key.rawValue)
            let options = Set(command?.options.map(\.name) ?? [])
            guard let first = secrets.first, options.contains("--param-env") else { return nil }
            let others = secrets.dropFirst().map { "'\($0)'" }
            return "give it with --param-env \(first)=VAR or --param-file \(first)=PATH, never on the command line"
                + (others.isEmpty ? "" : " (the provider's other secrets: \(others.joined(separator: ", ")))")
        }
        let sources = command?.options.filter(\.namesSecretSource) ?? []
        var stem = "password"
        if error.reason.contains("store password") { stem = "store-password" }
        if command?.words == ["identity", "export"], error.reason.contains("non-empty password") {
            stem = "export-password"
        }
        if error.reason.contains("DSS password") { stem = "dss-password" }
        if error.reason.contains("PIN") { stem = "pin" }
        let matching = sources.filter { $0.name.hasPrefix("--\(stem)-") }.map(\.synopsis)
        let offered = matching.isEmpty ? sources.filter { $0.group != nil }.map(\.synopsis) : matching
        // A command without secret options cannot take one: say nothing rather than name options it lacks.
        guard !offered.isEmpty else { return nil }
        return "give it with \(Help.alternatives(offered))"
    }

    static func hint(for code: CertificateProviderError.Code) -> String? {
        switch code {
        case .wrongPassword:
            return "check the password (it is case-sensitive)"
        case .malformedInput: return "the file is damaged or of another kind; check that it is the file you meant"
        case .unsupportedAlgorithm:
            return "re-export the file or key with a modern algorithm (openssl pkcs12 -export without -legacy)"
        case .providerNotFound: return "run 'certsign providers' to see the registered providers"
        case .storeCorrupted: return "move the damaged file aside; certsign never overwrites it"
        default: return nil
        }
    }
}
