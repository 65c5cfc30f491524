import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

/// What other signers put in a PDF's `/Contents`: BER (indefinite-length) CMS, and bytes after the
/// CMS that are not zero padding. The PDF path hands the whole `/Contents` to the CMS layer, which
/// reads BER and allows only zero padding; pyHanko's verdict is asserted beside ours.
@Suite("PDF /Contents from other signers: BER CMS and trailing bytes, judged beside pyHanko")
struct PDFInteropContentsTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// A PDF signed by certsign, and its `/Contents` gap `a..<b` (the hex string with its `<>`).
    func signed(in directory: TemporaryDirectory) async throws -> (bytes: [UInt8], gap: Range<Int>) {
        let input = try PDFFixtures.make(.classic, in: directory)
        let output = directory.path("signed.pdf")
        _ = try await PDFSigner.sign(
            pdfAt: URL(fileURLWithPath: input),
            writingTo: URL(fileURLWithPath: output),
            identity: pki.ec
        )
        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: output), trustAnchors: [pki.root])
        let range = try #require(report.signatures.first?.byteRange)
        return (Array(try Data(contentsOf: URL(fileURLWithPath: output))), Int(range[1])..<Int(range[2]))
    }

    /// `bytes` with the `/Contents` gap holding `contents` as hex, padded with `padding` hex digits.
    func replacingContents(
        _ bytes: [UInt8],
        gap: Range<Int>,
        with contents: [UInt8],
        padding: UInt8 = UInt8(ascii: "0")
    ) throws -> [UInt8] {
        let hex = Array(contents.map { String(format: "%02X", $0) }.joined().utf8)
        try #require(hex.count <= gap.count - 2, "the CMS does not fit the reserved /Contents")
        let filled = hex + [UInt8](repeating: padding, count: gap.count - 2 - hex.count)
        return Array(bytes[..<gap.lowerBound]) + [UInt8(ascii: "<")] + filled + [UInt8(ascii: ">")]
            + Array(bytes[gap.upperBound...])
    }

    /// The DER CMS at the start of the `/Contents` gap (its length from the DER header).
    func der(in bytes: [UInt8], gap: Range<Int>) throws -> [UInt8] {
        let hex = String(decoding: bytes[(gap.lowerBound + 1)..<(gap.upperBound - 1)], as: UTF8.self)
        var decoded: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            decoded.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        try #require(decoded.first == 0x30 && decoded[1] & 0x80 != 0)
        let lengthBytes = Int(decoded[1] & 0x7F)
        let length = decoded[2..<(2 + lengthBytes)].reduce(0) { $0 << 8 | Int($1) }
        return Array(decoded.prefix(2 + lengthBytes + length))
    }

    @Test("A BER (indefinite-length) CMS in /Contents verifies, in pyHanko too")
    func berContents() async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-ber")
        let (bytes, gap) = try await signed(in: directory)
        let ber = try CMSInteropFixtures.reencodeBER(try der(in: bytes, gap: gap), in: directory)
        #expect(Array(ber.prefix(2)) == [0x30, 0x80])
        let path = try directory.write("ber.pdf", try replacingContents(bytes, gap: gap, with: ber))

        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: path), trustAnchors: [pki.root])
        let signature = try #require(report.signatures.first)
        #expect(signature.isValid, "\(signature.verification)")
        #expect(signature.byteRangeProblem == nil)
        #expect(signature.verification.signerCertificate == pki.ec.certificate)
        let verdicts = try PDFFixtures.pyhankoValidate(path, root: pki.root, in: directory)
        #expect(verdicts.count == 1 && verdicts.first?.contains("INTACT:TRUSTED") == true, "\(verdicts)")
    }

    @Test("Bytes after the CMS in /Contents that are not zero padding make the signature INVALID")
    func junkAfterContents() async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-junk")
        let (bytes, gap) = try await signed(in: directory)
        let cms = try der(in: bytes, gap: gap)
        let path = try directory.write(
            "junk.pdf",
            try replacingContents(bytes, gap: gap, with: cms, padding: UInt8(ascii: "A"))
        )
        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: path), trustAnchors: [pki.root])
        let signature = try #require(report.signatures.first)
        #expect(signature.verification.failure?.code == .malformed, "\(signature.verification)")
        #expect(signature.verification.failure?.reason.contains("zero padding") == true)
        // pyHanko reads the CMS and ignores what follows it (INTACT:TRUSTED,UNTOUCHED). We refuse, as
        // those bytes are inside no signature and can carry anything.
        let verdicts = try PDFFixtures.pyhankoValidate(path, root: pki.root, in: directory)
        #expect(verdicts == ["Signature1: INTACT:TRUSTED,UNTOUCHED"], "\(verdicts)")
    }
}
