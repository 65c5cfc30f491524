internal import CertificateProviders
internal import Foundation

/// The AWS shared files every AWS tool reads, for the profile `AWS_PROFILE` names (else `default`):
/// the credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`; sections
/// `[NAME]`) and the config file (`AWS_CONFIG_FILE`, else `~/.aws/config`; sections `[default]`
/// and `[profile NAME]`), each `key = value` lines with `#` and `;` comments.
///
/// The values used: `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token` from the
/// credentials file, and `region` from the config file. A profile that `AWS_PROFILE` names and no
/// file has is an error; the `default` profile may be missing, and so may the files then.
struct AWSSharedConfiguration {
    /// The profile's values from the credentials file (empty when it has none).
    let credentials: [String: String]
    /// The profile's values from the config file (empty when it has none).
    let settings: [String: String]
    /// The profile's name and where it was looked for, for messages.
    let profile: String
    let credentialsPath: String

    /// Reads the profile of `environment` from its files.
    /// - Throws: `.invalidParameter` when `AWS_PROFILE` names a profile neither file has, or a file
    ///   that exists cannot be read.
    init(environment: [String: String]) throws {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let named = environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 }
        profile = named ?? "default"
        credentialsPath =
            environment["AWS_SHARED_CREDENTIALS_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? home + "/.aws/credentials"
        let configPath = environment["AWS_CONFIG_FILE"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.aws/config"
        let credentialSections = try Self.sections(of: credentialsPath)
        let configSections = try Self.sections(of: configPath)
        credentials = credentialSections[profile] ?? [:]
        settings =
            configSections[profile == "default" ? "default" : "profile \(profile)"] ?? configSections[profile] ?? [:]
        if named != nil, credentials.isEmpty, settings.isEmpty {
            throw CertificateProviderError.invalidParameter(
                "AWS_PROFILE names the profile '\(profile)', which neither \(credentialsPath) nor \(configPath) has"
            )
        }
    }

    /// The `[section]`s of an INI file and their `key = value` pairs; no file is no sections.
    private static func sections(of path: String) throws -> [String: [String: String]] {
        guard FileManager.default.fileExists(atPath: path) else { return [:] }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CertificateProviderError.invalidParameter("the AWS file \(path) cannot be read")
        }
        var sections: [String: [String: String]] = [:]
        var current: String?
        for rawLine in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                current = name
                sections[name, default: [:]] = sections[name] ?? [:]
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[current, default: [:]][key] = value
        }
        return sections
    }
}
