import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

@Suite("certsign with --provider csc and certsign csc credentials")
struct CSCCommandTests {
    func run(
        _ arguments: [String],
        store: TemporaryDirectory,
        environment: [String: String] = [:]
    ) throws -> ExternalTool.Result {
        try CLI.run(arguments, store: store, environment: environment)
    }

    @Test(
        "certsign sign DOC… --provider csc: secrets from the environment, one authorization for all, every .p7s verifies with openssl"
    )
    func sign() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let store = try TemporaryDirectory()
            let work = try TemporaryDirectory()
            let contents = ["a.txt": "первый документ\n", "b.txt": "второй документ\n"]
            let paths = try contents.keys.sorted().map { try work.write($0, text: contents[$0]!) }
            let result = try run(
                ["sign"] + paths + [
                    "--provider", "csc", "--param", "url=\(url.absoluteString)", "--param", "clientID=Leonid",
                    "--param-env", "clientSecret=CSC_SECRET", "--param", "credentialID=\(pinCredential)",
                    "--param-env", "pin=CSC_PIN",
                ],
                store: store,
                environment: ["CSC_SECRET": StandardSeed.password, "CSC_PIN": StandardSeed.certificatePIN]
            )
            #expect(result.succeeded, "\(result.output)\n\(result.errorOutput)")
            for path in paths { try opensslVerify(signatureFile: path + ".p7s", contentFile: path) }
            #expect(requests(emulator, "credentials/authorize").count == 1, "two documents, one authorization")
            #expect(try members(requests(emulator, "credentials/authorize").first)["numSignatures"] == 2)
            #expect(requests(emulator, "signatures/signHash").count == 1)
            #expect(!(result.output + result.errorOutput).contains(StandardSeed.password))
        }
    }

    @Test("a secret given with --param is refused as a usage error (64) before anything is sent")
    func secretOnCommandLine() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let store = try TemporaryDirectory()
            for secret in ["clientSecret=123123", "pin=123", "otp=246810"] {
                let result = try run(
                    [
                        "sign", "/dev/null", "--provider", "csc", "--param", "url=\(url.absoluteString)", "--param",
                        secret,
                    ],
                    store: store
                )
                #expect(result.status == 64, "\(secret): \(result.errorOutput)")
            }
            #expect(emulator.receivedRequests.isEmpty)
        }
    }

    @Test("certsign --json csc credentials lists every credential with subject, key, SCAL and auth mode")
    func credentials() async throws {
        try await withEmulator(.faultsAndSecrets) { _, url in
            let store = try TemporaryDirectory()
            let arguments = [
                "csc", "credentials", "--param", "url=\(url.absoluteString)", "--param", "clientID=Leonid",
                "--param-env", "clientSecret=CSC_SECRET",
            ]
            let json = try run(["--json"] + arguments, store: store, environment: ["CSC_SECRET": StandardSeed.password])
            #expect(json.succeeded, "\(json.errorOutput)")
            let object = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])
            let credentials = try #require(object["credentials"] as? [[String: Any]])
            #expect(credentials.map { $0["id"] as? String } == [pinCredential, scal2Credential])
            #expect(
                credentials[0]["subject"] as? String == sharedSeed.users[0].certificates[0].identity.certificate.subject
            )
            #expect(credentials[0]["auth"] as? [String] == ["PIN"] && credentials[0]["scal"] as? Int == 1)
            #expect(credentials[1]["authMode"] as? String == "implicit" && credentials[1]["scal"] as? Int == 2)
            #expect(credentials[1]["key"] as? String == "RSA" && credentials[1]["keyLength"] as? Int == 2048)
            let human = try run(arguments, store: store, environment: ["CSC_SECRET": StandardSeed.password])
            #expect(human.succeeded)
            #expect(
                human.output.contains("SUBJECT") && human.output.contains("Леонид Тестов (RSA)")
                    && human.output.contains("implicit")
            )
        }
    }
}
