import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// Provider sessions: what the caller asks for is what happens, with two emulator users
/// (Leonid, Maria) and their certificates, run as real `certsign` processes.
@Suite struct ProviderSessionCommandTests {
    static let env = [
        "LEONID_PASSWORD": StandardSeed.password, "LEONID_PIN": StandardSeed.certificatePIN,
        "MARIA_PASSWORD": "456456", "MARIA_PIN": "456",
        "FMP_PASSWORD": StandardSeed.password, "DSS_PASSWORD": StandardSeed.dssPassword,
        "PIN": StandardSeed.certificatePIN,
    ]

    static func cryptoPro(
        _ url: String,
        user: String,
        certificate: Int,
        passwordVariable: String,
        pinVariable: String?
    ) -> [String] {
        var arguments = [
            "--provider", "cryptopro-dss", "--param", "url=\(url)", "--param", "username=\(user)",
            "--param-env", "password=\(passwordVariable)", "--param", "certificateID=\(certificate)",
        ]
        if let pinVariable { arguments += ["--param-env", "pin=\(pinVariable)"] }
        return arguments
    }

    /// `--provider cryptopro-dss …` for Maria's certificate 12900 with her PIN.
    static func maria(_ url: String) -> [String] {
        cryptoPro(url, user: "Maria", certificate: 12900, passwordVariable: "MARIA_PASSWORD", pinVariable: "MARIA_PIN")
    }

    /// `certsign sign DOCUMENT --out STORE/NAME PROVIDER…` with the suite's environment.
    static func sign(
        _ document: String,
        into name: String,
        _ provider: [String],
        store: TemporaryDirectory
    ) throws -> ExternalTool.Result {
        try CLI.run(["sign", document, "--out", store.path(name)] + provider, store: store, environment: env)
    }

    /// The signer's subject, as `certsign verify` reports it.
    static func signer(of signature: String, content: String) throws -> String {
        let verified = try CLI.run(["--json", "verify", signature, "--content", content, "--no-chain-check"])
        return (try CLI.json(verified)["signer"] as? [String: Any])?["subject"] as? String ?? "none"
    }

    @Test(
        "item 1: a cached CryptoPro session never overrides --param (other user, other certificate, other server); the PIN is kept"
    )
    func cryptoProSessionFollowsParameters() throws {
        try withEmulatorAndStore { emulator, url, store in
            let url = url.absoluteString
            let document = try store.write("act.txt", text: "Акт сверки\n")

            // Leonid with his RSA certificate (no PIN): the session is cached in the store.
            let leonidRSA = Self.cryptoPro(
                url,
                user: "Leonid",
                certificate: StandardSeed.secondCertificateID,
                passwordVariable: "LEONID_PASSWORD",
                pinVariable: nil
            )
            let leonid = try Self.sign(document, into: "leonid.p7s", leonidRSA, store: store)
            #expect(leonid.status == 0, "\(leonid.errorOutput)")
            #expect(FileManager.default.fileExists(atPath: store.path("cryptopro-dss-session.json")))

            // Maria with certificate 12900 and her PIN: signed by Maria, not by the cached Leonid.
            let maria = try Self.sign(document, into: "maria.p7s", Self.maria(url), store: store)
            #expect(maria.status == 0, "\(maria.errorOutput)")
            #expect(try Self.signer(of: store.path("leonid.p7s"), content: document).contains("Леонид Тестов (RSA)"))
            #expect(try Self.signer(of: store.path("maria.p7s"), content: document).contains("Мария Иванова"))

            // Another server than the cached one: the cached session must not sign for it.
            let otherServer = Self.maria("http://127.0.0.1:1/")
            let elsewhere = try Self.sign(document, into: "elsewhere.p7s", otherServer, store: store)
            #expect(elsewhere.status == 1)
            #expect(!FileManager.default.fileExists(atPath: store.path("elsewhere.p7s")))

            // The same PIN-protected command twice: the second run uses the cache and still sends the PIN.
            let leonidPIN = Self.cryptoPro(
                url,
                user: "Leonid",
                certificate: StandardSeed.certificateID,
                passwordVariable: "LEONID_PASSWORD",
                pinVariable: "LEONID_PIN"
            )
            for round in 1...2 {
                let pinned = try Self.sign(document, into: "pin-\(round).p7s", leonidPIN, store: store)
                #expect(pinned.status == 0, "round \(round): \(pinned.errorOutput)")
            }
            let logins = emulator.receivedRequests.filter { $0.path.hasSuffix("/STS/oauth/token") }.count
            #expect(logins == 3, "Leonid RSA, Maria, Leonid 12831; the second PIN run reuses the cache")
        }
    }

    @Test(
        "item 2: two real processes renewing one FMP session at once both succeed, and the session on file keeps working"
    )
    func fmpSessionUnderTwoProcesses() throws {
        try withEmulatorAndStore { emulator, url, store in
            try CLI.dssLogin(url, store: store)
            for round in 0..<3 {
                // Every access token expires: each process must renew with the single-use refresh token.
                emulator.expireAccessTokens()
                let processes = try (0..<3).map { _ -> (Process, ExternalTool.CloseOnExecPipe) in
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: CLI.binary)
                    process.arguments = ["dss", "signs"]
                    process.environment = ["CERTSIGN_HOME": store.url.path, "PATH": "/usr/bin:/bin"]
                    let pipe = try ExternalTool.CloseOnExecPipe()
                    process.standardError = pipe.writing
                    process.standardOutput = FileHandle.nullDevice
                    try process.run()
                    try pipe.writing.close()
                    return (process, pipe)
                }
                for (process, pipe) in processes {
                    let errors = String(decoding: pipe.reading.readDataToEndOfFile(), as: UTF8.self)
                    process.waitUntilExit()
                    #expect(process.terminationStatus == 0, "round \(round): \(errors)")
                }
            }
            emulator.expireAccessTokens()
            let after = try CLI.run(["dss", "signs"], store: store)
            #expect(after.status == 0, "the session on file was overwritten by an older one: \(after.errorOutput)")
        }
    }

    @Test(
        "item 3: signatures list shows the FMP history after dss login + dss sign, and nothing before; sign --provider fmp-dss points to dss sign"
    )
    func fmpThroughTheGenericPath() throws {
        try withEmulatorAndStore { _, url, store in
            let before = try CLI.run(["signatures", "list"], store: store)
            #expect(before.status == 0)
            // A provider nobody logged in to is not asked, and nothing is said about it.
            #expect(before.errorOutput.isEmpty, "\(before.errorOutput)")

            try CLI.dssLogin(url, store: store)
            let signed = try CLI.run(
                [
                    "dss", "sign", "--resource", StandardSeed.resource, "--table", StandardSeed.table, "--column",
                    StandardSeed.column, "--hhive-id", "1", "--certificate-id", "12831", "--dss-password-env",
                    "DSS_PASSWORD",
                    "--pin-env", "PIN",
                ],
                store: store,
                environment: Self.env
            )
            #expect(signed.status == 0, "\(signed.errorOutput)")
            let list = try CLI.run(["--json", "signatures", "list"], store: store)
            #expect(list.status == 0, "\(list.errorOutput)")
            let entries = try #require(try CLI.json(list)["signatures"] as? [[String: Any]])
            #expect(
                entries.contains { $0["id"] as? String == "121" && $0["provider"] as? String == "fmp-dss" },
                "\(list.output)"
            )
            #expect(!list.errorOutput.contains("not logged in"))

            let document = try store.write("doc.txt", text: "x")
            let refused = try CLI.run(["sign", document, "--provider", "fmp-dss"], store: store)
            #expect(refused.status == 64)
            #expect(refused.errorOutput.contains("certsign dss sign"))
        }
    }

    @Test("item 4: a planted, foreign-owned or readable session cache is ignored with a warning")
    func plantedSessionFiles() throws {
        try withEmulatorAndStore { emulator, url, store in
            try CLI.dssLogin(url, store: store)
            let session = store.path("fmp-session.json")
            #expect(chmod(session, 0o644) == 0)
            let readable = try CLI.run(["dss", "signs"], store: store)
            #expect(readable.status == 1)
            #expect(readable.errorOutput.contains("ignoring the FMP session"))
            #expect(chmod(session, 0o600) == 0)
            #expect(try CLI.run(["dss", "signs"], store: store).status == 0)
            if geteuid() == 0 {
                #expect(chown(session, 65534, 65534) == 0)
                let foreign = try CLI.run(["dss", "signs"], store: store)
                #expect(foreign.status == 1)
                #expect(foreign.errorOutput.contains("another user"))
            }

            // CryptoPro: a cache that others can read is not used; certsign logs in again and says so.
            let document = try store.write("d.txt", text: "d")
            let arguments = Self.cryptoPro(
                url.absoluteString,
                user: "Leonid",
                certificate: StandardSeed.secondCertificateID,
                passwordVariable: "LEONID_PASSWORD",
                pinVariable: nil
            )
            #expect(
                try CLI.run(
                    ["sign", document, "--out", store.path("1.p7s")] + arguments,
                    store: store,
                    environment: Self.env
                ).status == 0
            )
            #expect(chmod(store.path("cryptopro-dss-session.json"), 0o644) == 0)
            let logins = emulator.receivedRequests.filter { $0.path.hasSuffix("/STS/oauth/token") }.count
            let again = try CLI.run(
                ["sign", document, "--out", store.path("2.p7s")] + arguments,
                store: store,
                environment: Self.env
            )
            #expect(again.status == 0, "\(again.errorOutput)")
            #expect(again.errorOutput.contains("ignoring the CryptoPro DSS cache"))
            #expect(emulator.receivedRequests.filter { $0.path.hasSuffix("/STS/oauth/token") }.count == logins + 1)
        }
    }
}
