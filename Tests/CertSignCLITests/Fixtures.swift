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

/// A throwaway CA, a signer and a `.p12` made by the real `openssl pkcs12 -export` (their members
/// read through: `fixture.signer`, `fixture.p12Path`), with a work directory and a store.
@dynamicMemberLookup
struct CLIFixture {
    let directory: TemporaryDirectory
    let store: TemporaryDirectory
    let files: PKCS12SignerFiles

    /// - Parameter exportsPKCS12: whether to write the `.p12` (see ``PKCS12SignerFiles``).
    init(keyType: LocalSigningKey.GenerationParameters = .p256, exportsPKCS12: Bool = true) throws {
        directory = try TemporaryDirectory(prefix: "certsign-cli")
        store = try TemporaryDirectory(prefix: "certsign-store")
        files = try PKCS12SignerFiles(
            rootSubject: "CN=CLI Test Root,O=Тест",
            signerSubject: "CN=Подписант CLI,O=ООО Ромашка",
            keyType: keyType,
            password: "пароль-Тест-42",
            exportsPKCS12: exportsPKCS12,
            in: directory
        )
    }

    subscript<T>(dynamicMember member: KeyPath<PKCS12SignerFiles, T>) -> T { files[keyPath: member] }

    /// The password of the `.p12` in a file (`--password-file`), and a one-page PDF with object streams
    /// (written by qpdf) to sign: their paths.
    func passwordFileAndContract() throws -> (passwordFile: String, contract: String) {
        let passwordFile = try directory.write("p12.pass", text: files.password)
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
            !result.output.contains(files.password) && !result.errorOutput.contains(files.password),
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
            ["sign", document, "--p12", files.p12Path, "--password-env", "P12PASS"] + extra,
            environment: ["P12PASS": files.password]
        )
        #expect(result.status == 0, "\(result.errorOutput)", sourceLocation: sourceLocation)
        return result
    }

    func document(_ name: String, _ text: String) throws -> String { try directory.write(name, text: text) }

    /// Imports the fixture's PKCS#12 under `alias` (the password on stdin) and tells whether it worked.
    func importIdentity(alias: String) throws -> Bool {
        try run(["identity", "import", files.p12Path, "--alias", alias, "--password-stdin"], input: files.password)
            .status == 0
    }

    /// `openssl cms -verify` on a detached or attached signature made by certsign.
    func opensslVerifies(_ signature: String, content: String?, cades: Bool = true, ca: String? = nil) throws -> Bool {
        try OpenSSLCMS.verify(
            signatureFile: signature,
            contentFile: content,
            caFile: ca ?? files.rootPath,
            cades: cades
        )
        .succeeded
    }
}
