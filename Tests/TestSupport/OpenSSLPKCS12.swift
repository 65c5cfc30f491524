public import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Testing

/// `openssl pkcs12 -export`: PKCS#12 files made by the real tool, not by the code under test.
public enum OpenSSLPKCS12 {
    /// Writes `identity` (key, certificate, chain) as a PKCS#12 file at `path` with `openssl pkcs12
    /// -export`; the password goes through the environment, the unencrypted key file is removed again.
    /// - Parameters:
    ///   - name: the friendly name (`-name`).
    ///   - directory: where the key, certificate and chain PEM files are written for the tool.
    public static func export(
        _ identity: SigningIdentity,
        password: String,
        name: String = "signer",
        to path: String,
        in directory: TemporaryDirectory
    ) throws {
        let local = try #require(identity.key as? LocalSigningKey)
        let key = try directory.write(
            "export-\(UUID().uuidString).key",
            text: try local.pemRepresentation(password: nil)
        )
        defer { try? FileManager.default.removeItem(atPath: key) }
        var arguments = [
            "pkcs12", "-export", "-inkey", key,
            "-in", try directory.write("export-\(UUID().uuidString).pem", text: identity.certificate.pemRepresentation),
            "-name", name, "-out", path, "-passout", "env:P12PASS",
        ]
        if !identity.chain.isEmpty {
            let chain = identity.chain.map(\.pemRepresentation).joined()
            arguments += ["-certfile", try directory.write("export-\(UUID().uuidString)-chain.pem", text: chain)]
        }
        let made = try ExternalTool.run("openssl", arguments, environment: ["P12PASS": password])
        try #require(made.succeeded, "openssl pkcs12 -export failed: \(made.errorOutput)")
    }
}
