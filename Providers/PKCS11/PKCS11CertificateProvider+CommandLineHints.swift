public import CertificateProviders

extension PKCS11CertificateProvider {
    /// `certsign tokens` works with PKCS#11 modules without `--provider`.
    public static var commandGroup: String? { "tokens" }

    /// The PIN comes through the provider's `pin` parameter (`--param-env pin=VAR`,
    /// `--param-file pin=PATH`), never through `--password-*`; a wrong PIN costs one of the token's
    /// tries; the module is a parameter (`--param module=PATH`) or, for `tokens`, `--module PATH`;
    /// `certsign tokens` shows the tokens and keys.
    public static func commandLineHint(
        for error: CertificateProviderError,
        in command: ProviderCommandLine
    ) -> String? {
        let listsTokens = command.words == ["tokens"]
        switch error.code {
        case .passwordRequired:
            let offered = command.offering([
                ("--param-env", "--param-env pin=VAR"), ("--param-file", "--param-file pin=PATH"),
            ])
            return offered.map { "give the token's user PIN with \($0) (never on the command line)" }
        case .wrongPassword:
            return "check the token's user PIN: each wrong PIN uses up one of the token's tries, and the token locks "
                + "the PIN after a few ('certsign tokens --module PATH' shows its flags, e.g. 'user PIN count low')"
        case .moduleNotLoadable where listsTokens:
            return "give --module PATH of a PKCS#11 module (e.g. /usr/lib/softhsm/libsofthsm2.so, opensc-pkcs11.so)"
        case .moduleNotLoadable where command.optionNames.contains("--param"):
            return
                "give --param module=PATH of a PKCS#11 module (e.g. /usr/lib/softhsm/libsofthsm2.so, opensc-pkcs11.so)"
        case .invalidParameter where listsTokens && error.reason.contains("need a login"):
            return "name the token the PIN is for with --token LABEL (or --token URI)"
        case .pinLocked:
            return "unlock the PIN with the SO PIN (pkcs11-tool --login --login-type so --init-pin) or the token's "
                + "own tool"
        case .tokenNotFound, .certificateNotFound:
            return "run 'certsign tokens --module PATH' to see the tokens and the pkcs11: URI of each key"
        default:
            return nil
        }
    }
}
