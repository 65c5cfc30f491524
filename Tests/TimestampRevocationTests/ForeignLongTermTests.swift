import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

/// A CAdES B-LTA from another implementation (EU DSS's public test data, Tests/Fixtures/eu-dss)
/// checked by ours: its archive-time-stamp-v3 imprint and ats-hash-index-v3, recomputed by our
/// code from DSS's bytes, must verify; a copy with an indexed entry removed must not.
struct ForeignLongTermTests {
    static let fixtures = PackageRoot.url.appendingPathComponent("Tests/Fixtures/eu-dss")

    static func verify(_ signature: [UInt8]) throws -> VerificationResult {
        let roots = try Certificate.certificates(
            derOrPEM: Array(try Data(contentsOf: fixtures.appendingPathComponent("cades-lta-dss-roots.pem")))
        )
        var policy = ValidationPolicy()
        // After the archive timestamp (2023-09-07 08:03:45Z), while its OCSP responder's
        // certificate (until 2023-09-29) and the signer's were valid.
        policy.validationTime = ISO8601DateFormatter().date(from: "2023-09-08T00:00:00Z")
        return CMSVerifier.verify(signature: signature, content: nil, trustAnchors: roots, policy: policy)
    }

    @Test func dssArchiveTimestampVerifiesAndATamperedCopyDoesNot() throws {
        let signature = Array(try Data(contentsOf: Self.fixtures.appendingPathComponent("cades-lta-dss.p7m")))
        let result = try Self.verify(signature)
        #expect(result.format == .cadesLTA)
        #expect(result.signers.first?.timestamp?.isValid == true)
        // The archive timestamp check (before revocation) passes: what stops the verdict is the
        // revocation of DSS's path, not the archive timestamp.
        #expect(result.failure?.code != .timestampInvalid, "\(String(describing: result.failure))")
        // The signer's embedded OCSP answer is checked at the validation time, its responder's
        // certificate found among the signature's (it was refused when checked at the current time).
        let entries = result.signers.first?.revocation?.certificates ?? []
        let signerEntry = entries.first { $0.certificate == result.signerCertificate }
        #expect(signerEntry?.status.state == .good, "\(entries)")

        // The same file without one of the OCSP entries its ats-hash-index-v3 lists (asn1crypto).
        let directory = try TemporaryDirectory()
        let original = try directory.write("dss.p7m", signature)
        let tampered = directory.path("tampered.p7m")
        let script = """
            import sys
            from asn1crypto import cms
            info = cms.ContentInfo.load(open(sys.argv[1], 'rb').read())
            signed = info['content']
            signed['crls'] = cms.RevocationInfoChoices([signed['crls'][0]])
            open(sys.argv[2], 'wb').write(info.dump(force=True))
            """
        let removed = try ExternalTool.run("python3", ["-c", script, original, tampered])
        try #require(removed.succeeded, "asn1crypto (run `make deps`): \(removed.errorOutput)")
        let broken = try Self.verify(try directory.read("tampered.p7m"))
        #expect(broken.failure?.code == .timestampInvalid, "\(String(describing: broken.failure))")
        #expect(broken.failure?.reason.contains("ats-hash-index-v3") == true)
        // Data the archive timestamp covers is gone: its message imprint no longer matches what it
        // covers, the same failure as a token over other bytes (EN 319 102-1 HASH_FAILURE), however
        // the sentence is worded. pyHanko has no CAdES archive-timestamp process to compare with (its
        // LTA process reads PDFs only).
        #expect(
            broken.indication == .failed && broken.subIndication == .hashFailure,
            "\(broken.indication)/\(String(describing: broken.subIndication))"
        )
    }
}
