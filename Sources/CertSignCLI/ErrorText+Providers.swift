import CertificateProviders

extension ErrorText {
    /// A hint written for the provider the command line named (`--provider ID`), or nil to fall back
    /// to the general hints. Each provider's hints live in their own function so they can name that
    /// provider's own options and commands (never another provider's).
    static func providerHint(
        for error: CertificateProviderError,
        command: CommandDescriptor?,
        provider: String?
    ) -> String? {
        switch provider ?? remoteProvider(of: command) {
        case "pkcs11": return pkcs11Hint(for: error, command: command)
        case "fmp-dss": return fmpHint(for: error, command: command)
        case "cryptopro-dss": return cryptoProHint(for: error)
        case "csc": return cscHint(for: error)
        case "vault-transit": return vaultHint(for: error)
        case "aws-kms": return awsKMSHint(for: error)
        default: return nil
        }
    }
}
