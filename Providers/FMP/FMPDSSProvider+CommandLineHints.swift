public import CertificateProviders
internal import HTTPClient

extension FMPDSSProvider {
    /// `certsign dss …` works with FMP DSS without `--provider`.
    public static var commandGroup: String? { "dss" }

    /// FMP DSS signs platform resources (a table cell on the server), not files: `certsign sign`
    /// points to `certsign dss sign`.
    public static func commandLineRefusal(for command: ProviderCommandLine) -> ProviderCommandRefusal? {
        guard command.words == ["sign"] else { return nil }
        return ProviderCommandRefusal(
            reason: "the \(id.rawValue) provider signs platform resources (a table cell on the server), not files: "
                + "use 'certsign dss sign --resource R --table T --column C --hhive-id N --certificate-id N'",
            instead: ["dss", "sign"]
        )
    }

    /// FMP DSS's TLS settings and session come from `certsign dss login`, which alone has `--ca-file`;
    /// `certsign dss signs` lists the signatures the server keeps.
    public static func commandLineHint(
        for error: CertificateProviderError,
        in command: ProviderCommandLine
    ) -> String? {
        switch error.code {
        case .authenticationFailed where error.reason.contains("the session has expired"):
            return "certsign dss login --host URL --environment E --project P --user U --password-env VAR (the dss "
                + "commands then use the new session)"
        case .authenticationFailed where command.words == ["dss", "login"]:
            return "check the user name and password"
        case .notStored where command.words.first == commandGroup:
            return error.reason.contains("logged in") || error.reason.contains("session")
                ? "log in first: certsign dss login --host URL …"
                : "run 'certsign dss signs' to see the signature ids the server keeps"
        case .untrustedServerCertificate:
            break
        default:
            return nil
        }
        if command.words == ["dss", "login"] {
            return "trust the server's CA with --ca-file FILE (PEM), or check --host"
        }
        return "log in again with 'certsign dss login … --ca-file FILE' (the dss commands use the CA file of the last "
            + "login)"
    }
}
