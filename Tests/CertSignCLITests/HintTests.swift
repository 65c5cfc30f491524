import CertificateProviders
import Foundation
import PKCS11Provider
import TestSupport
import Testing

@testable import CertSignCLI

/// Every hint names only what exists where the user is: each `--option` it suggests is an option of
/// the command that failed (or of the `certsign …` command line the hint quotes), and each provider
/// parameter it names is one the provider declares. The hints are computed for every
/// command, every provider the tool registers (and none), and errors of every code, including the
/// reasons the hints look at.
@Suite struct HintTests {
    /// Errors of every code, with the reasons whose words the hints look at.
    static let errors: [CertificateProviderError] = {
        let reasons = [
            "something failed",
            "not logged in",
            "the saved session is damaged",
            "the store password is needed",
            "the DSS password is needed",
            "the user PIN is needed",
            "the token PIN is wrong",
            "a non-empty password is needed",
            "an identity is stored under that alias; pass --replace",
            "the TLS certificate of the server is not trusted",
        ]
        let codes: [CertificateProviderError.Code] = [
            .providerNotFound, .providerAlreadyRegistered, .unsupportedOperation, .invalidParameter, .wrongPassword,
            .passwordRequired, .malformedInput, .unsupportedAlgorithm, .noPrivateKey, .keyCertificateMismatch,
            .notStored, .alreadyExists, .storeCorrupted, .fileSystem, .authenticationFailed, .serverRejected,
            .network, .timeout, .cancelled, .cryptoFailure, .pinLocked, .tokenNotFound, .certificateNotFound,
            .moduleNotLoadable,
        ]
        return codes.flatMap { code in reasons.map { CertificateProviderError(code, $0) } }
    }()

    /// Tools a hint may quote with their own options.
    static let otherTools = ["pkcs11-tool", "openssl", "softhsm2-util", "keytool"]

    /// Error codes only the PKCS#11 provider raises.
    static let pkcs11Codes: Set<CertificateProviderError.Code> = [
        .pinLocked, .tokenNotFound, .certificateNotFound, .moduleNotLoadable,
    ]

    /// The option names a hint suggests, each with the command it belongs to (nil: the failing one).
    static func suggestions(in hint: String) -> [(option: String, command: CommandDescriptor?, value: String?)] {
        let pattern = /--[a-z][a-z0-9-]*(?:[ =]([A-Za-z][A-Za-z0-9]*)=?)?/
        var found: [(String, CommandDescriptor?, String?)] = []
        for match in hint.matches(of: pattern) {
            let option = String(hint[match.range].prefix { $0 != " " && $0 != "=" })
            let value = match.output.1.map(String.init)
            // A quoted `certsign WORDS …` before the option, in the same clause, names its command;
            // an option of another tool (`pkcs11-tool --login`) is that tool's business.
            let before = hint[..<match.range.lowerBound]
            let ours = before.range(of: "certsign ", options: .backwards)?.lowerBound
            let theirs = Self.otherTools.compactMap { before.range(of: $0 + " ", options: .backwards)?.lowerBound }
                .max()
            if let theirs, ours.map({ theirs > $0 }) ?? true { continue }
            var command: CommandDescriptor?
            if let start = before.range(of: "certsign ", options: .backwards) {
                let clause = before[start.upperBound...]
                if !clause.contains(";") && !clause.contains("'") && !clause.contains(")") {
                    let words = clause.split(separator: " ").map(String.init).prefix { !$0.hasPrefix("-") }
                    command = Commands.find(Array(words))?.0
                }
            }
            found.append((option, command, value))
        }
        return found
    }

    @Test("a provider without a password parameter is told its own secret parameter, not --password-env")
    func secretParameterHint() throws {
        let missing = CertificateProviderError(.passwordRequired, "vault-transit: no token was given")
        #expect(
            ErrorText.hint(for: missing, command: Commands.sign, provider: "vault-transit")
                == "give it with --param-env token=VAR or --param-file token=PATH, never on the command line "
                + "(the provider's other secrets: 'clientIdentityPassword')"
        )
        // AWS KMS has two secrets: the first is named, the other listed.
        let aws = try #require(ErrorText.passwordHint(missing, command: Commands.sign, provider: "aws-kms"))
        #expect(
            aws.hasPrefix("give it with --param-env secretAccessKey=VAR") && aws.contains("'sessionToken'"),
            "\(aws)"
        )
        // A provider with a password keeps the password options.
        let pkcs12 = try #require(ErrorText.hint(for: missing, command: Commands.sign, provider: "pkcs12"))
        #expect(pkcs12.contains("--password-env VAR"), "\(pkcs12)")
    }

    @Test("every option and parameter a hint suggests exists for that command and provider")
    func hintsNameWhatExists() throws {
        let context = try CommandContext(
            console: Console(environment: [:]),
            json: false,
            storeOverride: "/nonexistent",
            environment: [:]
        )
        let registry = try context.makeRegistry()
        let providers: [String?] = [nil] + registry.registeredIDs.map(\.rawValue)
        let global = Set(Invocation.globalOptions.map(\.name) + ["--help"])
        var checked = 0
        for command in Commands.all {
            for provider in providers
            where provider == nil || command.options.contains(where: { $0.name == "--provider" }) {
                let schema = provider.flatMap { registry.registration(ProviderID($0))?.schema }
                for error in Self.errors
                where provider == nil || provider == "pkcs11" || !Self.pkcs11Codes.contains(error.code) {
                    guard let hint = ErrorText.hint(for: error, command: command, provider: provider) else { continue }
                    for (option, quoted, value) in Self.suggestions(in: hint) {
                        checked += 1
                        let target = quoted ?? command
                        let context = "\(command.name) --provider \(provider ?? "-") \(error.code): '\(hint)'"
                        #expect(
                            global.contains(option) || target.options.contains { $0.name == option },
                            "\(option) is not an option of 'certsign \(target.name)' — \(context)"
                        )
                        // With a provider, a secret or parameter the hint names must be one it declares.
                        guard quoted == nil, let provider, provider != "pkcs12", let schema else { continue }
                        if option.hasPrefix("--password") {
                            #expect(
                                schema.keys.contains("password"),
                                "\(provider) has no 'password' parameter — \(context)"
                            )
                        }
                        if option.hasPrefix("--param"), let value {
                            #expect(
                                schema.keys.contains(ProviderParameters.Key(value)),
                                "\(provider) has no parameter '\(value)' — \(context)"
                            )
                        }
                    }
                }
            }
        }
        #expect(checked > 50, "only \(checked) suggestions were checked")
    }

    @Test("the check sees a wrong suggestion: an option of another command, a parameter nobody declares")
    func checkSeesWrongSuggestions() throws {
        let sign = try #require(Commands.find(["sign"])?.0)
        let found = Self.suggestions(in: "give it with --pin-env VAR; or run 'certsign tokens --module PATH'")
        #expect(found.map(\.option) == ["--pin-env", "--module"])
        #expect(found[0].command == nil && !sign.options.contains { $0.name == "--pin-env" })
        let quoted = Self.suggestions(in: "log in first: certsign dss login --host URL …")
        #expect(quoted.first?.command?.name == "dss login")
        let parameter = Self.suggestions(in: "give it with --param-env pin=VAR")
        #expect(parameter.first?.value == "pin")
    }
}
