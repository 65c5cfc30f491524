import CertificateProviders
import CertificateProvidersTesting
import Foundation
import SignatureJournal
import Signing
import TestSupport
import Testing

/// `SigningCoordinator.complete(_:with: .cms(bytes))` from the pending signature's JSON alone: a
/// detached CAdES pyHanko made over the document completes it and is recorded; pyHanko's CMS of other
/// bytes, or by another key, is refused before anything is written or recorded.
extension PendingSignatureTests {
    @Test("complete(pending, with: .cms) from the JSON alone: pyHanko's CAdES is written, recorded, openssl verifies")
    func cmsAnswerCompletesThroughTheCoordinator() async throws {
        try #require(ExternalTool.isAvailable("python3"), "needs python3 with pyHanko")
        let signer = try pki.issueLeaf(subject: "CN=Внешний подписант,O=ООО Ромашка", keyType: .p256)
        let stranger = try pki.issueLeaf(subject: "CN=Другой,O=ООО Ромашка", keyType: .p256)
        let document = try directory.write("акт.txt", text: "Акт приёма-передачи № 3\n")
        let journal = try SignatureJournal(url: URL(fileURLWithPath: directory.path("journal.sqlite")))
        let coordinator = SigningCoordinator(registry: ProviderRegistry(), journal: journal)
        let prepared = try await coordinator.prepare(
            document: .file(URL(fileURLWithPath: document)),
            certificate: signer.certificate,
            chain: signer.chain
        )
        let pending = try PendingSignature(jsonData: try prepared.jsonData())

        func pyHankoCMS(of path: String, by leaf: SigningIdentity, _ name: String) throws -> [UInt8] {
            let key = try #require(leaf.key as? LocalSigningKey)
            let keyFile = try directory.write("\(name)-key.pem", text: try key.pemRepresentation(password: nil))
            let certificate = try directory.write("\(name).pem", text: leaf.certificate.pemRepresentation)
            try PyHankoSigner.signBB(
                .cms,
                path,
                output: directory.path("\(name).p7s"),
                key: keyFile,
                certificate: certificate,
                chain: []
            )
            return try directory.read("\(name).p7s")
        }
        let output = URL(fileURLWithPath: directory.path("акт.txt.p7s"))
        let other = try directory.write("other.txt", text: "другое\n")
        for (cms, code) in [
            (try pyHankoCMS(of: other, by: signer, "other"), CertificateProviderError.Code.pendingSignatureMismatch),
            (try pyHankoCMS(of: document, by: stranger, "stranger"), .pendingSignatureMismatch),
            (Array("garbage".utf8), .malformedInput),
        ] {
            await expectError(code) {
                try await coordinator.complete(pending, with: .cms(cms), output: output)
            }
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
        #expect(try await journal.records().isEmpty)

        let cms = try pyHankoCMS(of: document, by: signer, "good")
        let result = try await coordinator.complete(pending, with: .cms(cms), output: output)
        #expect(result.signature == cms)
        #expect(try await journal.records().map(\.id) == [result.record.id])
        let checked = try OpenSSLCMS.verify(
            try directory.read("акт.txt.p7s"),
            content: try directory.read("акт.txt"),
            trust: [pki.root.certificate],
            cades: true,
            anyPurpose: true
        )
        #expect(checked.succeeded, "\(checked.errorOutput)")
    }
}
