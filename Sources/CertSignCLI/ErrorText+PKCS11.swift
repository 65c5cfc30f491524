import CertificateProviders

extension ErrorText {
    /// Hints for `--provider pkcs11`: the PIN comes through the provider's `pin` parameter
    /// (`--param-env pin=VAR`, `--param-file pin=PATH`), never through `--password-*`, and a wrong PIN
    /// costs one of the token's tries.
    static func pkcs11Hint(for error: CertificateProviderError, command: CommandDescriptor?) -> String? {
        switch error.code {
        case .passwordRequired:
            let names = Set(command?.options.map(\.name) ?? [])
            let offered = [("--param-env", "--param-env pin=VAR"), ("--param-file", "--param-file pin=PATH")]
                .filter { names.contains($0.0) }.map(\.1)
            guard !offered.isEmpty else { return nil }
            return "give the token's user PIN with \(Help.alternatives(offered)) (never on the command line)"
        case .wrongPassword:
            return pkcs11WrongPINHint
        default:
            return nil
        }
    }

    /// What to do about a wrong PKCS#11 PIN (`sign --provider pkcs11`, `tokens --pin-…`).
    static let pkcs11WrongPINHint =
        "check the token's user PIN: each wrong PIN uses up one of the token's tries, and the token locks the PIN "
        + "after a few ('certsign tokens --module PATH' shows its flags, e.g. 'user PIN count low')"
}
