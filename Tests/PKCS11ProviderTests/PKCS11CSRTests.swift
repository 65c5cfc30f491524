import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign csr --provider pkcs11` against a SoftHSM token made by the fixture's tools.
@Suite(
    "certsign csr with a PKCS#11 token",
    .enabled(
        if: SoftHSMFixture.isAvailable && CLI.isBuilt,
        "softhsm2, opensc, openssl or the certsign binary is missing"
    )
)
struct PKCS11CSRTests {
    @Test(
        "certsign csr --provider pkcs11: a request the token's key signed, openssl verifies it, the token's public key in it"
    )
    func certificateRequest() throws {
        let token = try PKCS11CLITests.OwnToken()
        let out = token.directory.path("token.csr")
        let result = try token.certsign(
            [
                "csr", "--provider", "pkcs11", "--param", "uri=pkcs11:token=cli;object=rsakey", "--param",
                "module=\(SoftHSMFixture.softHSMModule)", "--param-env", "pin=TOKEN_PIN", "--subject",
                "CN=Токен Подписанта,O=ООО Ромашка", "--out", out,
            ],
            environment: ["TOKEN_PIN": SoftHSMFixture.pin]
        )
        #expect(result.succeeded, "\(result.errorOutput)")
        #expect(!(result.output + result.errorOutput).contains(SoftHSMFixture.pin + "\n"))
        let verified = try ExternalTool.run("openssl", ["req", "-in", out, "-verify", "-noout"])
        #expect(verified.succeeded && verified.errorOutput.contains("verify OK"), "\(verified.errorOutput)")
        let inRequest = try ExternalTool.run("openssl", ["req", "-in", out, "-noout", "-pubkey"]).output
        let onToken = try ExternalTool.run(
            "openssl",
            ["pkey", "-pubin", "-inform", "DER", "-in", token.directory.path("cli-01.pub.der")]
        ).output
        #expect(!inRequest.isEmpty && inRequest == onToken)
        let subject = try ExternalTool.run("openssl", ["req", "-in", out, "-noout", "-subject", "-nameopt", "utf8"])
        #expect(subject.output.contains("Токен Подписанта"), "\(subject.output)")
    }

    @Test(
        "a token key without a certificate (RSA, EC): the request is signed by it and carries its public key",
        arguments: [("rsanew", "02", "rsa:2048"), ("ecnew", "03", "EC:prime256v1")]
    )
    func keyWithoutCertificate(label: String, id: String, type: String) throws {
        let token = try PKCS11CLITests.OwnToken()
        let maker = TokenMaker(
            directory: token.directory,
            configPath: token.configPath,
            caPath: token.directory.path("ca.pem"),
            caKeyPath: token.directory.path("ca.key")
        )
        try maker.keyPair(token: "cli", id: id, label: label, type: type, subject: nil)
        let out = token.directory.path("\(label).csr")
        let result = try token.certsign(
            [
                "csr", "--provider", "pkcs11", "--param", "uri=pkcs11:token=cli;object=\(label)", "--param",
                "module=\(SoftHSMFixture.softHSMModule)", "--param-env", "pin=TOKEN_PIN", "--subject",
                "CN=Новый ключ", "--out", out,
            ],
            environment: ["TOKEN_PIN": SoftHSMFixture.pin]
        )
        #expect(result.succeeded, "\(result.errorOutput)")
        let verified = try ExternalTool.run("openssl", ["req", "-in", out, "-verify", "-noout"])
        #expect(verified.succeeded && verified.errorOutput.contains("verify OK"), "\(verified.errorOutput)")
        let exported = token.directory.path("\(label).pub.der")
        try SoftHSMFixture.tool(
            "pkcs11-tool",
            [
                "--module", SoftHSMFixture.softHSMModule, "--token-label", "cli", "--read-object", "--type", "pubkey",
                "--id", id, "-o", exported,
            ],
            config: token.configPath
        )
        let inRequest = try ExternalTool.run("openssl", ["req", "-in", out, "-noout", "-pubkey"]).output
        let onToken = try ExternalTool.run("openssl", ["pkey", "-pubin", "-inform", "DER", "-in", exported]).output
        #expect(!inRequest.isEmpty && inRequest == onToken)
    }
}
