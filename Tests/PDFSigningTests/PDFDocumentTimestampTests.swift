import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

/// PAdES document timestamps (`/Type /DocTimeStamp`) that pyHanko or certsign adds to a PDF certsign signed,
/// with the emulator's TSA; pyHanko's `validate_pdf_timestamp` is asserted beside our verdict.
@Suite("PDF document timestamps: pyHanko's and ours on a certsign-signed PDF, judged beside pyHanko")
struct PDFDocumentTimestampTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// Who adds the document timestamp.
    enum Stamper: String, CaseIterable, Sendable {
        case pyHanko, certsign
    }

    /// Signs a PDF of `variant` with certsign, then has `stamper` add a document timestamp (field
    /// `DocTS`) from the emulator's TSA; returns the timestamped file.
    func timestamped(
        _ variant: PDFFixtures.Variant,
        emulator: DSSEmulator,
        in directory: TemporaryDirectory,
        stamper: Stamper = .pyHanko
    ) async throws -> String {
        let input = try PDFFixtures.make(variant, in: directory)
        let signed = directory.path("signed.pdf")
        _ = try await PDFSigner.sign(
            pdfAt: URL(fileURLWithPath: input),
            writingTo: URL(fileURLWithPath: signed),
            identity: pki.rsa
        )
        let output = directory.path("timestamped.pdf")
        if stamper == .certsign {
            let result = try await PDFSigner.addDocumentTimestamp(
                toPDFAt: URL(fileURLWithPath: signed),
                writingTo: URL(fileURLWithPath: output),
                authority: try emulatorTSA(emulator),
                fieldName: "DocTS"
            )
            #expect(result.fieldName == "DocTS")
            #expect(result.timestamp != nil)
            return output
        }
        try PyHankoTimestamper.addDocumentTimestamp(
            signed,
            output: output,
            tsaURL: try #require(emulator.timestampURL),
            field: "DocTS"
        )
        return output
    }

    /// pyHanko's verdict on every field: `field: sig SUMMARY` for signatures, `field: ts INTACT VALID
    /// TRUSTED TIME` (`validate_pdf_timestamp`) for document timestamps, `field: error …` when it throws.
    func pyhankoVerdicts(_ path: String, tsa: Certificate, in directory: TemporaryDirectory) throws -> [String] {
        let ca = try directory.write("pyhanko-ca-\(UUID().uuidString).pem", text: pki.root.pemRepresentation)
        let tsaPath = try directory.write("pyhanko-tsa-\(UUID().uuidString).pem", text: tsa.pemRepresentation)
        let script = """
            import sys, logging
            logging.disable(logging.CRITICAL)
            from pyhanko.keys import load_cert_from_pemder
            from pyhanko.pdf_utils.reader import PdfFileReader
            from pyhanko.sign.validation import validate_pdf_signature, validate_pdf_timestamp
            from pyhanko_certvalidator import ValidationContext
            vc = ValidationContext(trust_roots=[load_cert_from_pemder(sys.argv[1])])
            tsvc = ValidationContext(trust_roots=[load_cert_from_pemder(sys.argv[2])])
            with open(sys.argv[3], 'rb') as f:
                try:
                    signatures = PdfFileReader(f).embedded_signatures
                except Exception as e:
                    print(f"file: error {type(e).__name__}: {e}")
                    signatures = []
                for sig in signatures:
                    try:
                        if sig.sig_object.get('/Type') == '/DocTimeStamp':
                            st = validate_pdf_timestamp(sig, tsvc)
                            print(f"{sig.field_name}: ts {st.intact} {st.valid} {st.trusted} {st.timestamp.isoformat()}")
                        else:
                            st = validate_pdf_signature(sig, vc, ts_validation_context=tsvc)
                            print(f"{sig.field_name}: sig {st.summary()}")
                    except Exception as e:
                        print(f"{sig.field_name}: error {type(e).__name__}: {e}")
            """
        let result = try ExternalTool.run("python3", ["-c", script, ca, tsaPath, path])
        try #require(result.status == 0, "pyHanko: \(result.errorOutput)")
        return result.output.split(separator: "\n").map(String.init)
    }

    func ours(_ path: String, emulator: DSSEmulator) throws -> PDFVerificationReport {
        var policy = ValidationPolicy()
        policy.timestampTrustAnchors = [emulator.timestampAuthorityCA]
        return try PDFSignatureVerifier.verify(
            pdfAt: URL(fileURLWithPath: path),
            trustAnchors: [pki.root],
            policy: policy
        )
    }

    @Test(
        "A DocTimeStamp (pyHanko's or ours) is VALID with its time, as pyHanko's validate_pdf_timestamp says",
        arguments: [PDFFixtures.Variant.classic, .objectStreams],
        Stamper.allCases
    )
    func validDocumentTimestamp(_ variant: PDFFixtures.Variant, stamper: Stamper) async throws {
        try await withEmulator(.init(requestLogLimit: 0)) { emulator, _ in
            let directory = try TemporaryDirectory(prefix: "pdf-docts")
            let before = Date().addingTimeInterval(-1)
            let path = try await timestamped(variant, emulator: emulator, in: directory, stamper: stamper)
            let after = Date().addingTimeInterval(1)

            let report = try ours(path, emulator: emulator)
            #expect(report.signatures.map(\.kind) == [.signature, .documentTimestamp])
            #expect(report.isValid, "\(report.signatures.map(\.verification))")
            let signature = try #require(report.signatures.first)
            #expect(signature.documentTimestamp == nil)
            let stamp = try #require(report.signatures.last)
            #expect(stamp.field == "DocTS")
            #expect(stamp.subFilter == "ETSI.RFC3161")
            #expect(stamp.isValid, "\(stamp.verification)")
            #expect(stamp.verification.format == .documentTimestamp)
            let token = try #require(stamp.documentTimestamp)
            #expect(token.isValid)
            #expect(token.time >= before && token.time <= after, "\(token.time)")
            #expect(stamp.provenTime == token.time)
            #expect(token.tsa == stamp.verification.signerCertificate)
            #expect(token.tsa?.subject.isEmpty == false)

            let verdicts = try pyhankoVerdicts(path, tsa: emulator.timestampAuthorityCA, in: directory)
            #expect(verdicts.count == 2, "\(verdicts)")
            #expect(verdicts.first?.contains("sig INTACT:TRUSTED") == true, "\(verdicts)")
            let pyhankoStamp = try #require(verdicts.last)
            #expect(pyhankoStamp.hasPrefix("DocTS: ts True True True "), "\(verdicts)")
            // Both read the same genTime.
            let time = try #require(
                ISO8601DateFormatter().date(from: String(pyhankoStamp.split(separator: " ").last ?? ""))
            )
            #expect(abs(time.timeIntervalSince(token.time)) < 1, "\(time) vs \(token.time)")
        }
    }

    @Test(
        "A changed covered byte (wrong imprint) and a tampered token are INVALID, in pyHanko too",
        arguments: Stamper.allCases
    )
    func invalidDocumentTimestamp(stamper: Stamper) async throws {
        try await withEmulator(.init(requestLogLimit: 0)) { emulator, _ in
            let directory = try TemporaryDirectory(prefix: "pdf-docts-bad")
            let path = try await timestamped(.classic, emulator: emulator, in: directory, stamper: stamper)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            let report = try ours(path, emulator: emulator)
            let signedEnd = try #require(report.signatures.first?.byteRange).suffix(2).reduce(0, +)

            // 1. A byte the timestamp covers, in its own revision: the field name DocTS -> DocTX.
            let tail = Array(bytes[Int(signedEnd)...])
            // pyHanko writes the name as a literal string, certsign in hex: DocTS -> DocTX either way.
            var renamed = bytes
            if let literal = tail.firstRange(of: Array("(DocTS)".utf8)) {
                renamed[literal.lowerBound + Int(signedEnd) + 5] = UInt8(ascii: "X")
            } else {
                let hex = try #require(tail.firstRange(of: Array("<446F635453>".utf8)))
                renamed[hex.lowerBound + Int(signedEnd) + 10] = UInt8(ascii: "8")
            }
            let renamedPath = try directory.write("renamed.pdf", renamed)

            // 2. The token's imprint itself (hex in /Contents): one digit changed.
            let stampRange = try #require(report.signatures.last?.byteRange)
            let covered = Array(
                bytes[0..<Int(stampRange[1])] + bytes[Int(stampRange[2])..<Int(stampRange[2] + stampRange[3])]
            )
            let imprint = DigestAlgorithm.sha256.hash(covered).map { String(format: "%02x", $0) }.joined()
            let hexRange = try #require(
                bytes.firstRange(of: Array(imprint.utf8)) ?? bytes.firstRange(of: Array(imprint.uppercased().utf8))
            )
            let offset = hexRange.lowerBound
            var tampered = bytes
            tampered[offset] = tampered[offset] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            let tamperedPath = try directory.write("tampered.pdf", tampered)

            for (path, what) in [(renamedPath, "renamed"), (tamperedPath, "tampered")] {
                let report = try ours(path, emulator: emulator)
                #expect(!report.isValid, "\(what)")
                let stamp = try #require(report.signatures.first { $0.kind == .documentTimestamp })
                #expect(stamp.verification.failure?.code == .timestampInvalid, "\(what): \(stamp.verification)")
                #expect(stamp.provenTime == nil)
                #expect(stamp.documentTimestamp?.isValid == false, "\(what): \(stamp.verification)")
                // The certsign signature before it is untouched.
                #expect(report.signatures.first?.isValid == true, "\(what)")
                let verdicts = try pyhankoVerdicts(path, tsa: emulator.timestampAuthorityCA, in: directory)
                let pyhankoStamp = try #require(verdicts.last)
                // pyHanko: not intact (the imprint or the token's own digest does not match).
                #expect(pyhankoStamp.contains(": ts False "), "\(what): \(verdicts)")
            }
            let renamedStamp = try ours(renamedPath, emulator: emulator).signatures.last
            #expect(renamedStamp?.verification.failure?.reason.contains("imprint") == true)
        }
    }
}
