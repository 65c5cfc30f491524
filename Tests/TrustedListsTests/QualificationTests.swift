import CertificateProviders
import Foundation
import TestSupport
import Testing
import TrustedLists

/// Qualification from the TL's CA/QC services and the certificates' QcStatements, judged by pyHanko's
/// QualificationAssessor on the same TL and certificates at the same time.
@Suite struct QualificationTests {
    static let at2023 = "2023-07-01T00:00:00Z"
    static let now = TrustedListFixtures.iso(TrustedListFixtures.now)

    /// pyHanko's level for `leaf` under `ca` at `time`.
    static func pyHankoLevel(_ leaf: String, _ ca: String, _ time: String) throws -> QualificationLevel {
        let script = TrustedListFixtures.url("pyhanko_assess.py").path
        let tl = TrustedListFixtures.url("tl-qc.xml").path
        let result = try ExternalTool.run("python3", [script, tl, leaf, ca, time])
        try #require(result.succeeded, "pyhanko_assess.py failed (run `make deps`): \(result.errorOutput)")
        let words = Set(result.output.split(whereSeparator: \.isWhitespace).map(String.init))
        let seal = words.contains("type=qct_eseal")
        if !words.contains("qualified=1") { return seal ? .advancedSeal : .advancedSignature }
        if !words.contains("qscd=1") { return seal ? .advancedSealQC : .advancedSignatureQC }
        return seal ? .qualifiedSeal : .qualifiedSignature
    }

    @Test(arguments: [
        ("qc-signer", "qc-ca", now, QualificationLevel.qualifiedSignature),
        ("qc-signer-nosscd", "qc-ca", now, .advancedSignatureQC),
        ("qc-signer-old", "qc-ca-old", at2023, .qualifiedSignature),
        ("qc-signer-old", "qc-ca-old", now, .advancedSignature),
        ("tsa", "qc-ca", now, .advancedSignature),
        // No QcSSCD, but the service's QCWithQSCD qualifier selects certificates with nonRepudiation.
        ("qc-signer-q", "qc-ca-q", now, .qualifiedSignature),
    ])
    func levelEqualsPyHankos(leaf: String, ca: String, time: String, expected: QualificationLevel) throws {
        let set = try TrustedListFixtures.set()
        let certificate = try TrustedListFixtures.certificate(leaf)
        let chain = [certificate, try TrustedListFixtures.certificate(ca)]
        let date = try Date(time, strategy: .iso8601)
        let ours = set.qualification(of: certificate, chain: chain, at: date)
        #expect(ours.level == expected, "\(ours.reason)")
        #expect(ours.level == (try Self.pyHankoLevel(leaf, ca, time)))
    }

    @Test func qualifierCriteriaAreRead() throws {
        let set = try TrustedListFixtures.set()
        let service = try #require(set.services.first { $0.name == "TL Test Qualified CA With Qualifiers" })
        let qualification = try #require(service.qualifications.first)
        #expect(qualification.qualifierNames == ["QCWithQSCD"])
        #expect(qualification.criteria.keyUsage == [["nonRepudiation": true]])
        #expect(qualification.criteria.matches(try TrustedListFixtures.certificate("qc-signer-q")) == true)
        #expect(qualification.criteria.matches(try TrustedListFixtures.certificate("tsa")) == false)
        let ours = set.qualification(
            of: try TrustedListFixtures.certificate("qc-signer-q"),
            chain: [
                try TrustedListFixtures.certificate("qc-signer-q"), try TrustedListFixtures.certificate("qc-ca-q"),
            ],
            at: TrustedListFixtures.now
        )
        #expect(ours.reason.contains("the list's qualifiers: QCWithQSCD"))
    }

    @Test func statementsAreRead() throws {
        let statements = QcStatements(certificate: try TrustedListFixtures.certificate("qc-signer"))
        #expect(statements.isQualifiedCertificate && statements.isOnQualifiedDevice)
        #expect(statements.types == [QcStatements.eSignatureType])
        let none = QcStatements(certificate: try TrustedListFixtures.certificate("tsa"))
        #expect(!none.isQualifiedCertificate && !none.isOnQualifiedDevice && none.types.isEmpty)
    }
}
