import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// A URL on the command line never carries credentials: `--tsa`, `--host`, `--param url=` and
/// `--journal` refuse `user:password@`, say where a login goes instead, and never repeat the password.
@Suite(.enabled(if: CLI.isBuilt, "the certsign binary is not built"))
struct URLCredentialsCommandTests {
    static let password = "S3cret-in-url"

    @Test("--tsa, dss login --host, --param url= and --journal with user:password@ are refused without echoing it")
    func credentialsInURLsAreRefused() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("a.txt", "a\n")
        let cases: [(arguments: [String], status: Int32, names: String)] = [
            (
                [
                    "sign", document, "--p12", fixture.p12Path, "--password-env", "P12PASS",
                    "--tsa", "http://user:\(Self.password)@127.0.0.1:9/tsr",
                ],
                64, "--tsa"
            ),
            (
                [
                    "dss", "login", "--host", "https://user:\(Self.password)@127.0.0.1:9/", "--environment", "e",
                    "--project", "p", "--user", "u", "--password-env", "P12PASS",
                ],
                64, "--host"
            ),
            (
                [
                    "sign", document, "--provider", "cryptopro-dss",
                    "--param", "url=http://user:\(Self.password)@127.0.0.1:9/", "--param", "username=u",
                ],
                1, "parameter 'url'"
            ),
            (
                ["--journal", "postgresql://signer:\(Self.password)@127.0.0.1:9/journal", "journal", "head"],
                1, "the journal URL"
            ),
        ]
        for (arguments, status, names) in cases {
            let result = try fixture.run(arguments, environment: ["P12PASS": fixture.password])
            #expect(result.status == status, "\(arguments): \(result.errorOutput)")
            #expect(!result.errorOutput.contains(Self.password), "\(arguments): \(result.errorOutput)")
            #expect(result.errorOutput.contains("\(names) "), "\(arguments): \(result.errorOutput)")
            #expect(result.errorOutput.contains("***@127.0.0.1:9"), "\(arguments): \(result.errorOutput)")
            #expect(result.errorOutput.contains("holds credentials"), "\(arguments): \(result.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
        }
        // A PostgreSQL role without a password stays allowed (its password comes from PGPASSWORD or ~/.pgpass).
        let role = try fixture.run(["--journal", "postgresql://signer@127.0.0.1:9/journal", "journal", "head"])
        #expect(!role.errorOutput.contains("holds credentials"), "\(role.errorOutput)")
    }
}
