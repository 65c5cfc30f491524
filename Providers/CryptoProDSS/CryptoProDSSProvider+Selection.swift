import CertificateProviders
import Foundation
import HTTPClient

extension CryptoProDSSProvider {
    /// Whether a session made for `key` serves `parameters`: every one of `url`, `username`,
    /// `clientID` (default ``CryptoProDSSClient/Configuration/defaultClientID``) and the certificate
    /// selection that the parameters give must be the session's.
    static func matches(
        _ key: SessionKey,
        _ parameters: ProviderParameters,
        cachedCertificateID: Int? = nil
    ) -> Bool {
        let url: URL?
        let username: String?
        let clientID: String?
        let selection: String
        do {
            url = try parameters.url(ParameterKey.url)
            username = try parameters.string(ParameterKey.username)
            clientID = try parameters.string(ParameterKey.clientID)
            selection = try self.selection(parameters)
        } catch {
            return false
        }
        if let url, url.absoluteString != key.url { return false }
        if let username, username != key.username { return false }
        if (clientID ?? CryptoProDSSClient.Configuration.defaultClientID) != key.clientID { return false }
        if selection == key.selection { return true }
        // A cache from before selections were recorded, or an id that names the cached certificate.
        if let cachedCertificateID, selection == "id:\(cachedCertificateID)" { return true }
        return parameters[ParameterKey.certificateID] == nil && parameters[ParameterKey.certificate] == nil
            && key.selection == "default"
    }

    /// Whether an in-memory session serves `parameters`: it was made for what they ask
    /// (``matches(_:_:cachedCertificateID:)``) and, when they give `password` or `clientSecret`,
    /// with those very credentials.
    static func serves(_ session: Session, _ parameters: ProviderParameters) -> Bool {
        guard matches(session.key, parameters) else { return false }
        let given = loginCredentials(parameters)
        guard given.contains(where: { $0.value != nil }) else { return true }
        return given[0].value == session.password && given[1].value == session.clientSecret
    }

    /// The login credentials of `parameters` as a session verifier takes them: `password`, then
    /// `clientSecret` (nil when not given).
    static func loginCredentials(_ parameters: ProviderParameters) -> [(name: String, value: Secret?)] {
        [
            (ParameterKey.password.rawValue, (try? parameters.secret(ParameterKey.password)) ?? nil),
            (ParameterKey.clientSecret.rawValue, (try? parameters.secret(ParameterKey.clientSecret)) ?? nil),
        ]
    }

    /// The certificate selection the parameters ask for: `id:N`, `name:X` or `default`.
    static func selection(_ parameters: ProviderParameters) throws -> String {
        if let id = try parameters.integer(ParameterKey.certificateID) { return id == 0 ? "default" : "id:\(id)" }
        if let name = try parameters.string(ParameterKey.certificate) { return "name:\(name)" }
        return "default"
    }

    /// Picks a certificate by id (0 = default), by name, or the default / only one.
    static func select(
        from certificates: [CryptoProCertificate],
        id: Int?,
        name: String?
    ) throws -> CryptoProCertificate {
        let available = certificates.isEmpty ? "none" : certificates.map(\.label).joined(separator: ", ")
        if let id, id != 0 {
            guard let match = certificates.first(where: { $0.id == id }) else {
                throw CertificateProviderError.invalidParameter(
                    "certificate \(id) is not among the user's CryptoPro DSS certificates (\(available))"
                )
            }
            return match
        }
        if id == nil, let name {
            let matches = certificates.filter {
                $0.friendlyName == name || $0.distinguishedName == name || $0.certificate.subject == name
                    || $0.certificate.subjectAttribute("CN") == name
            }
            guard matches.count == 1 else {
                throw CertificateProviderError.invalidParameter(
                    matches.isEmpty
                        ? "no CryptoPro DSS certificate is named '\(name)' (friendly name, subject or CN); the user "
                            + "has: \(available)"
                        : "several CryptoPro DSS certificates are named '\(name)' "
                            + "(\(matches.map(\.label).joined(separator: ", "))); set parameter 'certificateID'"
                )
            }
            return matches[0]
        }
        if let match = certificates.first(where: \.isDefault) { return match }
        if id == nil, certificates.count == 1 { return certificates[0] }
        throw CertificateProviderError.invalidParameter(
            certificates.isEmpty
                ? "the user has no CryptoPro DSS certificates"
                : "the user has no default CryptoPro DSS certificate; set parameter 'certificateID' or 'certificate' "
                    + "(the user has: \(available))"
        )
    }
}
