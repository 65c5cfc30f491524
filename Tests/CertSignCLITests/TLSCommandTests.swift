import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// `certsign dss login --ca-file --client-identity` against the emulator serving HTTPS and
/// demanding a client certificate; `certsign emulator --tls` as a real process.
@Suite struct TLSCommandTests {
    @Test func dssOverHTTPSWithAStoredClientIdentity() throws {
        let clientCA = try TestPKI(rootSubject: "CN=CLI Client CA", keyType: .p256)
        let client = try clientCA.issueLeaf(subject: "CN=certsign client", keyType: .p256)
        let key = try #require(client.key as? LocalSigningKey)
        let files = try TemporaryDirectory()
        let keyFile = try files.write("client-key.pem", text: try key.pemRepresentation(password: nil))
        let certificateFile = try files.write("client.pem", text: client.certificate.pemRepresentation)
        let clientCAFile = try files.write("client-ca.pem", text: clientCA.root.certificate.pemRepresentation)
        let p12 = files.path("client.p12")
        let env = [
            "FMP_PASSWORD": StandardSeed.password, "DSS_PASSWORD": StandardSeed.dssPassword,
            "IDENTITY_PASSWORD": "идентичность-1",
        ]
        let exported = try ExternalTool.run(
            "openssl",
            [
                "pkcs12", "-export", "-inkey", keyFile, "-in", certificateFile, "-certfile", clientCAFile,
                "-out", p12, "-passout", "env:IDENTITY_PASSWORD",
            ],
            environment: env
        )
        #expect(exported.succeeded, "\(exported.errorOutput)")

        let emulator = try DSSEmulator(
            configuration: .init(tls: .init(clientCertificateAuthorities: [clientCA.root.certificate]))
        )
        let url = try emulator.start()
        defer { emulator.stop() }
        let caFile = try files.write("emulator-ca.pem", text: emulator.certificateAuthorityPEM)
        let store = try TemporaryDirectory()
        let imported = try CLI.run(
            ["identity", "import", p12, "--alias", "tls-client", "--password-env", "IDENTITY_PASSWORD"],
            store: store,
            environment: env
        )
        #expect(imported.status == 0, "\(imported.errorOutput)")

        let login = [
            "dss", "login", "--host", url.absoluteString, "--environment", StandardSeed.environment, "--project",
            StandardSeed.project,
            "--user", StandardSeed.username, "--password-env", "FMP_PASSWORD",
        ]
        let untrusted = try CLI.run(login, store: store, environment: env)
        #expect(untrusted.status == 1)
        #expect(
            untrusted.errorOutput.contains("'CN=DSS Emulator,O=swift-certificate-providers'")
                && untrusted.errorOutput.contains("is not trusted"),
            "\(untrusted.errorOutput)"
        )
        let noIdentity = try CLI.run(login + ["--ca-file", caFile], store: store, environment: env)
        #expect(noIdentity.status == 1)
        #expect(
            noIdentity.errorOutput.contains("refused the TLS client certificate with the alert 'certificate required'"),
            "\(noIdentity.errorOutput)"
        )

        let loggedIn = try CLI.run(
            login + [
                "--ca-file", caFile, "--client-identity", "tls-client", "--client-identity-password-env",
                "IDENTITY_PASSWORD",
            ],
            store: store,
            environment: env
        )
        #expect(loggedIn.status == 0, "\(loggedIn.errorOutput)")
        // The TLS settings are kept beside the provider's session: where the password comes from, never the password.
        let tls = try String(contentsOf: store.url.appendingPathComponent("fmp-tls.json"), encoding: .utf8)
        let session = try String(contentsOf: store.url.appendingPathComponent("fmp-session.json"), encoding: .utf8)
        #expect(tls.contains("IDENTITY_PASSWORD") && tls.contains("tls-client") && !tls.contains("идентичность-1"))
        #expect(!session.contains("идентичность-1"))
        // The next command reuses the CA file and the identity kept from the login.
        let certificates = try CLI.run(
            ["dss", "certificates", "--dss-password-env", "DSS_PASSWORD"],
            store: store,
            environment: env
        )
        #expect(certificates.status == 0, "\(certificates.errorOutput)")
        #expect(certificates.output.contains("12831"))
        let usage = try CLI.run(
            login + ["--client-identity-password-env", "IDENTITY_PASSWORD"],
            store: store,
            environment: env
        )
        #expect(usage.status == 64)
        // Forgetting the session forgets the TLS settings it was logged in with (the provider removes both).
        let cleared = try CLI.run(["sessions", "clear", "fmp-dss"], store: store, environment: env)
        #expect(cleared.status == 0, "\(cleared.errorOutput)")
        let kept = ["fmp-tls.json", "fmp-session.json"].filter {
            FileManager.default.fileExists(atPath: store.url.appendingPathComponent($0).path)
        }
        #expect(kept.isEmpty, "\(kept)")
    }

    @Test func emulatorServesHTTPSWithItsCA() throws {
        let files = try TemporaryDirectory()
        let caOut = files.path("ca.pem")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = ["--json", "emulator", "--tls", "--ca-out", caOut]
        var environment = ProcessInfo.processInfo.environment
        environment["CERTSIGN_HOME"] = files.path("home")
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        var line: [UInt8] = []
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let announced = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        let url = try #require(announced["url"] as? String)
        #expect(url.hasPrefix("https://127.0.0.1:"))
        #expect(announced["tls"] as? Bool == true)
        // curl(1), not this package, checks the server certificate against the written CA.
        let fetched = try ExternalTool.run(
            "curl",
            ["-sS", "--cacert", caOut, "-o", "/dev/null", "-w", "%{http_code}", url + "api/v1/nothing/"]
        )
        #expect(fetched.output == "404", "\(fetched.errorOutput)")
        let localhost = url.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        #expect(
            try ExternalTool.run(
                "curl",
                ["-sS", "--cacert", caOut, "-o", "/dev/null", "-w", "%{http_code}", localhost + "api/v1/nothing/"]
            ).output == "404"
        )
        let refused = try ExternalTool.run("curl", ["-sS", "-o", "/dev/null", url + "api/v1/nothing/"])
        #expect(!refused.succeeded)
    }
}
