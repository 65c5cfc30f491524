import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// A test CA made by the openssl tool (the "openssl x509 -req" of the README path): `ca.pem`,
/// `ca.key` in `directory`.
struct OpenSSLTestCA {
    let directory: TemporaryDirectory
    var certificatePath: String { directory.path("ca.pem") }
    var certificate: Certificate {
        get throws { try Certificate(pemEncoded: String(decoding: try directory.read("ca.pem"), as: UTF8.self)) }
    }

    init(in directory: TemporaryDirectory) throws {
        self.directory = directory
        let made = try ExternalTool.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
                "-subj", "/CN=Vault Test CA", "-keyout", directory.path("ca.key"), "-out", directory.path("ca.pem"),
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ]
        )
        try #require(made.succeeded, "openssl req -x509: \(made.errorOutput)")
    }

    /// `openssl x509 -req`: a signing certificate for the request in `csrPath` (its subject and
    /// alternative names copied), written to `name`; returns its path.
    func issue(_ csrPath: String, as name: String) throws -> String {
        let extensions = try directory.write(
            "\(name).ext",
            text: "keyUsage=critical,digitalSignature,nonRepudiation\nsubjectKeyIdentifier=hash\n"
                + "authorityKeyIdentifier=keyid\n"
        )
        let out = directory.path(name)
        let issued = try ExternalTool.run(
            "openssl",
            [
                "x509", "-req", "-in", csrPath, "-CA", certificatePath, "-CAkey", directory.path("ca.key"),
                "-CAcreateserial", "-days", "30", "-copy_extensions", "copy", "-extfile", extensions, "-out", out,
            ]
        )
        try #require(issued.succeeded, "openssl x509 -req: \(issued.errorOutput)")
        return out
    }
}

/// The `--provider vault-transit` arguments for `key` on `server` (the token from VAULT_TOKEN).
func vaultArguments(_ url: URL, key: String, extra: [String: String] = [:]) -> [String] {
    var arguments = [
        "--provider", "vault-transit", "--param", "url=\(url.absoluteString)", "--param", "key=\(key)",
        "--param-env", "token=VAULT_TOKEN",
    ]
    for (name, value) in extra.sorted(by: { $0.key < $1.key }) { arguments += ["--param", "\(name)=\(value)"] }
    return arguments
}

/// The public key of a PEM request or key, as `openssl pkey -pubout` prints it (PEM text).
func opensslPublicKey(ofRequest path: String) throws -> String {
    let result = try ExternalTool.run("openssl", ["req", "-in", path, "-noout", "-pubkey"])
    try #require(result.succeeded, "openssl req -pubkey: \(result.errorOutput)")
    return result.output
}

/// Requires that `secret` is nowhere in the run's output nor in any file of `store` (journal,
/// sessions, identities).
func expectNoSecret(
    _ secret: String,
    in result: ExternalTool.Result,
    store: TemporaryDirectory,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(!result.output.contains(secret), "the token is on stdout", sourceLocation: sourceLocation)
    #expect(!result.errorOutput.contains(secret), "the token is on stderr", sourceLocation: sourceLocation)
    let needle = Data(secret.utf8)
    let files = FileManager.default.enumerator(at: store.url, includingPropertiesForKeys: nil)
    while let file = files?.nextObject() as? URL {
        guard let data = try? Data(contentsOf: file) else { continue }
        #expect(data.range(of: needle) == nil, "the token is in \(file.path)", sourceLocation: sourceLocation)
    }
}
