import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

/// Our ETSI EN 319 102-1 indications against pyHanko's `ades_basic_validation` (the process for a
/// B-B signature, CAdES and PAdES alike) on the same files: signatures made by us and by pyHanko with
/// certomancer's PKI, then damaged or judged in a way that gives each case its verdict. The indication must be
/// pyHanko's, and the sub-indication too where both give one.
@Suite(.serialized) struct IndicationMatrixTests {
    /// One row of the matrix.
    enum Case: String, CaseIterable, Sendable {
        case good, tamperedContent, alteredSignatureValue, unknownAnchor, expiredSignerWithoutTimestamp
        case revokedSignerWithoutTimestamp

        /// The certomancer signer.
        var signer: String { self == .revokedSignerWithoutTimestamp ? "signer-revoked" : "signer-rsa" }
        /// The validation time: after signer-rsa's notAfter (2070) for the expired case.
        var validationTime: Date? {
            self == .expiredSignerWithoutTimestamp ? ISO8601DateFormatter().date(from: "2071-01-01T00:00:00Z") : nil
        }
        /// Whether revocation is required (online, from certomancer).
        var checksRevocation: Bool { self == .revokedSignerWithoutTimestamp }
        /// What EN 319 102-1 says, as both must answer.
        var expected: (Indication, SubIndication?) {
            switch self {
            case .good: (.passed, nil)
            case .tamperedContent: (.failed, .hashFailure)
            case .alteredSignatureValue: (.failed, .sigCryptoFailure)
            case .unknownAnchor: (.indeterminate, .noCertificateChainFound)
            case .expiredSignerWithoutTimestamp: (.indeterminate, .outOfBoundsNoPOE)
            case .revokedSignerWithoutTimestamp: (.indeterminate, .revokedNoPOE)
            }
        }
    }

    /// Who makes the signature.
    enum Maker: String, CaseIterable, Sendable { case ours, pyHanko }

    /// The key file of certomancer's signer `label` (signer-revoked shares signer-rsa's key).
    static func keyPath(_ label: String) -> String {
        let keyName = label == "signer-revoked" ? "signer-rsa" : label
        return PackageRoot.url.appendingPathComponent("Tests/Fixtures/certomancer/keys/\(keyName).key.pem").path
    }

    /// certomancer's signer `label`.
    static func identity(_ pki: CertomancerPKI, _ label: String) throws -> SigningIdentity {
        let keyPath = URL(fileURLWithPath: keyPath(label))
        return SigningIdentity(
            certificate: try pki.certificate(label),
            chain: [try pki.certificate("interm")],
            key: try LocalSigningKey(pemEncoded: try String(contentsOf: keyPath, encoding: .utf8))
        )
    }

    /// The anchor the case trusts: certomancer's root, or an unrelated one.
    static func anchor(_ pki: CertomancerPKI, _ row: Case) throws -> Certificate {
        guard row == .unknownAnchor else { return try pki.certificate("root") }
        return try TestPKI(rootSubject: "CN=Unrelated Root,O=swift-certificate-providers").root.certificate
    }

    static func policy(_ row: Case) -> ValidationPolicy {
        var policy = ValidationPolicy(validationTime: row.validationTime)
        policy.checkRevocation = row.checksRevocation
        return policy
    }

    /// Flips the last byte of the DER value starting at `start` in `bytes` (a SignedData whose
    /// SignerInfo, without unsigned attributes, ends with its signature value).
    static func flipLastByteOfDER(_ bytes: inout [UInt8], start: Int = 0) throws {
        try #require(bytes[start] == 0x30 && bytes[start + 1] == 0x82, "a SignedData of 256 bytes or more")
        let length = Int(bytes[start + 2]) << 8 | Int(bytes[start + 3])
        bytes[start + 4 + length - 1] ^= 0x01
    }

    @Test(arguments: Case.allCases, Maker.allCases)
    func cadesIndicationIsPyHankos(_ row: Case, _ maker: Maker) async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let document = Array("An invoice, 42 EUR".utf8)
        var signature: [UInt8]
        switch maker {
        case .ours:
            signature = try await CMSSigner.sign(content: document, identity: try Self.identity(pki, row.signer))
        case .pyHanko:
            let source = try directory.write("source.txt", document)
            try PyHankoSigner.signBB(
                .cms,
                source,
                output: directory.path("pyhanko.p7s"),
                key: Self.keyPath(row.signer),
                certificate: pki.certificatePath(row.signer),
                chain: [pki.certificatePath("interm")]
            )
            signature = try directory.read("pyhanko.p7s")
        }
        if row == .alteredSignatureValue { try Self.flipLastByteOfDER(&signature) }
        let judged = row == .tamperedContent ? Array("An invoice, 43 EUR".utf8) : document
        let signaturePath = try directory.write("matrix.p7s", signature)
        let contentPath = try directory.write("matrix.txt", judged)
        let anchor = try Self.anchor(pki, row)
        let ours = try await CMSVerifier.verify(
            signature: signature,
            content: .bytes(judged, name: "matrix.txt"),
            trustAnchors: [anchor],
            policy: Self.policy(row),
            fetcher: loopbackFetcher
        )
        let theirs = try #require(
            try PyHankoValidator.basicADES(
                signature: signaturePath,
                content: contentPath,
                root: anchor,
                at: row.validationTime,
                revocation: row.checksRevocation,
                in: directory
            ).first
        )
        Self.compare(row, maker, ours: (ours.indication, ours.subIndication), detail: ours.failure, theirs: theirs)
    }

    @Test(arguments: Case.allCases, Maker.allCases)
    func padesIndicationIsPyHankos(_ row: Case, _ maker: Maker) async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let input = URL(fileURLWithPath: try directory.write("matrix.pdf", TestPDF.minimal()))
        let output = directory.url.appendingPathComponent("matrix-signed.pdf")
        switch maker {
        case .ours:
            _ = try await PDFSigner.sign(
                pdfAt: input,
                writingTo: output,
                identity: try Self.identity(pki, row.signer),
                options: PDFSignatureOptions()
            )
        case .pyHanko:
            try PyHankoSigner.signBB(
                .pdf,
                input.path,
                output: output.path,
                key: Self.keyPath(row.signer),
                certificate: pki.certificatePath(row.signer),
                chain: [pki.certificatePath("interm")]
            )
        }
        var bytes = try [UInt8](Data(contentsOf: output))
        try Self.damage(&bytes, row)
        try Data(bytes).write(to: output)
        let anchor = try Self.anchor(pki, row)
        let report = try await PDFSignatureVerifier.verify(
            pdfAt: output,
            trustAnchors: [anchor],
            policy: Self.policy(row),
            fetcher: loopbackFetcher
        )
        let ours = try #require(report.signatures.first)
        let theirs = try #require(
            try PyHankoValidator.basicADES(
                signature: output.path,
                content: nil,
                root: anchor,
                at: row.validationTime,
                revocation: row.checksRevocation,
                in: directory
            ).first
        )
        Self.compare(
            row,
            maker,
            ours: (ours.indication, ours.subIndication),
            detail: ours.verification.failure,
            theirs: theirs
        )
    }

    /// A PDF whose later, unsigned revision paints an annotation over the signed page (a change a
    /// signature without DocMDP `/P 3` does not allow): we say FAILED/FORMAT_FAILURE, as EU DSS's
    /// format checks do; pyHanko's AdES indication judges the CMS alone and passes it. The
    /// difference is the documented one (the article "Indications"); both verdicts are pinned here.
    @Test func aPDFChangedAsItsPolicyForbidsFailsWherePyHankosAdESIndicationPasses() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let input = URL(fileURLWithPath: try directory.write("changed.pdf", TestPDF.minimal()))
        let signed = directory.url.appendingPathComponent("changed-signed.pdf")
        _ = try await PDFSigner.sign(
            pdfAt: input,
            writingTo: signed,
            identity: try Self.identity(pki, "signer-rsa"),
            options: PDFSignatureOptions()
        )
        let changed = directory.path("changed-annotated.pdf")
        _ = try PDFAttacks.apply(.annotation("FreeText"), to: signed.path, writingTo: changed)
        let root = try pki.certificate("root")
        let report = try PDFSignatureVerifier.verify(
            pdfAt: URL(fileURLWithPath: changed),
            trustAnchors: [root],
            policy: ValidationPolicy()
        )
        let ours = try #require(report.signatures.first)
        let theirs = try #require(
            try PyHankoValidator.basicADES(signature: changed, content: nil, root: root, in: directory).first
        )
        let beside = "ours \(ours.indication)/\(ours.subIndication.map(\.rawValue) ?? "-"), pyHanko \(theirs)"
        #expect(ours.verification.indication == .passed, "the signed revision itself is intact: \(beside)")
        #expect(ours.indication == .failed && ours.subIndication == .formatFailure, "\(beside)")
        #expect(theirs.indication == "PASSED", "\(beside)")
    }

    /// Tampered content: the first page's MediaBox, inside the signed revision, grows by one point.
    /// Altered signature value: the last byte of the CMS in `/Contents` (hex) changes.
    static func damage(_ bytes: inout [UInt8], _ row: Case) throws {
        switch row {
        case .tamperedContent:
            let at = try #require(bytes.firstRange(of: Array("/MediaBox [0 0 595 842]".utf8)))
            bytes[at.lowerBound + 14] = UInt8(ascii: "6")
        case .alteredSignatureValue:
            let at = try #require(bytes.firstRange(of: Array("/Contents <".utf8))).upperBound
            let end = try #require(bytes[at...].firstIndex(of: UInt8(ascii: ">")))
            var der = try #require(hexBytes(bytes[at..<end]))
            try flipLastByteOfDER(&der)
            bytes.replaceSubrange(at..<end, with: Array(der.map { String(format: "%02x", $0) }.joined().utf8))
        default: break
        }
    }

    static func hexBytes(_ hex: ArraySlice<UInt8>) -> [UInt8]? {
        let text = String(decoding: hex, as: UTF8.self)
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            out.append(byte)
            index = next
        }
        return out
    }

    /// Our verdict must be pyHanko's: the indication always, the sub-indication where both give
    /// one; and both must be what EN 319 102-1 says for the case.
    static func compare(
        _ row: Case,
        _ maker: Maker,
        ours: (Indication, SubIndication?),
        detail: VerificationFailure?,
        theirs: PyHankoValidator.AdESVerdict
    ) {
        let mine = ours.0.rawValue + (ours.1.map { "/\($0)" } ?? "")
        let beside =
            "\(row), signed by \(maker): ours \(mine) (\(detail.map(String.init(describing:)) ?? "no failure")), pyHanko \(theirs)"
        #expect(ours.0.rawValue == theirs.indication, "\(beside)")
        if let sub = ours.1, let their = theirs.subIndication {
            #expect(sub.rawValue == their, "\(beside)")
        }
        #expect(ours.0 == row.expected.0 && ours.1 == row.expected.1, "\(beside)")
    }
}
