import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import TestSupport
import Testing

/// Shared fixtures: one test CA, real tools to write PKCS#12 files, and `openssl` to verify signatures.
enum Fixtures {
    /// One root for the whole suite (building it costs an RSA key generation).
    static let pki: TestPKI = {
        // A failing TestPKI means OpenSSL itself is broken; every test would fail anyway.
        try! TestPKI(rootSubject: "CN=PKCS12 Test Root,O=swift-certificate-providers")
    }()

    static let hasOpenSSL = ExternalTool.isAvailable("openssl")
    static let hasKeytool = ExternalTool.isAvailable("keytool")
    static let hasPythonCryptography: Bool = {
        guard ExternalTool.isAvailable("python3") else { return false }
        return
            (try? ExternalTool.run("python3", ["-c", "import cryptography.hazmat.primitives.serialization.pkcs12"]))?
            .succeeded ?? false
    }()

    /// Runs a tool and requires it to succeed.
    @discardableResult
    static func run(
        _ tool: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        directory: TemporaryDirectory? = nil
    ) throws -> ExternalTool.Result {
        try ExternalTool.run(tool, arguments, environment: environment, directory: directory?.url).requireSuccess()
    }

    /// Writes key.pem, cert.pem and (when the chain is not empty) chain.pem for `identity`.
    static func writePEM(_ identity: SigningIdentity, in directory: TemporaryDirectory, prefix: String = "") throws {
        let key = try #require(identity.key as? LocalSigningKey)
        try directory.write("\(prefix)key.pem", text: try key.pemRepresentation(password: nil))
        try directory.write("\(prefix)cert.pem", text: identity.certificate.pemRepresentation)
        if !identity.chain.isEmpty {
            try directory.write("\(prefix)chain.pem", text: identity.chain.map(\.pemRepresentation).joined())
        }
    }

    /// `openssl pkcs12 -export` of `identity` with the password passed through the environment.
    static func opensslExport(
        _ identity: SigningIdentity,
        password: String?,
        arguments extra: [String] = [],
        name: String? = "signer",
        in directory: TemporaryDirectory
    ) throws -> [UInt8] {
        try writePEM(identity, in: directory)
        var arguments = [
            "pkcs12", "-export", "-in", directory.path("cert.pem"), "-inkey", directory.path("key.pem"),
            "-out", directory.path("out.p12"),
        ]
        if !identity.chain.isEmpty { arguments += ["-certfile", directory.path("chain.pem")] }
        if let name { arguments += ["-name", name] }
        arguments += password.map { _ in ["-passout", "env:P12PASS"] } ?? ["-passout", "pass:"]
        try run("openssl", arguments + extra, environment: password.map { ["P12PASS": $0] } ?? [:])
        return try directory.read("out.p12")
    }

    /// Signs a document with `identity` and checks the signature with `openssl dgst -verify` against
    /// the public key of the identity's certificate.
    static func signAndVerifyWithOpenSSL(_ identity: SigningIdentity) async throws {
        let directory = try TemporaryDirectory(prefix: "pkcs12-verify")
        let document = Array("Документ для подписи \(UUID().uuidString)".utf8)
        let signature = try await identity.key.signature(
            for: document,
            digestAlgorithm: .sha256,
            scheme: identity.key.defaultScheme
        )
        try directory.write("document.txt", document)
        try directory.write("signature.bin", signature)
        try directory.write("cert.pem", text: identity.certificate.pemRepresentation)
        try run(
            "openssl",
            ["x509", "-in", directory.path("cert.pem"), "-noout", "-pubkey", "-out", directory.path("public.pem")]
        )
        let result = try ExternalTool.run(
            "openssl",
            [
                "dgst", "-sha256", "-verify", directory.path("public.pem"),
                "-signature", directory.path("signature.bin"), directory.path("document.txt"),
            ]
        )
        #expect(
            result.succeeded && result.output.contains("Verified OK"),
            "openssl could not verify: \(result.output) \(result.errorOutput)"
        )
        #expect(identity.key.matches(identity.certificate))
    }

    /// The `pkcs12-store-tool` executable built next to the test bundle.
    static var storeToolPath: String { ExternalTool.builtProduct("pkcs12-store-tool") ?? "pkcs12-store-tool" }
}
