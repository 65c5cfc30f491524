public import CertificateProviders
internal import Durability
import Foundation

/// `certsign sign --identity ALIAS` and `--p12 FILE`, and what `--provider pkcs12 --param file=…`
/// stores.
extension PKCS12CertificateProvider {
    /// `--identity ALIAS` (a stored identity) and `--p12 FILE` (a file used in memory).
    public static var keySources: [ProviderKeySource] { [storedIdentitySource, fileSource] }

    /// `--identity ALIAS`: a stored identity, unlocked with its store password.
    static let storedIdentitySource = ProviderKeySource(
        name: "identity",
        placeholder: "ALIAS",
        summary: "sign with a stored identity (PASSWORD = its store password)",
        check: { _ = try checkedAlias($0) },
        configure: { request in
            let alias = request.value
            guard let directory = request.context.storeDirectory else {
                throw CertificateProviderError.invalidParameter("--identity needs a store directory")
            }
            guard try PKCS12IdentityStore(directory: directory).metadata(alias: alias) != nil else {
                throw notStored(alias, in: directory)
            }
            var registration: ProviderParameters = [ParameterKey.alias: .string(alias)]
            if let password = try request.password("store password for '\(alias)': ", true) {
                registration[ParameterKey.storePassword] = .secret(password)
            }
            return ProviderKeySource.Configuration(registration: registration)
        }
    )

    /// `--p12 FILE`: opened in memory by the provider; nothing is stored, no copy of the key reaches disk.
    static let fileSource = ProviderKeySource(
        name: "p12",
        placeholder: "FILE",
        summary: "sign with a .p12/.pfx file used directly, nothing stored (PASSWORD = the file's password)",
        type: .file
    ) { request in
        var initialization: ProviderParameters = [
            ParameterKey.data: .data(try FileSystem.readInputFile(request.value, what: "PKCS#12 file"))
        ]
        if let password = try request.password("PKCS#12 password: ", false) {
            initialization[ParameterKey.password] = .secret(password)
        }
        return ProviderKeySource.Configuration(
            registration: [ParameterKey.inMemory: .boolean(true)],
            initialization: initialization
        )
    }

    /// A file given as `file` or `data` (not `inMemory`) is stored under `alias` (SAP's contract):
    /// whether that replaces an entry, and where it goes.
    public static func provisioning(
        for parameters: ProviderParameters,
        context: ProviderContext
    ) throws -> ProviderProvisioning? {
        guard parameters[ParameterKey.file] != nil || parameters[ParameterKey.data] != nil,
            try parameters.boolean(ParameterKey.inMemory) != true,
            let directory = context.storeDirectory
        else { return nil }
        let alias = try parameters.string(ParameterKey.alias) ?? defaultAlias
        let entry = directory.appendingPathComponent("identities").appendingPathComponent(alias).path
        return ProviderProvisioning(
            replacesEntry: try PKCS12IdentityStore(directory: directory).metadata(alias: alias) != nil,
            refusal: "an identity is already stored under the alias '\(alias)' in \(directory.path); "
                + "pass --replace-identity to replace it, --param alias=NAME to store under another name, or --p12 "
                + "FILE to sign without storing"
        ) { identity in
            "stored the identity of '\(identity.certificate.subject)' in the identity store as '\(alias)' (\(entry)); "
                + "'--identity \(alias)' signs with it again, '--p12 FILE' signs without storing"
        }
    }
}
