import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// `certsign sign --no-wait` with CryptoPro DSS transactions (`confirmation=required`), then
/// `certsign emulator approve|decline` and `certsign pending resume`, as separate processes: the
/// server's CMS is checked against the prepared document and certificate before it is written.
@Suite("certsign sign --no-wait with CryptoPro DSS confirmations")
struct CryptoProNoWaitCommandTests {
    let environment = ["DSS_PASSWORD": StandardSeed.password, "DSS_PIN": StandardSeed.certificatePIN]

    func providerArguments(_ url: URL, certificateID: Int = StandardSeed.certificateID) -> [String] {
        [
            "--param", "url=\(url.absoluteString)", "--param", "username=\(StandardSeed.username)", "--param-env",
            "password=DSS_PASSWORD", "--param", "certificateID=\(certificateID)", "--param-env", "pin=DSS_PIN",
            "--param", "confirmation=required",
        ]
    }

    /// `sign --no-wait --json`: the transaction ID and the pending ID it printed.
    func signWithoutWaiting(_ url: URL, _ document: String, store: TemporaryDirectory) throws -> (String, String) {
        let result = try CLI.run(
            ["--json", "sign", document, "--provider", "cryptopro-dss", "--no-wait"] + providerArguments(url),
            store: store,
            environment: environment
        )
        #expect(result.succeeded, "\(result.errorOutput)")
        let waiting = try #require((try CLI.json(result)["waiting"] as? [[String: Any]])?.first)
        #expect(waiting["provider"] as? String == "cryptopro-dss", "\(waiting)")
        #expect(FileManager.default.fileExists(atPath: document + ".pending"))
        #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
        return (try #require(waiting["operationID"] as? String), try #require(waiting["id"] as? String))
    }

    func resume(
        _ pendingID: String,
        _ work: TemporaryDirectory,
        _ url: URL,
        store: TemporaryDirectory
    ) throws
        -> ExternalTool.Result
    {
        try CLI.run(
            ["pending", "resume", pendingID, "--dir", work.url.path] + providerArguments(url),
            store: store,
            environment: environment
        )
    }

    @Test("sign --no-wait, approve, pending resume: the server's CAdES is written and openssl cms -verify accepts it")
    func approveThenResume() async throws {
        try await withEmulator { emulator, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("акт.txt", text: "Акт сверки № 12\n")
            let (transaction, pendingID) = try signWithoutWaiting(url, document, store: store)
            #expect(emulator.approvalState(of: transaction) == .pending)
            let early = try resume(pendingID, work, url, store: store)
            #expect(
                early.status == 1 && early.errorOutput.contains("\(transaction) still waits"),
                "\(early.errorOutput)"
            )
            try emulator.approve(operationID: transaction)

            let resumed = try resume(pendingID, work, url, store: store)
            #expect(resumed.succeeded, "\(resumed.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: document + ".pending"))
            let ca = try Certificate(pemEncoded: emulator.certificateAuthorityPEM)
            let verified = try OpenSSLCMS.verify(
                try work.read("акт.txt.p7s"),
                content: try work.read("акт.txt"),
                trust: [ca],
                cades: true,
                anyPurpose: true
            )
            #expect(verified.succeeded, "\(verified.errorOutput)")
            let listed = try CLI.json(try CLI.run(["--json", "signatures", "list"], store: store))
            let rows = try #require(listed["signatures"] as? [[String: Any]])
            #expect(rows.contains { $0["provider"] as? String == "cryptopro-dss" }, "\(rows)")
        }
    }

    @Test(
        "declined, and expired: pending resume exits 1 naming the transaction, writes nothing, marks the pending file"
    )
    func declineAndExpire() async throws {
        try await withEmulator { emulator, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("plan.txt", text: "План\n")
            let (transaction, pendingID) = try signWithoutWaiting(url, document, store: store)
            try emulator.decline(operationID: transaction)
            let resumed = try resume(pendingID, work, url, store: store)
            #expect(resumed.status == 1 && resumed.errorOutput.contains("\(transaction) was declined"))
            #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
            let shown = try CLI.json(
                try CLI.run(["--json", "pending", "show", pendingID, "--dir", work.url.path], store: store)
            )
            #expect(shown["outcome"] as? String == "declined", "\(shown)")
        }
        try await withEmulator(.init(confirmationValidity: 1)) { _, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("plan.txt", text: "План\n")
            let (transaction, pendingID) = try signWithoutWaiting(url, document, store: store)
            try await Task.sleep(for: .milliseconds(1100))
            let resumed = try resume(pendingID, work, url, store: store)
            #expect(
                resumed.status == 1 && resumed.errorOutput.contains("\(transaction) expired"),
                "\(resumed.errorOutput)"
            )
            #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
            let shown = try CLI.json(
                try CLI.run(["--json", "pending", "show", pendingID, "--dir", work.url.path], store: store)
            )
            #expect(shown["outcome"] as? String == "expired", "\(shown)")
        }
    }

    @Test("sign without --no-wait waits with a progress line until the emulator confirms, then openssl verifies")
    func signWaitsForTheConfirmation() async throws {
        try await withEmulator(.init(autoApproveAfter: 1)) { emulator, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("plan.txt", text: "План\n")
            let result = try CLI.run(
                ["sign", document, "--provider", "cryptopro-dss", "--wait-timeout", "60"] + providerArguments(url),
                store: store,
                environment: environment
            )
            #expect(result.succeeded, "\(result.errorOutput)")
            #expect(result.errorOutput.contains("waiting for the approval of operation"), "\(result.errorOutput)")
            let ca = try Certificate(pemEncoded: emulator.certificateAuthorityPEM)
            let verified = try OpenSSLCMS.verify(
                try work.read("plan.txt.p7s"),
                content: try work.read("plan.txt"),
                trust: [ca],
                cades: true,
                anyPurpose: true
            )
            #expect(verified.succeeded, "\(verified.errorOutput)")
        }
    }

    @Test("the document changed before the approval: the server's CMS is refused, nothing written")
    func changedDocumentIsRefused() async throws {
        try await withEmulator { emulator, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("plan.txt", text: "План\n")
            let (transaction, pendingID) = try signWithoutWaiting(url, document, store: store)
            // Another transaction of the same user over another document: its CMS is not the prepared one.
            let other = try work.write("other.txt", text: "другое\n")
            let (otherTransaction, _) = try signWithoutWaiting(url, other, store: store)
            try emulator.approve(operationID: otherTransaction)
            let pendingPath = document + ".pending"
            var object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: pendingPath)))
                    as? [String: Any]
            )
            var section = try #require(object["certsign"] as? [String: Any])
            var remote = try #require(section["remote"] as? [String: Any])
            remote["operationID"] = otherTransaction
            section["remote"] = remote
            object["certsign"] = section
            try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: pendingPath))
            let resumed = try resume(pendingID, work, url, store: store)
            #expect(
                resumed.status == 1 && resumed.errorOutput.contains("signs another document"),
                "\(resumed.errorOutput)"
            )
            #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
            #expect(emulator.approvalState(of: transaction) == .pending)
        }
    }
}
