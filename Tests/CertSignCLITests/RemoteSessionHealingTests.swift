import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// Remote sessions that are bound to their credentials,
/// heal when the server re-issues its certificates, can be listed and cleared, and hints that name
/// what exists where the user is; all run as real `certsign` processes against the emulator.
@Suite struct RemoteSessionHealingTests {
    static let env = [
        "LEONID_PASSWORD": StandardSeed.password, "WRONG_PASSWORD": "not-the-password",
        "FMP_PASSWORD": StandardSeed.password, "CSC_SECRET": StandardSeed.password, "CSC_WRONG": "wrong-secret",
    ]

    /// `--provider cryptopro-dss …` for Leonid's RSA certificate (no PIN).
    static func cryptoPro(url: String, passwordVariable: String) -> [String] {
        ProviderSessionCommandTests.cryptoPro(
            url,
            user: StandardSeed.username,
            certificate: StandardSeed.secondCertificateID,
            passwordVariable: passwordVariable,
            pinVariable: nil
        )
    }

    /// `certsign sign DOC --out STORE/NAME --provider cryptopro-dss …` as Leonid (RSA, no PIN), the
    /// password read from `passwordVariable` of the suite's environment, the session kept in `store`.
    static func signAsLeonid(
        _ document: String,
        into name: String,
        url: String,
        passwordVariable: String = "LEONID_PASSWORD",
        store: TemporaryDirectory
    ) throws -> ExternalTool.Result {
        try CLI.run(
            ["sign", document, "--out", store.path(name)] + cryptoPro(url: url, passwordVariable: passwordVariable),
            store: store,
            environment: env
        )
    }

    static func logins(_ emulator: DSSEmulator) -> Int {
        emulator.receivedRequests.filter { $0.path.hasSuffix("/STS/oauth/token") }.count
    }

    /// Signs `act.txt` (`document`) into `act.p7s` through CryptoPro against a fresh emulator (`first`;
    /// the document, the signature and the session are kept in a new `store`), stops it and starts
    /// another (`second`) on the same port: the same address (`url`), a new CA, new certificates under
    /// the same ids. The caller stops `second`.
    static func restart() throws -> (
        store: TemporaryDirectory, document: String, first: DSSEmulator, second: DSSEmulator, url: String
    ) {
        let store = try TemporaryDirectory()
        let document = try store.write("act.txt", text: "Акт сверки\n")
        let first = try DSSEmulator()
        let url = try first.start()
        let port = try #require(url.port)
        let before = try signAsLeonid(document, into: "act.p7s", url: url.absoluteString, store: store)
        first.stop()
        #expect(before.status == 0, "\(before.errorOutput)")
        let second = try DSSEmulator(configuration: .init(port: UInt16(port)))
        #expect(try second.start() == url)
        return (store, document, first, second, url.absoluteString)
    }

    @Test(
        "item 4: a wrong CryptoPro password is refused while a session is cached; the right one reuses it; an old cache without a verifier logs in afresh"
    )
    func sessionBoundToCredentials() throws {
        try withEmulatorAndStore { emulator, url, store in
            let url = url.absoluteString
            let document = try store.write("act.txt", text: "Акт сверки\n")

            let first = try Self.signAsLeonid(document, into: "1.p7s", url: url, store: store)
            #expect(first.status == 0, "\(first.errorOutput)")
            #expect(Self.logins(emulator) == 1)
            // A wrong password fails as it would with a fresh store, and writes nothing.
            let wrong = try Self.signAsLeonid(
                document,
                into: "wrong.p7s",
                url: url,
                passwordVariable: "WRONG_PASSWORD",
                store: store
            )
            #expect(wrong.status == 1, "a wrong password signed through the cached session: \(wrong.output)")
            #expect(wrong.errorOutput.contains("incorrect"), "\(wrong.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: store.path("wrong.p7s")))
            #expect(Self.logins(emulator) == 2, "the wrong password was sent to the STS, not waved through")
            // Item 7: the hint names CryptoPro's own parameters and commands, not FMP's dss login.
            #expect(!wrong.errorOutput.contains("dss login"), "\(wrong.errorOutput)")
            #expect(wrong.errorOutput.contains("--param-env password=VAR"), "\(wrong.errorOutput)")
            #expect(wrong.errorOutput.contains("certsign sessions clear cryptopro-dss"), "\(wrong.errorOutput)")

            // The same user and password again: the kept session serves, no login.
            let again = try Self.signAsLeonid(document, into: "2.p7s", url: url, store: store)
            #expect(again.status == 0, "\(again.errorOutput)")
            #expect(Self.logins(emulator) == 2, "the right password reuses the session")

            let cache = try String(contentsOfFile: store.path("cryptopro-dss-session.json"), encoding: .utf8)
            #expect(!cache.contains(StandardSeed.password), "the password is never written")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(cache.utf8)) as? [String: Any])
            let verifier = try #require(json["credentials"] as? [String: Any], "the cache keeps a verifier: \(cache)")
            #expect(verifier["algorithm"] as? String == "pbkdf2-hmac-sha256")
            #expect((verifier["salt"] as? String)?.isEmpty == false)

            // A cache written before verifiers were kept is not trusted with credentials: a fresh login.
            var old = json
            old["credentials"] = nil
            try JSONSerialization.data(withJSONObject: old).write(
                to: store.url.appendingPathComponent("cryptopro-dss-session.json")
            )
            #expect(chmod(store.path("cryptopro-dss-session.json"), 0o600) == 0)
            let oldWrong = try Self.signAsLeonid(
                document,
                into: "old-wrong.p7s",
                url: url,
                passwordVariable: "WRONG_PASSWORD",
                store: store
            )
            #expect(oldWrong.status == 1, "\(oldWrong.errorOutput)")
            #expect(!oldWrong.errorOutput.contains("Fatal error"))
            let oldRight = try Self.signAsLeonid(document, into: "3.p7s", url: url, store: store)
            #expect(oldRight.status == 0, "\(oldRight.errorOutput)")
            #expect(Self.logins(emulator) == 4, "both runs over the old cache logged in afresh")
        }
    }

    @Test(
        "item 3: after the emulator restarts (re-issuing its certificates), sign in the same store refreshes the list once and succeeds; openssl verifies the new signer"
    )
    func staleCertificateListHeals() throws {
        let (store, document, first, second, url) = try Self.restart()
        defer { second.stop() }
        let firstCA = try store.write("first-ca.pem", text: first.certificateAuthorityPEM)
        let secondCA = try store.write("second-ca.pem", text: second.certificateAuthorityPEM)
        let after = try Self.signAsLeonid(document, into: "2.p7s", url: url, store: store)
        #expect(after.status == 0, "the stale certificate was not refreshed: \(after.errorOutput)")
        #expect(after.errorOutput.contains("re-issued"), "\(after.errorOutput)")
        let lists = second.receivedRequests.filter { $0.path.hasSuffix("/rest/api/certificates") }.count
        #expect(lists == 1, "one refresh of the list")
        // The old token's 401, the signature by the re-issued certificate, the one after the refresh.
        #expect(second.receivedRequests.filter { $0.path.hasSuffix("/rest/api/documents") }.count == 3)

        // The new signature is by the re-issued certificate: openssl verifies it to the new CA only.
        let newSigner = try OpenSSLCMS.verify(
            signatureFile: store.path("2.p7s"),
            contentFile: document,
            caFile: secondCA,
            cades: true,
            anyPurpose: true
        )
        #expect(newSigner.succeeded, "\(newSigner.errorOutput)")
        let oldSigner = try OpenSSLCMS.verify(
            signatureFile: store.path("2.p7s"),
            contentFile: document,
            caFile: firstCA,
            anyPurpose: true
        )
        #expect(!oldSigner.succeeded)

        // The refreshed list was kept: the next sign needs no refresh.
        let next = try Self.signAsLeonid(document, into: "3.p7s", url: url, store: store)
        #expect(next.status == 0, "\(next.errorOutput)")
        #expect(!next.errorOutput.contains("re-issued"))
        #expect(second.receivedRequests.filter { $0.path.hasSuffix("/rest/api/certificates") }.count == 1)
    }

    @Test("item 3: a batch after the restart: every document signed by the re-issued certificate, one refresh")
    func staleCertificateListHealsInABatch() throws {
        let (store, _, _, second, url) = try Self.restart()
        defer { second.stop() }
        let documents = try (1...3).map { try store.write("doc-\($0).txt", text: "документ \($0)\n") }
        let secondCA = try store.write("second-ca.pem", text: second.certificateAuthorityPEM)
        let output = store.path("out")
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
        let batch = try CLI.run(
            ["sign"] + documents + ["--out-dir", output]
                + Self.cryptoPro(url: url, passwordVariable: "LEONID_PASSWORD"),
            store: store,
            environment: Self.env
        )
        #expect(batch.status == 0, "\(batch.errorOutput)")
        #expect(batch.errorOutput.components(separatedBy: "re-issued").count == 2, "one refresh: \(batch.errorOutput)")
        #expect(second.receivedRequests.filter { $0.path.hasSuffix("/rest/api/certificates") }.count == 1)
        for document in documents {
            let signature = URL(fileURLWithPath: output).appendingPathComponent(
                URL(fileURLWithPath: document).lastPathComponent + ".p7s"
            ).path
            let verified = try OpenSSLCMS.verify(
                signatureFile: signature,
                contentFile: document,
                caFile: secondCA,
                cades: true,
                anyPurpose: true
            )
            #expect(verified.succeeded, "\(document): \(verified.errorOutput)")
        }
    }

    @Test(
        "items 3 and 11: a PAdES signature through CryptoPro after the restart heals too (the README walk-through); pyHanko trusts it to the new CA only"
    )
    func staleCertificateListHealsForPAdES() throws {
        let (store, _, first, second, url) = try Self.restart()
        defer { second.stop() }

        let contract = try store.write("contract.pdf", TestPDF.minimal())
        let signed = try CLI.run(
            ["sign", contract, "--format", "pades", "--field", "Approval", "--out", store.path("signed.pdf")]
                + Self.cryptoPro(url: url, passwordVariable: "LEONID_PASSWORD"),
            store: store,
            environment: Self.env
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        #expect(signed.errorOutput.contains("re-issued"), "\(signed.errorOutput)")
        let trusted = try PyHankoValidator.validate(
            store.path("signed.pdf"),
            root: second.seed.certificateAuthority,
            in: store
        )
        #expect(trusted.count == 1 && trusted.first?.contains("Approval: INTACT:TRUSTED") == true, "\(trusted)")
        let untrusted = try PyHankoValidator.validate(
            store.path("signed.pdf"),
            root: first.seed.certificateAuthority,
            in: store
        )
        #expect(untrusted.first?.contains("INTACT:UNTRUSTED") == true, "\(untrusted)")
        let ours = try CLI.run(
            [
                "verify", store.path("signed.pdf"), "--ca",
                try store.write("ca.pem", text: second.certificateAuthorityPEM),
            ],
            store: store
        )
        #expect(ours.status == 0, "\(ours.output)")
    }

    @Test(
        "item 3: sessions list shows provider, server, user and expiry without a token; sessions clear forgets one provider's, one server's, or all"
    )
    func listAndClear() throws {
        try withEmulatorAndStore { _, url, store in
            try CLI.dssLogin(url, store: store)
            let url = url.absoluteString
            let document = try store.write("d.txt", text: "d\n")
            let signed = try Self.signAsLeonid(document, into: "d.p7s", url: url, store: store)
            #expect(signed.status == 0, "\(signed.errorOutput)")

            let list = try CLI.run(["--json", "sessions", "list"], store: store)
            #expect(list.status == 0, "\(list.errorOutput)")
            let sessions = try #require(try CLI.json(list)["sessions"] as? [[String: Any]])
            #expect(sessions.map { $0["provider"] as? String } == ["fmp-dss", "cryptopro-dss"])
            for session in sessions {
                #expect(session["server"] as? String == url)
                #expect(session["user"] as? String == StandardSeed.username)
            }
            let expiry = try #require(sessions[1]["expires"] as? String)
            let expires = try #require(ISO8601DateFormatter().date(from: expiry))
            #expect(expires > Date() && expires < Date().addingTimeInterval(3700))
            // No token of either file appears.
            for file in ["fmp-session.json", "cryptopro-dss-session.json"] {
                let text = try String(contentsOfFile: store.path(file), encoding: .utf8)
                let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                let session = object["session"] as? [String: Any]
                for token in [object["accessToken"], session?["token"], session?["refreshToken"]].compactMap({
                    $0 as? String
                }) {
                    #expect(!list.output.contains(token))
                    #expect(!(try CLI.run(["sessions", "list"], store: store)).output.contains(token))
                }
            }

            let otherServer = try CLI.run(["sessions", "clear", "--server", "http://127.0.0.1:1/"], store: store)
            #expect(otherServer.status == 0)
            #expect(otherServer.output.contains("no session with http://127.0.0.1:1/"), "\(otherServer.output)")
            #expect(FileManager.default.fileExists(atPath: store.path("cryptopro-dss-session.json")))

            let cryptoPro = try CLI.run(["--json", "sessions", "clear", "cryptopro-dss"], store: store)
            #expect(cryptoPro.status == 0, "\(cryptoPro.errorOutput)")
            let cleared = try #require(try CLI.json(cryptoPro)["cleared"] as? [[String: Any]])
            #expect(cleared.map { $0["provider"] as? String } == ["cryptopro-dss"])
            #expect(!FileManager.default.fileExists(atPath: store.path("cryptopro-dss-session.json")))
            #expect(FileManager.default.fileExists(atPath: store.path("fmp-session.json")))
            #expect(try CLI.run(["dss", "signs"], store: store).status == 0, "the FMP session is kept")

            let all = try CLI.run(["sessions", "clear", "--server", url], store: store)
            #expect(all.status == 0)
            #expect(all.output.contains("cleared the fmp-dss session of Leonid"), "\(all.output)")
            #expect(!FileManager.default.fileExists(atPath: store.path("fmp-session.json")))
            let signs = try CLI.run(["dss", "signs"], store: store)
            #expect(signs.status == 1)
            #expect(signs.errorOutput.contains("not logged in"))
            #expect(try CLI.run(["sessions", "list"], store: store).output.contains("no sessions kept"))
            let csc = try CLI.run(["sessions", "clear", "csc"], store: store)
            #expect(csc.status == 0 && csc.output.contains("csc keeps no session"), "\(csc.output)")

            // A damaged file is removed by clear (and list names it).
            try store.write("cryptopro-dss-session.json", text: "{not json")
            #expect(chmod(store.path("cryptopro-dss-session.json"), 0o600) == 0)
            let damaged = try CLI.run(["sessions", "list"], store: store)
            #expect(damaged.status == 1 && damaged.errorOutput.contains("cryptopro-dss-session.json"))
            let removed = try CLI.run(["sessions", "clear"], store: store)
            #expect(removed.status == 0, "\(removed.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: store.path("cryptopro-dss-session.json")))
        }
    }

    @Test("item 3: help, usage and completion come from the descriptors")
    func helpAndCompletion() throws {
        let help = try CLI.run(["help", "sessions"])
        #expect(help.status == 0)
        #expect(help.output.contains("list") && help.output.contains("clear"))
        let clear = try CLI.run(["sessions", "clear", "--help"])
        #expect(clear.output.contains("usage: certsign sessions clear [PROVIDER] [--server URL]"))
        let completion = try CLI.run(["completion", "bash"])
        #expect(completion.output.contains("sessions"))
        let unknown = try CLI.run(["sessions", "clear", "pkcs12"])
        #expect(unknown.status == 64)
        #expect(unknown.errorOutput.contains("fmp-dss, cryptopro-dss or csc"))
    }

    @Test("item 7: CSC hints name CSC's parameters: a refused client and an untrusted TLS server")
    func cscHints() throws {
        let emulator = try DSSEmulator(configuration: .init(tls: .init()))
        let url = try emulator.start().absoluteString
        defer { emulator.stop() }
        let store = try TemporaryDirectory()
        let document = try store.write("d.txt", text: "d\n")
        let untrusted = try CLI.run(
            [
                "sign", document, "--provider", "csc", "--param", "url=\(url)", "--param", "clientID=Leonid",
                "--param-env", "clientSecret=CSC_SECRET",
            ],
            store: store,
            environment: Self.env
        )
        #expect(untrusted.status == 1)
        #expect(untrusted.errorOutput.contains("is not trusted"), "\(untrusted.errorOutput)")
        #expect(untrusted.errorOutput.contains("--param trustedCAFile=PATH"), "\(untrusted.errorOutput)")
        #expect(!untrusted.errorOutput.contains("--ca-file"), "sign has no --ca-file: \(untrusted.errorOutput)")

        let caFile = try store.write("ca.pem", text: emulator.certificateAuthorityPEM)
        let refused = try CLI.run(
            [
                "csc", "credentials", "--param", "url=\(url)", "--param", "clientID=Leonid", "--param-env",
                "clientSecret=CSC_WRONG", "--param", "trustedCAFile=\(caFile)",
            ],
            store: store,
            environment: Self.env
        )
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("hint: check --param clientID=ID"), "\(refused.errorOutput)")
        #expect(!refused.errorOutput.contains("dss login"), "\(refused.errorOutput)")

        // dss login, where --ca-file exists, names it.
        let login = try CLI.run(
            [
                "dss", "login", "--host", url, "--environment", StandardSeed.environment, "--project",
                StandardSeed.project, "--user", StandardSeed.username, "--password-env", "FMP_PASSWORD",
            ],
            store: store,
            environment: Self.env
        )
        #expect(login.status == 1)
        #expect(login.errorOutput.contains("hint: trust the server's CA with --ca-file FILE"), "\(login.errorOutput)")
    }

    @Test("item 11: dss certificates and dss sign say 'not logged in' before asking for the DSS password")
    func notLoggedInFirst() throws {
        let store = try TemporaryDirectory()
        let certificates = try CLI.run(["dss", "certificates"], store: store)
        #expect(certificates.status == 1)
        #expect(certificates.errorOutput.contains("not logged in"), "\(certificates.errorOutput)")
        #expect(!certificates.errorOutput.contains("DSS password"), "\(certificates.errorOutput)")
        let sign = try CLI.run(
            [
                "dss", "sign", "--resource", "R", "--table", "T", "--column", "C", "--hhive-id", "1",
                "--certificate-id", "1",
            ],
            store: store
        )
        #expect(sign.status == 1)
        #expect(sign.errorOutput.contains("not logged in"), "\(sign.errorOutput)")
    }
}
