import CertificateProviders
import CertificateProvidersTesting
import Foundation
import HTTPClient
import PDFSigning
import RemoteProviderSupport
import Signing
import TestSupport
import Testing

/// Long-term signatures judged by proof of existence (EN 319 102-1 §5.5, §5.6.2.4): the signature
/// timestamp proves the signature existed at its time, and the revocation data the signature
/// carries, CRLs and OCSP answers alike, proves each certificate's status then, whatever their
/// nextUpdate says later. CAdES and PAdES, made with certomancer (TSA, OCSP, CRLs; its signers expire
/// in 2070, `tsa` in 2080, the intermediate and the OCSP responder in 2090), judged by us and, printed
/// beside, by pyHanko's AdES processes (incubating in 0.38: INDETERMINATE for some of these; the
/// EN 319 102-1 reading is the rule).
@Suite(.serialized) struct LongTermMatrixTests {
    static let afterSignerExpiry = ISO8601DateFormatter().date(from: "2075-06-01T00:00:00Z")!
    static let afterTSAExpiry = ISO8601DateFormatter().date(from: "2085-06-01T00:00:00Z")!
    /// After `signer-revoked-later` was revoked (2027-06-01) and within the week of the CRLs
    /// certomancer's archive issues for 2027-06-30.
    static let afterLaterRevocation = ISO8601DateFormatter().date(from: "2027-07-02T00:00:00Z")!

    /// A detached CAdES signature of `label` at `level`: openssl's B-B, then our upgrades with
    /// certomancer's TSA, OCSP responder and CRLs.
    static func cades(
        _ pki: CertomancerPKI,
        _ label: String,
        _ level: SignatureLevel,
        in directory: TemporaryDirectory
    ) async throws -> (file: String, document: String) {
        let (signature, document) = try LongTermCAdESTests.opensslSignature(pki, signer: label, in: directory)
        let upgraded: [UInt8]
        if level == .bT {
            let authority = try LongTermCAdESTests.upgrade(pki, level: .bLT).authority
            upgraded = try await TimestampLevelUpgrade(authority: authority).upgrade(signature).signature
        } else {
            upgraded = try await LongTermCAdESTests.upgrade(pki, level: level).upgrade(signature).signature
        }
        return (try directory.write("\(label)-\(level).p7s", upgraded), document)
    }

    /// A PAdES signature of `label` at `level` (certomancer's signers share two keys).
    static func pades(
        _ pki: CertomancerPKI,
        _ label: String,
        _ level: SignatureLevel,
        in directory: TemporaryDirectory
    ) async throws -> String {
        let keyLabel = label == "signer-ec" ? "signer-ec" : "signer-rsa"
        let keyPath = PackageRoot.url.appendingPathComponent("Tests/Fixtures/certomancer/keys/\(keyLabel).key.pem")
        let identity = SigningIdentity(
            certificate: try pki.certificate(label),
            chain: [try pki.certificate("interm")],
            key: try LocalSigningKey(pemEncoded: try String(contentsOf: keyPath, encoding: .utf8))
        )
        let input = URL(fileURLWithPath: try directory.write("\(label).pdf", TestPDF.minimal()))
        let output = directory.url.appendingPathComponent("\(label)-\(level).pdf")
        try await PDFSigner.sign(
            pdfAt: input,
            writingTo: output,
            identity: identity,
            options: PDFSignatureOptions(timestampAuthority: try PAdESLongTermTests.authority(pki))
        )
        if level != .bT {
            _ = try await PAdESLongTermTests.upgrade(pki, level).upgrade(pdfAt: output, writingTo: output)
        }
        return output.path
    }

    static func policy(_ pki: CertomancerPKI, at time: Date, crls: [[UInt8]] = []) throws -> ValidationPolicy {
        var policy = ValidationPolicy(validationTime: time)
        policy.timestampTrustAnchors = [try pki.certificate("root"), try pki.certificate("interm")]
        policy.crls = crls
        return policy
    }

    /// Our verdict on a CAdES file, offline, at `time`.
    static func ours(
        cades made: (file: String, document: String),
        _ pki: CertomancerPKI,
        at time: Date,
        crls: [[UInt8]] = []
    ) throws -> VerificationResult {
        CMSVerifier.verify(
            signature: try Array(Data(contentsOf: URL(fileURLWithPath: made.file))),
            content: try Array(Data(contentsOf: URL(fileURLWithPath: made.document))),
            trustAnchors: [try pki.certificate("root")],
            policy: try policy(pki, at: time, crls: crls)
        )
    }

    /// Our verdict on the signature of a PDF, offline, at `time`.
    static func ours(
        pdf path: String,
        _ pki: CertomancerPKI,
        at time: Date,
        crls: [[UInt8]] = []
    ) throws -> VerificationResult {
        let report = try PDFSignatureVerifier.verify(
            pdfAt: URL(fileURLWithPath: path),
            trustAnchors: [try pki.certificate("root")],
            policy: try policy(pki, at: time, crls: crls)
        )
        return try #require(report.signatures.first { $0.kind == .signature }).verification
    }

    /// pyHanko's AdES verdict, for the messages.
    static func pyHanko(
        _ subject: PyHankoAdES.Subject,
        _ pki: CertomancerPKI,
        at time: Date,
        lta: Bool = false,
        crls: [String] = [],
        in directory: TemporaryDirectory
    ) throws -> String {
        try PyHankoAdES.verdicts(
            subject,
            roots: [try pki.certificate("root")],
            at: time,
            process: lta ? .lta : .withTime,
            crls: crls,
            in: directory
        ).joined(separator: ", ")
    }

    static func describe(_ result: VerificationResult) -> String {
        let verdict = result.subIndication.map { "\(result.indication): \($0)" } ?? "\(result.indication)"
        return result.failure.map { "\(verdict) (\($0.code): \($0.reason))" } ?? verdict
    }

    @Test func anExpiredSignerWithATimestampFromBeforeExpiryPassesAtBTBLTAndBLTA() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        for level in [SignatureLevel.bT, .bLT, .bLTA] {
            let cades = try await Self.cades(pki, "signer-rsa", level, in: directory)
            let pdf = try await Self.pades(pki, "signer-rsa", level, in: directory)
            let ourCAdES = try Self.ours(cades: cades, pki, at: Self.afterSignerExpiry)
            let ourPAdES = try Self.ours(pdf: pdf, pki, at: Self.afterSignerExpiry)
            let theirCAdES = try Self.pyHanko(
                .cms(signature: cades.file, content: cades.document),
                pki,
                at: Self.afterSignerExpiry,
                in: directory
            )
            let theirPAdES = try Self.pyHanko(
                .pdf(pdf),
                pki,
                at: Self.afterSignerExpiry,
                lta: level == .bLTA,
                in: directory
            )
            let rowCAdES = "CAdES \(level) at 2075: ours \(Self.describe(ourCAdES)); pyHanko \(theirCAdES)"
            let rowPAdES = "PAdES \(level) at 2075: ours \(Self.describe(ourPAdES)); pyHanko \(theirPAdES)"
            print(rowCAdES)
            print(rowPAdES)
            #expect(ourCAdES.isValid && ourCAdES.chainChecked && ourCAdES.indication == .passed, "\(rowCAdES)")
            #expect(ourPAdES.isValid && ourPAdES.chainChecked && ourPAdES.indication == .passed, "\(rowPAdES)")
            if level != .bT {
                // The embedded answers decided every certificate, at the time the timestamp proves.
                #expect(ourCAdES.signers.first?.revocation?.state == .good, "\(rowCAdES)")
                #expect(ourPAdES.signers.first?.revocation?.state == .good, "\(rowPAdES)")
            }
        }
    }

    @Test func bLTWithAnExpiredEmbeddedCRLOrOCSPAnswerPasses() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        // signer-crl's path is decided by CRLs alone (the intermediate's, weekly; the root's, monthly):
        // two months on, both are past their nextUpdate. signer-rsa's OCSP answers last ten minutes.
        let cases: [(label: String, what: String, at: Date)] = [
            ("signer-crl", "expired embedded CRLs", Date().addingTimeInterval(60 * 86_400)),
            ("signer-rsa", "expired embedded OCSP answers", Date().addingTimeInterval(86_400)),
        ]
        for (label, what, time) in cases {
            let cades = try await Self.cades(pki, label, .bLT, in: directory)
            let pdf = try await Self.pades(pki, label, .bLT, in: directory)
            let ourCAdES = try Self.ours(cades: cades, pki, at: time)
            let ourPAdES = try Self.ours(pdf: pdf, pki, at: time)
            let theirCAdES = try Self.pyHanko(
                .cms(signature: cades.file, content: cades.document),
                pki,
                at: time,
                in: directory
            )
            let theirPAdES = try Self.pyHanko(.pdf(pdf), pki, at: time, in: directory)
            let rowCAdES = "CAdES B-LT, \(what): ours \(Self.describe(ourCAdES)); pyHanko \(theirCAdES)"
            let rowPAdES = "PAdES B-LT, \(what): ours \(Self.describe(ourPAdES)); pyHanko \(theirPAdES)"
            print(rowCAdES)
            print(rowPAdES)
            #expect(ourCAdES.indication == .passed, "\(rowCAdES)")
            #expect(ourPAdES.indication == .passed, "\(rowPAdES)")
            #expect(ourCAdES.isValid && ourCAdES.signers.first?.revocation?.state == .good, "\(rowCAdES)")
            #expect(ourPAdES.isValid && ourPAdES.signers.first?.revocation?.state == .good, "\(rowPAdES)")
        }
    }

    /// certomancer's archived CRLs (the intermediate's and the root's) in force at `time`.
    static func archivedCRLs(
        _ pki: CertomancerPKI,
        at time: Date,
        in directory: TemporaryDirectory
    ) async throws
        -> [String]
    {
        let origin = try #require(ISO8601DateFormatter().date(from: "2020-01-01T00:00:00Z"))
        var files: [String] = []
        for (repository, days) in [("interm", 7.0), ("root", 30.0)] {
            let number = Int(time.timeIntervalSince(origin) / (days * 86_400))
            let url = try #require(
                URL(string: "http://127.0.0.1:\(pki.port)/testing/crls/\(repository)/archive-\(number).crl")
            )
            let answer = try await loopbackFetcher.get(url, timeout: 10, maximumBytes: 1 << 20)
            files.append(try directory.write("\(repository)-\(number).crl", answer.body))
        }
        return files
    }

    /// CAdES and PAdES B-T signatures of `label`, judged by us and by pyHanko at `time` with `crls`
    /// (files) known: one row each, `(format, ours, pyHanko's)`.
    static func bTRows(
        _ pki: CertomancerPKI,
        _ label: String,
        at time: Date,
        crls: [String] = [],
        in directory: TemporaryDirectory
    ) async throws -> [(format: String, ours: VerificationResult, theirs: String)] {
        let bytes = try crls.map { try Array(Data(contentsOf: URL(fileURLWithPath: $0))) }
        let cades = try await Self.cades(pki, label, .bT, in: directory)
        let pdf = try await Self.pades(pki, label, .bT, in: directory)
        let cms = PyHankoAdES.Subject.cms(signature: cades.file, content: cades.document)
        return [
            (
                "CAdES", try Self.ours(cades: cades, pki, at: time, crls: bytes),
                try Self.pyHanko(cms, pki, at: time, crls: crls, in: directory)
            ),
            (
                "PAdES", try Self.ours(pdf: pdf, pki, at: time, crls: bytes),
                try Self.pyHanko(.pdf(pdf), pki, at: time, crls: crls, in: directory)
            ),
        ]
    }

    @Test func aSignerRevokedBeforeTheTimestampFails() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let now = Date()
        // signer-revoked was revoked in 2025, before any timestamp taken now: B-LT is refused, naming
        // why, and B-T with today's CRLs fails.
        let error = await expectError(.certificateRevoked) {
            _ = try await Self.cades(pki, "signer-revoked", .bLT, in: directory)
        }
        #expect(
            error?.reason.contains("before the time its signature timestamp proves") == true,
            "\(String(describing: error))"
        )
        let today = try await Self.archivedCRLs(pki, at: now, in: directory)
        for (format, ours, theirs) in try await Self.bTRows(pki, "signer-revoked", at: now, crls: today, in: directory)
        {
            let row =
                "\(format) B-T, signer revoked before the timestamp: ours \(Self.describe(ours)); pyHanko \(theirs)"
            print(row)
            #expect(ours.failure?.code == .signerRevoked, "\(row)")
            // EN 319 102-1: revoked, and a proof of existence dates the signature after the revocation.
            #expect(ours.indication == .failed && ours.subIndication == .revoked, "\(row)")
        }
    }

    @Test func aSignerRevokedAfterTheTimestampPassesAndItsAnswerCanBeEmbedded() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let now = Date()
        // signer-revoked-later is revoked on 2027-06-01, after its timestamp: a CRL of 2027 saying so
        // proves it was good when the timestamp was taken.
        let at = Self.afterLaterRevocation
        let later = try await Self.archivedCRLs(pki, at: at.addingTimeInterval(-86_400), in: directory)
        for (format, ours, theirs) in try await Self.bTRows(
            pki,
            "signer-revoked-later",
            at: at,
            crls: later,
            in: directory
        ) {
            let row =
                "\(format) B-T, signer revoked after the timestamp: ours \(Self.describe(ours)); pyHanko \(theirs)"
            print(row)
            #expect(ours.isValid && ours.signers.first?.revocation?.state == .revoked, "\(row)")
            #expect(ours.indication == .passed, "\(row)")
        }
        // Extending: an answer saying "revoked after the timestamp" is evidence to embed; without a
        // proven time, or revoked before it, it is refused.
        let cache = RevocationDataCache(
            fetcher: loopbackFetcher,
            crls: try later.flatMap {
                try CertificateRevocationList.lists(derOrPEM: try Array(Data(contentsOf: URL(fileURLWithPath: $0))))
            }
        )
        let signer = try pki.certificate("signer-revoked-later")
        let interm = try pki.certificate("interm")
        let root = try pki.certificate("root")
        let evidence = try await cache.evidence(
            for: signer,
            issuer: interm,
            trustAnchors: [root],
            at: at,
            provenTime: now
        )
        guard case .crl = evidence else {
            Issue.record("expected the CRL, got \(evidence)")
            return
        }
        await expectError(.certificateRevoked) {
            _ = try await cache.evidence(for: signer, issuer: interm, trustAnchors: [root], at: at, provenTime: nil)
        }
        await expectError(.certificateRevoked) {
            _ = try await cache.evidence(for: signer, issuer: interm, trustAnchors: [root], at: at, provenTime: at)
        }
    }

    @Test func anExpiredTSADoesNotPassAndSaysItExpired() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let tsa = try pki.certificate("tsa")
        for (format, ours, theirs) in try await Self.bTRows(pki, "signer-rsa", at: Self.afterTSAExpiry, in: directory) {
            let row = "\(format) B-T, TSA expired: ours \(Self.describe(ours)); pyHanko \(theirs)"
            print(row)
            #expect(!ours.isValid, "\(row)")
            #expect(ours.failure?.code == .timestampExpired, "\(row)")
            #expect(ours.indication == .indeterminate && ours.subIndication == .outOfBoundsNoPOE, "\(row)")
            #expect(
                ours.failure?.reason.contains("the TSA's certificate '\(tsa.subject)' expired on ") == true,
                "\(row)"
            )
        }
    }

    @Test func anEmbeddedOCSPAnswerIsJudgedAgainstTheProvenTimeAsACRLIs() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let signer = try pki.certificate("signer-rsa")
        let interm = try pki.certificate("interm")
        let checker = RevocationChecker(configuration: .init(checksOnline: true), fetcher: loopbackFetcher)
        var problems: [String] = []
        let answer = try #require(
            await checker.ocspAnswer(
                of: signer,
                issuer: interm,
                trustAnchors: [try pki.certificate("root")],
                at: Date(),
                problems: &problems
            ),
            "\(problems)"
        )
        // certomancer's answers are current for ten minutes; a day later this one has expired.
        let dayLater = Date().addingTimeInterval(86_400)
        func status(provenTime: Date?) throws -> RevocationStatus {
            try RevocationOpenSSL.checkEmbeddedOCSPResponse(
                answer.response,
                certificate: signer,
                issuer: interm,
                certificates: [],
                at: dayLater,
                provenTime: provenTime
            )
        }
        // Issued after the proven time: it proves the status then, expired or not.
        #expect(try status(provenTime: Date().addingTimeInterval(-3600)).state == .good)
        // Issued before the proven time and no longer current then: it says nothing of it.
        let stale = #expect(throws: CertificateProviderError.self) {
            try status(provenTime: Date().addingTimeInterval(3600))
        }
        #expect(stale?.reason.contains("is not current at the time the signature timestamp proves") == true)
        // No proven time: it must be current at the validation time, as a CRL must.
        #expect(throws: CertificateProviderError.self) { try status(provenTime: nil) }
    }
}
