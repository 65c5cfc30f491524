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
        let result = try Self.requestCertificate(
            token,
            key: "rsakey",
            subject: "CN=Токен Подписанта,O=ООО Ромашка",
            into: out
        )
        #expect(!(result.output + result.errorOutput).contains(SoftHSMFixture.pin + "\n"))
        try Self.expectRequest(out, carriesPublicKey: token.directory.path("cli-01.pub.der"))
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
        try Self.requestCertificate(token, key: label, subject: "CN=Новый ключ", into: out)
        let exported = token.directory.path("\(label).pub.der")
        try SoftHSMFixture.tool(
            "pkcs11-tool",
            [
                "--module", SoftHSMFixture.softHSMModule, "--token-label", "cli", "--read-object", "--type", "pubkey",
                "--id", id, "-o", exported,
            ],
            config: token.configPath
        )
        try Self.expectRequest(out, carriesPublicKey: exported)
    }

    /// Runs `certsign csr --provider pkcs11` for the key labelled `key` on the token `cli` (the PIN
    /// from the environment) with `subject`, into `out`; expects it to succeed and `openssl req
    /// -verify` to accept the request's signature.
    @discardableResult
    static func requestCertificate(
        _ token: PKCS11CLITests.OwnToken,
        key: String,
        subject: String,
        into out: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ExternalTool.Result {
        let result = try token.certsign(
            [
                "csr", "--provider", "pkcs11", "--param", "uri=pkcs11:token=cli;object=\(key)", "--param",
                "module=\(SoftHSMFixture.softHSMModule)", "--param-env", "pin=TOKEN_PIN", "--subject", subject,
                "--out", out,
            ],
            environment: ["TOKEN_PIN": SoftHSMFixture.pin]
        )
        #expect(result.succeeded, "\(result.errorOutput)", sourceLocation: sourceLocation)
        let verified = try ExternalTool.run("openssl", ["req", "-in", out, "-verify", "-noout"])
        #expect(
            verified.succeeded && verified.errorOutput.contains("verify OK"),
            "\(verified.errorOutput)",
            sourceLocation: sourceLocation
        )
        return result
    }

    /// Expects the request `out` to carry the public key the token exported to `publicKeyDER`.
    static func expectRequest(
        _ out: String,
        carriesPublicKey publicKeyDER: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let inRequest = try ExternalTool.run("openssl", ["req", "-in", out, "-noout", "-pubkey"]).output
        let onToken = try ExternalTool.run("openssl", ["pkey", "-pubin", "-inform", "DER", "-in", publicKeyDER]).output
        #expect(!inRequest.isEmpty && inRequest == onToken, sourceLocation: sourceLocation)
    }
}
