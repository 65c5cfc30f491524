import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

extension CLI {
    /// `certsign dss login` on the emulator at `url` as the seed's user (the password through
    /// `FMP_PASSWORD`) into `store`, expected to succeed.
    static func dssLogin(
        _ url: URL,
        store: TemporaryDirectory,
        sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let login = try run(
            [
                "dss", "login", "--host", url.absoluteString, "--environment", StandardSeed.environment, "--project",
                StandardSeed.project, "--user", StandardSeed.username, "--password-env", "FMP_PASSWORD",
            ],
            store: store,
            environment: ["FMP_PASSWORD": StandardSeed.password]
        )
        #expect(login.status == 0, "\(login.errorOutput)", sourceLocation: sourceLocation)
    }
}

/// A throwaway CA, a signer and a `.p12` made by the real `openssl pkcs12 -export`.
struct CLIFixture {
    let directory: TemporaryDirectory
    let store: TemporaryDirectory
    let pki: TestPKI
    let signer: SigningIdentity
    let p12Path: String
    let rootPath: String
    let password = "пароль-Тест-42"

    /// - Parameter exportsPKCS12: whether to write the `.p12` (an outside signer of two-phase
    ///   signing holds a PEM key instead, and `openssl pkcs12` cannot write a GOST key without
    ///   the engine's options).
    init(keyType: LocalSigningKey.GenerationParameters = .p256, exportsPKCS12: Bool = true) throws {
        directory = try TemporaryDirectory(prefix: "certsign-cli")
        store = try TemporaryDirectory(prefix: "certsign-store")
        pki = try TestPKI(rootSubject: "CN=CLI Test Root,O=Тест")
        signer = try pki.issueLeaf(subject: "CN=Подписант CLI,O=ООО Ромашка", keyType: keyType)
        rootPath = try directory.write("root.pem", text: pki.root.certificate.pemRepresentation)
        p12Path = directory.path("signer.p12")
        if exportsPKCS12 { try OpenSSLPKCS12.export(signer, password: password, to: p12Path, in: directory) }
    }

    /// The password of the `.p12` in a file (`--password-file`), and a one-page PDF with object streams
    /// (written by qpdf) to sign: their paths.
    func passwordFileAndContract() throws -> (passwordFile: String, contract: String) {
        let passwordFile = try directory.write("p12.pass", text: password)
        let source = try directory.write("source.pdf", TestPDF.minimal())
        let contract = directory.path("contract.pdf")
        #expect(try ExternalTool.run("qpdf", ["--object-streams=generate", source, contract]).status == 0)
        return (passwordFile, contract)
    }

    /// Runs certsign with this fixture's store.
    @discardableResult
    func run(
        _ arguments: [String],
        environment: [String: String] = [:],
        input: String? = nil,
        inputBytes: Data? = nil
    ) throws -> ExternalTool.Result {
        let result = try CLI.run(
            arguments,
            store: store,
            environment: environment,
            input: input,
            inputBytes: inputBytes
        )
        // No secret ever reaches any output.
        #expect(
            !result.output.contains(password) && !result.errorOutput.contains(password),
            "a password leaked: \(arguments)"
        )
        #expect(!result.errorOutput.contains("Fatal error"), "certsign crashed: \(result.errorOutput)")
        return result
    }

    /// Runs `certsign sign DOCUMENT --p12 … EXTRA…` with the fixture's `.p12` (its password through the
    /// environment) and expects it to succeed.
    @discardableResult
    func signWithP12(
        _ document: String,
        _ extra: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ExternalTool.Result {
        let result = try run(
            ["sign", document, "--p12", p12Path, "--password-env", "P12PASS"] + extra,
            environment: ["P12PASS": password]
        )
        #expect(result.status == 0, "\(result.errorOutput)", sourceLocation: sourceLocation)
        return result
    }

    func document(_ name: String, _ text: String) throws -> String { try directory.write(name, text: text) }

    /// Imports the fixture's PKCS#12 under `alias` (the password on stdin) and tells whether it worked.
    func importIdentity(alias: String) throws -> Bool {
        try run(["identity", "import", p12Path, "--alias", alias, "--password-stdin"], input: password).status == 0
    }

    /// `openssl cms -verify` on a detached or attached signature made by certsign.
    func opensslVerifies(_ signature: String, content: String?, cades: Bool = true, ca: String? = nil) throws -> Bool {
        try OpenSSLCMS.verify(signatureFile: signature, contentFile: content, caFile: ca ?? rootPath, cades: cades)
            .succeeded
    }
}
