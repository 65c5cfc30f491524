import CertificateProviders
import Foundation
import TestSupport
import Testing
import TrustedLists
import Validation

/// A LOTL with its TLs as trust anchors: each TL checked with the certificates the LOTL's pointer
/// names, and each chain judged by its anchoring service's status at the time it was checked at.
@Suite struct TrustedListSetTests {
    @Test func listOfTheListsVouchesForItsTLs() throws {
        let set = try TrustedListFixtures.set()
        #expect(set.lists.map(\.name) == ["lotl.xml", "tl-qc.xml", "tl-qtst.xml"])
        let subjects = set.signatureAnchors.map(\.subject)
        #expect(subjects.count == 3)
        #expect(subjects.contains { $0.contains("TL Test Withdrawn Qualified CA") })
        #expect(set.timestampAnchors.map(\.subject).allSatisfy { $0.contains("Time Stamping Authority") })
    }

    @Test func tlNotSignedByThePointersCertificateIsRefused() throws {
        expectTrustedListError(.wrongSigner) {
            try TrustedListSet.load(
                files: ["lotl.xml", "tl-qc-other-key.xml"].map(TrustedListFixtures.url),
                lotlSigners: [try TrustedListFixtures.certificate("lotl-signer")],
                at: TrustedListFixtures.now
            )
        }
        // A TL of a territory the LOTL does not point to has no certificate to be checked with.
        let unlisted = expectTrustedListError(.unlisted) {
            try TrustedListSet.load(
                files: ["lotl.xml", "tl-xx-unlisted.xml"].map(TrustedListFixtures.url),
                lotlSigners: [try TrustedListFixtures.certificate("lotl-signer")],
                at: TrustedListFixtures.now
            )
        }
        #expect(unlisted?.reason.contains("TL of \"XX\"") == true)
        // Without the LOTL, a TL is checked with the certificate given for it.
        let alone = try TrustedListSet.load(
            files: [TrustedListFixtures.url("tl-qc.xml")],
            lotlSigners: [try TrustedListFixtures.certificate("tl-signer")],
            at: TrustedListFixtures.now
        )
        #expect(alone.lists.count == 1)
    }

    /// The withdrawn CA's signer: INDETERMINATE now, PASSED when a 2023 timestamp proves the signature
    /// existed while the service was granted; the granted CA's signer passes.
    @Test func anchorsFollowTheServiceHistory() throws {
        let directory = try TemporaryDirectory(prefix: "trusted-lists")
        let document = try directory.write("document.txt", text: "signed under a trusted list\n")
        let set = try TrustedListFixtures.set()
        func verify(_ signer: String, timestampAt: String? = nil) throws -> VerificationResult {
            let signature = try TrustedListFixtures.sign(document, by: signer, timestampAt: timestampAt)
            let result = try CMSVerifier.verify(
                signature: [UInt8](Data(contentsOf: URL(fileURLWithPath: signature))),
                contentFileAt: URL(fileURLWithPath: document),
                trustAnchors: set.signatureAnchors
            )
            return set.judge(result)
        }
        #expect(try verify("qc-signer").indication == .passed)
        let withdrawn = try verify("qc-signer-old")
        #expect(withdrawn.indication == .indeterminate)
        #expect(withdrawn.subIndication == .noCertificateChainFound)
        #expect(withdrawn.failure?.reason.contains("\"TL Test Withdrawn Qualified CA\"") == true)
        #expect(withdrawn.failure?.reason.contains("withdrawn since 2024-06-01") == true)
        let proven = try verify("qc-signer-old", timestampAt: "2023-07-01T12:00:00Z")
        #expect(proven.indication == .passed, "\(proven)")
        #expect(set.anchoringService(of: try #require(proven.signers.first))?.name == "TL Test Withdrawn Qualified CA")
    }
}
