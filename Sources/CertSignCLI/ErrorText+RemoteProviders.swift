import CertificateProviders
import HTTPClient
import Signing

/// The hints of the remote providers (FMP DSS, CryptoPro DSS, CSC): each names only options and
/// commands that exist where the user is (`--param …` for `sign --provider`, `--ca-file` for
/// `dss login`).
extension ErrorText {
    /// The remote provider a command without `--provider` works with: the `dss` commands FMP's, the
    /// `csc` commands CSC's.
    static func remoteProvider(of command: CommandDescriptor?) -> String? {
        switch command?.words.first {
        case "dss": return "fmp-dss"
        case "csc": return "csc"
        default: return nil
        }
    }

    /// FMP DSS: its TLS settings come from `dss login`, which alone has `--ca-file`.
    static func fmpHint(for error: CertificateProviderError, command: CommandDescriptor?) -> String? {
        if error.code == .authenticationFailed, error.reason.contains("the session has expired") {
            return "certsign dss login --host URL --environment E --project P --user U --password-env VAR (the dss "
                + "commands then use the new session)"
        }
        guard error.code == .untrustedServerCertificate else { return nil }
        if command?.words == ["dss", "login"] {
            return "trust the server's CA with --ca-file FILE (PEM), or check --host"
        }
        return "log in again with 'certsign dss login … --ca-file FILE' (the dss commands use the CA file of the last "
            + "login)"
    }

    /// CryptoPro DSS (`sign --provider cryptopro-dss --param …`).
    static func cryptoProHint(for error: CertificateProviderError) -> String? {
        switch error.code {
        case .authenticationFailed:
            return "check --param username=NAME and the password (--param-env password=VAR or --param-file "
                + "password=PATH); a kept session serves only the credentials it was made with, and 'certsign "
                + "sessions clear cryptopro-dss' forgets it"
        case .wrongPassword:
            return "give the certificate's PIN with --param-env pin=VAR or --param-file pin=PATH"
        case .untrustedServerCertificate:
            return "trust the server's CA with --param trustedCAFile=PATH (PEM), or check --param url=URL"
        case .serverSignatureMismatch:
            return "run 'certsign sessions clear cryptopro-dss' and sign again (a new login lists the certificates "
                + "afresh); if it persists, the server signs with another certificate than it lists"
        default:
            return nil
        }
    }

    /// CSC API v2 (`sign --provider csc --param …`, `csc credentials --param …`).
    static func cscHint(for error: CertificateProviderError) -> String? {
        switch error.code {
        case .authenticationFailed:
            return "check --param clientID=ID and the client secret (--param-env clientSecret=VAR or --param-file "
                + "clientSecret=PATH) the service registered; CSC keeps no session, so there is nothing to clear"
        case .wrongPassword, .passwordRequired:
            return "give the credential's PIN with --param-env pin=VAR (or --param-file pin=PATH) and a one-time "
                + "password with --param-env otp=VAR; 'certsign csc credentials' shows what each credential asks for"
        case .untrustedServerCertificate:
            return "trust the service's CA with --param trustedCAFile=PATH (PEM), or check --param url=URL"
        default:
            return nil
        }
    }

    /// Vault / OpenBao transit: a token, a key and a certificate made for it.
    static func vaultHint(for error: CertificateProviderError) -> String? {
        switch error.code {
        case .passwordRequired:
            return "give the token with --param-env token=VAR (or --param-file token=PATH), never on the command line"
        case .authenticationFailed:
            return "give a valid token with --param-env token=VAR (or --param-file token=PATH); 'bao token lookup' "
                + "shows its policies"
        case .keyCertificateMismatch:
            return "make a request for this key with 'certsign csr --provider vault-transit …', have a CA certify it "
                + "and give that certificate"
        case .untrustedServerCertificate:
            return "trust the server's CA with --param trustedCAFile=PATH (PEM), or check --param url=URL"
        default:
            return nil
        }
    }

    /// AWS KMS (`sign --provider aws-kms --param …`).
    static func awsKMSHint(for error: CertificateProviderError) -> String? {
        switch error.code {
        case .passwordRequired:
            return "give the secret access key with --param-env secretAccessKey=VAR (or AWS_SECRET_ACCESS_KEY), "
                + "never on the command line"
        case .authenticationFailed:
            return "check --param accessKeyID=ID (or AWS_ACCESS_KEY_ID), the secret access key (--param-env "
                + "secretAccessKey=VAR, or AWS_SECRET_ACCESS_KEY), the session token of temporary credentials "
                + "(--param-env sessionToken=VAR, or AWS_SESSION_TOKEN) and --param region=REGION"
        case .unsupportedOperation:
            return
                "give --param keyID=… of an asymmetric key with KeyUsage SIGN_VERIFY ('aws kms describe-key' shows it)"
        case .untrustedServerCertificate:
            return "trust the endpoint's CA with --param trustedCAFile=PATH (PEM), or check --param endpointURL=URL"
        default:
            return nil
        }
    }
}
