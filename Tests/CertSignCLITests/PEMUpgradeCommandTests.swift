import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

@Suite("certsign timestamp and extend rewrite a PEM signature file as PEM")
struct PEMUpgradeCommandTests {
    /// The file at `signature` is one PEM CMS block and `openssl cms -verify -inform PEM` accepts it
    /// over `content` under `ca`.
    func expectPEMThatOpenSSLVerifies(
        _ signature: String,
        content: String,
        ca: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: signature)), as: UTF8.self)
        #expect(
            text.hasPrefix("-----BEGIN CMS-----\n") && text.hasSuffix("-----END CMS-----\n"),
            "\(text.prefix(40))",
            sourceLocation: sourceLocation
        )
        let openssl = try OpenSSLCMS.verify(
            signatureFile: signature,
            contentFile: content,
            caFile: ca,
            cades: true,
            anyPurpose: true,
            inform: "PEM"
        )
        #expect(openssl.succeeded, "\(openssl.errorOutput)", sourceLocation: sourceLocation)
    }

    @Test("timestamp on a --pem .p7s: still PEM, openssl verifies it, verify finds the timestamp")
    func timestampKeepsPEM() throws {
        let fixture = try CLIFixture()
        let emulator = try DSSEmulator(configuration: .init(requestLogLimit: 0))
        try emulator.start()
        defer { emulator.stop() }
        let tsa = try #require(emulator.timestampURL).absoluteString
        let tsaCA = try fixture.directory.write("tsa-ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
        let document = try fixture.document("invoice.txt", "Счёт № 42\n")
        try fixture.signWithP12(document, ["--pem"])
        let signature = document + ".p7s"
        let upgraded = try fixture.run(["timestamp", signature, "--tsa", tsa, "--tsa-ca", tsaCA])
        #expect(upgraded.succeeded, "\(upgraded.errorOutput)")
        try expectPEMThatOpenSSLVerifies(signature, content: document, ca: fixture.rootPath)
        let verified = try fixture.run([
            "--json", "verify", signature, "--content", document, "--ca", fixture.rootPath, "--tsa-ca", tsaCA,
        ])
        #expect(verified.succeeded, "\(verified.output)\(verified.errorOutput)")
        #expect(try CLI.json(verified)["format"] as? String == "cades-t")
    }

    @Test("extend --level b-lt on a --pem CAdES-T: still PEM, openssl verifies it, verify reads B-LT")
    func extendKeepsPEM() throws {
        let setup = try LongTermCommandTests.Setup()
        defer { setup.pki.stop() }
        let document = try setup.fixture.document("contract.txt", "a contract kept as PEM\n")
        let signed = try setup.sign([document], setup.tsa + ["--pem"])
        #expect(signed.succeeded, "\(signed.errorOutput)")
        let root = setup.pki.certificatePath("root")
        let extended = try setup.fixture.run(
            ["extend", document + ".p7s", "--level", "b-lt"] + setup.tsa + ["--ca", root]
        )
        #expect(extended.succeeded, "\(extended.output)\(extended.errorOutput)")
        try expectPEMThatOpenSSLVerifies(document + ".p7s", content: document, ca: root)
        // The level, read from the DER openssl takes out of the PEM.
        let der = setup.fixture.directory.path("contract.der.p7s")
        let converted = try ExternalTool.run(
            "openssl",
            ["cms", "-cmsout", "-inform", "PEM", "-in", document + ".p7s", "-outform", "DER", "-out", der]
        )
        #expect(converted.succeeded, "\(converted.errorOutput)")
        for path in [der, document + ".p7s"] {
            let verified = try setup.fixture.run(
                ["--json", "verify", path, "--content", document, "--ca", root] + Array(setup.tsa.dropFirst(2))
            )
            #expect(try CLI.json(verified)["format"] as? String == "cades-lt", "\(path): \(verified.output)")
        }
    }
}
