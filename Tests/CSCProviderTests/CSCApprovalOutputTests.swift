import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// Where a signature that waited for an approval lands: where `sign --no-wait` was told, not beside
/// the document, when `pending resume` finishes it later.
@Suite("sign --no-wait --out-dir: the resumed signature goes to the directory sign was given")
struct CSCApprovalOutputTests {
    @Test("--out-dir DIR: the .pending file and, after approval and resume, the signature in DIR")
    func resumedSignatureGoesToTheOutputDirectory() async throws {
        let cases = CSCApprovalCommandTests()
        try await withEmulator { _, url in
            let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
            let document = try work.write("смета.txt", text: "Смета на 2027 год\n")
            let directory = work.path("approved")
            let started = try CLI.run(
                ["--json"] + cases.signArguments(url, document) + ["--no-wait", "--out-dir", directory],
                store: store,
                environment: cases.environment
            )
            #expect(started.succeeded, "\(started.errorOutput)")
            let waiting = try #require((try CLI.json(started)["waiting"] as? [[String: Any]])?.first)
            let operationID = try #require(waiting["operationID"] as? String)
            let pendingID = try #require(waiting["id"] as? String)
            #expect(FileManager.default.fileExists(atPath: directory + "/смета.txt.pending"))
            let approve = try CLI.run(["emulator", "approve", operationID, "--url", url.absoluteString], store: store)
            #expect(approve.succeeded, "\(approve.errorOutput)")
            let resume = try CLI.run(
                ["pending", "resume", pendingID, "--dir", directory] + cases.providerArguments(url),
                store: store,
                environment: cases.environment
            )
            #expect(resume.succeeded, "\(resume.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: document + ".p7s"), "not beside the document")
            try opensslVerify(signatureFile: directory + "/смета.txt.p7s", contentFile: document)
        }
    }
}
