import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// `certsign sign --no-wait`, `certsign emulator approve|decline` and `certsign pending resume` with
/// the CSC provider in asynchronous mode, against the emulator, as separate processes.
@Suite("certsign sign that waits for an approval (CSC operationMode A)")
struct CSCApprovalCommandTests {
    let environment = ["CSC_SECRET": StandardSeed.password, "CSC_PIN": StandardSeed.certificatePIN]

    func providerArguments(_ url: URL) -> [String] {
        [
            "--param", "url=\(url.absoluteString)", "--param", "clientID=Leonid", "--param-env",
            "clientSecret=CSC_SECRET", "--param", "credentialID=\(pinCredential)", "--param-env", "pin=CSC_PIN",
        ]
    }

    func signArguments(_ url: URL, _ document: String) -> [String] {
        ["sign", document, "--provider", "csc", "--param", "operationMode=asynchronous"] + providerArguments(url)
    }

    /// `sign --no-wait --json`: the operation ID and the pending ID it printed.
    func signWithoutWaiting(_ url: URL, _ document: String, store: TemporaryDirectory) throws -> (String, String) {
        let result = try CLI.run(
            ["--json"] + signArguments(url, document) + ["--no-wait"],
            store: store,
            environment: environment
        )
        #expect(result.succeeded, "\(result.errorOutput)")
        let json = try CLI.json(result)
        let waiting = try #require((json["waiting"] as? [[String: Any]])?.first)
        #expect(FileManager.default.fileExists(atPath: document + ".pending"))
        #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
        return (try #require(waiting["operationID"] as? String), try #require(waiting["id"] as? String))
    }

    @Test("sign --no-wait, then certsign emulator approve, then pending resume: openssl verifies the signature")
    func approveThenResume() async throws {
        try await withEmulator { emulator, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("plan.txt", text: "Бюджетный план 2026\n")
            let (operationID, pendingID) = try signWithoutWaiting(url, document, store: store)
            #expect(emulator.approvalState(of: operationID) == .pending)
            let show = try CLI.run(["--json", "pending", "show", pendingID, "--dir", work.url.path], store: store)
            let entry = try CLI.json(show)
            #expect(entry["operationID"] as? String == operationID && entry["provider"] as? String == "csc")
            let early = try CLI.run(
                ["pending", "resume", pendingID, "--dir", work.url.path] + providerArguments(url),
                store: store,
                environment: environment
            )
            #expect(early.status == 1 && early.errorOutput.contains("\(operationID) still waits for approval"))
            let approve = try CLI.run(["emulator", "approve", operationID, "--url", url.absoluteString], store: store)
            #expect(approve.succeeded, "\(approve.errorOutput)")
            #expect(emulator.approvalState(of: operationID) == .approved)
            let resume = try CLI.run(
                ["pending", "resume", pendingID, "--dir", work.url.path] + providerArguments(url),
                store: store,
                environment: environment
            )
            #expect(resume.succeeded, "\(resume.errorOutput)")
            try opensslVerify(signatureFile: document + ".p7s", contentFile: document)
            #expect(!FileManager.default.fileExists(atPath: document + ".pending"))
        }
    }

    @Test("a declined operation: pending resume exits 1 naming it, writes nothing and keeps the pending file")
    func declineThenResume() async throws {
        try await withEmulator { emulator, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("plan.txt", text: "Бюджетный план 2026\n")
            let (operationID, pendingID) = try signWithoutWaiting(url, document, store: store)
            let decline = try CLI.run(["emulator", "decline", operationID, "--url", url.absoluteString], store: store)
            #expect(decline.succeeded, "\(decline.errorOutput)")
            let resume = try CLI.run(
                ["pending", "resume", pendingID, "--dir", work.url.path] + providerArguments(url),
                store: store,
                environment: environment
            )
            #expect(resume.status == 1)
            #expect(resume.errorOutput.contains("\(operationID) was declined"), "\(resume.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
            #expect(FileManager.default.fileExists(atPath: document + ".pending"))
            let again = try CLI.run(["emulator", "approve", operationID, "--url", url.absoluteString], store: store)
            #expect(again.status == 1 && again.errorOutput.contains("declined, not pending"), "\(again.errorOutput)")
        }
    }

    @Test("sign waits: --wait-timeout passes without an approval, exit 1 naming the operation, nothing written")
    func waitTimeout() async throws {
        try await withEmulator { emulator, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("plan.txt", text: "Бюджетный план 2026\n")
            let result = try CLI.run(
                signArguments(url, document) + ["--wait-timeout", "1"],
                store: store,
                environment: environment
            )
            let operationID = try #require(emulator.approvalOperationIDs.last)
            #expect(result.status == 1)
            #expect(result.errorOutput.contains("waiting for the approval of operation \(operationID)"))
            #expect(result.errorOutput.contains("operation \(operationID) (csc) was not approved within"))
            #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
            #expect(!FileManager.default.fileExists(atPath: document + ".pending"))
        }
    }

    @Test("sign waits until the emulator approves by itself, then writes a signature openssl verifies")
    func waitsForApproval() async throws {
        try await withEmulator(.init(autoApproveAfter: 1)) { _, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("plan.txt", text: "Бюджетный план 2026\n")
            let result = try CLI.run(signArguments(url, document), store: store, environment: environment)
            #expect(result.succeeded, "\(result.errorOutput)")
            #expect(result.errorOutput.contains("waiting for the approval of operation"))
            try opensslVerify(signatureFile: document + ".p7s", contentFile: document)
        }
    }

    @Test(
        "refused: --no-wait with a provider that signs at once, --no-wait over an existing .pending, approve of an unknown operation"
    )
    func refusals() async throws {
        try await withEmulator { emulator, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("plan.txt", text: "x\n")
            let synchronous = try CLI.run(
                ["sign", document, "--provider", "csc", "--no-wait"] + providerArguments(url),
                store: store,
                environment: environment
            )
            #expect(synchronous.status == 1 && synchronous.errorOutput.contains("--no-wait and --wait-timeout go with"))
            #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
            _ = try signWithoutWaiting(url, document, store: store)
            let again = try CLI.run(
                signArguments(url, document) + ["--no-wait"],
                store: store,
                environment: environment
            )
            #expect(again.status == 1 && again.errorOutput.contains("nothing was started"), "\(again.errorOutput)")
            #expect(emulator.approvalOperationIDs.count == 1)
            let unknown = try CLI.run(["emulator", "approve", "op-nothing", "--url", url.absoluteString], store: store)
            #expect(unknown.status == 1 && unknown.errorOutput.contains("no operation op-nothing"))
        }
    }
}
