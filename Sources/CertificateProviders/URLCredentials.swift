import Foundation

/// Credentials never ride in a URL: a `user:password@` in a URL given on a command line or in a
/// parameter shows in the process list, shell history and logs, is echoed in errors, and an `http`
/// URL sends it in clear text. Every URL a caller gives is checked here, once.
public enum URLCredentials {
    /// The user information of `url` (`user:password` in `scheme://user:password@host/`), or nil.
    public static func userInformation(of url: String) -> Substring? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return nil }
        return authority[..<at]
    }

    /// `url` with its user information replaced by `***` (the form an error may show).
    public static func redacted(_ url: String) -> String {
        guard let information = userInformation(of: url) else { return url }
        return url.replacingCharacters(in: information.startIndex...information.endIndex, with: "***@")
    }

    /// Refuses a URL that carries credentials.
    /// - Parameters:
    ///   - url: the URL as given.
    ///   - what: what gave it, for the message (`--tsa`, `parameter 'url'`, `the journal URL`).
    ///   - instead: where the credentials go instead.
    ///   - allowingUser: whether a user name without a password may stay (a PostgreSQL role).
    /// - Throws: `.invalidParameter` naming `what` and the URL with its user information cut out
    ///   (the password is never repeated).
    public static func check(_ url: String, what: String, instead: String, allowingUser: Bool = false) throws {
        guard let information = userInformation(of: url) else { return }
        if allowingUser && !information.contains(":") { return }
        throw CertificateProviderError.invalidParameter(
            "\(what) \(redacted(url)) holds credentials (user\(allowingUser ? ":password" : "")@), which would "
                + "show in the process list and in logs and travel as the URL does; remove them and \(instead)"
        )
    }
}
