import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

/// Two-phase PAdES signing: `PDFSigner.prepare` builds the incremental update once and leaves the
/// PDF alone, `openssl pkeyutl` signs the digest outside the package, and `PDFSigner.complete`
/// (from the pending signature's JSON alone) writes the signed PDF that pyHanko, poppler and qpdf
/// accept; every bad input is refused with its code and writes nothing.
@Suite(.enabled(if: ExternalTool.isAvailable("openssl"), "needs the openssl command"))
struct PDFPendingSignatureTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// Everything in `directory` but the files named: what a refused completion must not leave.
    static func strayFiles(in directory: TemporaryDirectory, besides names: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            !names.contains($0) && !$0.hasSuffix(".bin") && !$0.hasSuffix("-key.pem") && !$0.hasPrefix("source-")
        }
    }

    @Test(
        "prepare leaves the PDF alone; openssl pkeyutl signs the digest; complete from the JSON alone is valid",
        arguments: OpenSSLExternalSigner.all
    )
    func externalSignerCompletes(_ signer: OpenSSLExternalSigner) async throws {
        try #require(!signer.isGOST || GOSTEngine.isAvailable, "needs libengine-gost-openssl")
        let (directory, input) = try PDFFixtures.make(.objectStreams, inNewDirectory: "pdf-pending")
        let identity = try pki.pki.issueLeaf(subject: "CN=Подписант на телефоне,O=ООО Ромашка", keyType: signer.key)
        let key = try #require(identity.key as? LocalSigningKey)
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        let pending = try PDFSigner.prepare(
            pdfAt: URL(fileURLWithPath: input),
            certificate: identity.certificate,
            chain: identity.chain,
            scheme: signer.scheme,
            options: PDFSignatureOptions(reason: "Согласовано", digestAlgorithm: signer.digestAlgorithm)
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == original)
        #expect(pending.format.rawValue == "pades" && pending.version == 2)
        #expect(pending.pdf?.fieldName == "Signature1")
        let json = try pending.jsonData()
        // The JSON holds the update's objects, not the reserved zero digits.
        #expect(json.count < 3 * (pending.pdf?.reservedSize ?? 0))

        let value = try signer.sign(pending.digestToSign, key: key, in: directory)
        let restored = try PendingSignature(jsonData: json)
        #expect(restored == pending)
        let output = directory.path("signed.pdf")
        let result = try await PDFSigner.complete(
            restored,
            signatureValue: value,
            pdfAt: URL(fileURLWithPath: input),
            writingTo: URL(fileURLWithPath: output)
        )
        #expect(result.byteRange == pending.pdf?.byteRange)
        let signed = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(signed.prefix(original.count) == original)
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == original)

        let report = try pki.verify(output)
        #expect(report.isValid, "\(report.signatures.map { String(describing: $0.verification.failure) })")
        if signer.isGOST {
            // pyHanko and poppler know no GOST: qpdf checks the structure, ours the signature.
            #expect(try PDFFixtures.qpdfCheck(output).status == 0)
        } else {
            try PDFFixtures.expectOthersAccept(output, root: pki.root, in: directory)
        }
    }

    @Test("in place: the prepared PDF is replaced atomically by its signed version")
    func completesInPlace() async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-pending-inplace")
        let url = URL(fileURLWithPath: input)
        let key = try #require(pki.ec.key as? LocalSigningKey)
        let pending = try PDFSigner.prepare(pdfAt: url, certificate: pki.ec.certificate, chain: pki.ec.chain)
        let value = try OpenSSLExternalSigner.all[2].sign(pending.digestToSign, key: key, in: directory)
        try await PDFSigner.complete(pending, signatureValue: value, pdfAt: url, writingTo: url)
        #expect(try Self.strayFiles(in: directory, besides: [url.lastPathComponent]).isEmpty)
        try PDFFixtures.expectOthersAccept(input, root: pki.root, in: directory)
    }

    @Test("a visible appearance prepared here names the signer from the certificate, as one-call signing does")
    func preparedAppearanceNamesTheSigner() async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-pending-visible")
        let url = URL(fileURLWithPath: input)
        let output = directory.url.appendingPathComponent("signed.pdf")
        let key = try #require(pki.ec.key as? LocalSigningKey)
        var options = PDFSignatureOptions()
        options.appearance = PDFSignatureAppearance(textTemplate: "Signed by %(signer)")
        let pending = try PDFSigner.prepare(
            pdfAt: url,
            certificate: pki.ec.certificate,
            chain: pki.ec.chain,
            options: options
        )
        let value = try OpenSSLExternalSigner.all[2].sign(pending.digestToSign, key: key, in: directory)
        try await PDFSigner.complete(pending, signatureValue: value, pdfAt: url, writingTo: output)
        let subject = pki.ec.certificate.subject
        let commonName = try #require(subject.split(separator: ",").first { $0.hasPrefix("CN=") }?.dropFirst(3))
        let text = try PDFRender.text(output.path).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("Signed by \(commonName)"), "pdftotext: \(text)")
    }
}

extension PDFPendingSignatureTests {
    /// A prepared RSA signature of a fresh PDF, its good value and its JSON.
    struct Prepared {
        let directory: TemporaryDirectory
        let input: URL
        let original: Data
        let pending: PendingSignature
        let value: [UInt8]
        var output: URL { directory.url.appendingPathComponent("signed.pdf") }
        /// The pending signature's JSON as an object, to edit.
        func object() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: try pending.jsonData()) as? [String: Any])
        }
    }

    func prepared() throws -> Prepared {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-pending-refused")
        let url = URL(fileURLWithPath: input)
        let key = try #require(pki.rsa.key as? LocalSigningKey)
        let pending = try PDFSigner.prepare(pdfAt: url, certificate: pki.rsa.certificate, chain: pki.rsa.chain)
        let value = try OpenSSLExternalSigner.all[0].sign(pending.digestToSign, key: key, in: directory)
        return Prepared(
            directory: directory,
            input: url,
            original: try Data(contentsOf: url),
            pending: pending,
            value: value
        )
    }

    /// Completes `pending` with `value` and expects `code`, no output and the input as it was.
    func expectRefused(
        _ prepared: Prepared,
        _ pending: PendingSignature,
        value: [UInt8],
        _ code: CertificateProviderError.Code,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let error = try await #require(throws: CertificateProviderError.self, sourceLocation: sourceLocation) {
            try await PDFSigner.complete(
                pending,
                signatureValue: value,
                pdfAt: prepared.input,
                writingTo: prepared.output
            )
        }
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: prepared.output.path), sourceLocation: sourceLocation)
        let names: Set = [prepared.input.lastPathComponent]
        #expect(try Self.strayFiles(in: prepared.directory, besides: names).isEmpty, sourceLocation: sourceLocation)
    }

    @Test("a value from another key, over other bytes, with another certificate: refused, nothing written")
    func wrongValuesAndCertificatesAreRefused() async throws {
        let prepared = try prepared()
        let strangerIdentity = try pki.pki.issueLeaf(subject: "CN=Чужой", keyType: .rsa2048)
        let stranger = try #require(strangerIdentity.key as? LocalSigningKey)
        let rsa = OpenSSLExternalSigner.all[0]
        let fromStranger = try rsa.sign(prepared.pending.digestToSign, key: stranger, in: prepared.directory)
        try await expectRefused(prepared, prepared.pending, value: fromStranger, .signatureValueInvalid)
        var flipped = prepared.value
        flipped[flipped.count / 2] ^= 0x01
        try await expectRefused(prepared, prepared.pending, value: flipped, .signatureValueInvalid)
        try await expectRefused(prepared, prepared.pending, value: [], .signatureValueInvalid)

        // The pending file names another certificate: its signed attributes no longer follow.
        var object = try prepared.object()
        object["certificate"] = Data(strangerIdentity.certificate.derRepresentation).base64EncodedString()
        let otherCertificate = try PendingSignature(jsonData: try JSONSerialization.data(withJSONObject: object))
        try await expectRefused(prepared, otherCertificate, value: prepared.value, .pendingSignatureMismatch)
        try await expectRefused(prepared, otherCertificate, value: fromStranger, .pendingSignatureMismatch)

        // A CAdES pending signature is not a PDF one.
        let cades = try CMSSigner.prepare(content: [1, 2, 3], certificate: pki.rsa.certificate)
        try await expectRefused(prepared, cades, value: prepared.value, .invalidParameter)
    }

    @Test("a PDF changed between prepare and complete (appended to, or one byte of the same size): refused")
    func changedPDFsAreRefused() async throws {
        let prepared = try prepared()
        var appended = prepared.original
        appended.append(contentsOf: Array("\n% later\n".utf8))
        try appended.write(to: prepared.input)
        try await expectRefused(prepared, prepared.pending, value: prepared.value, .pendingSignatureMismatch)
        var edited = prepared.original
        edited[edited.count / 2] ^= 0x20
        try edited.write(to: prepared.input)
        try await expectRefused(prepared, prepared.pending, value: prepared.value, .pendingSignatureMismatch)
        #expect(try Data(contentsOf: prepared.input) == edited)

        // The original again: the same pending signature completes.
        try prepared.original.write(to: prepared.input)
        try await PDFSigner.complete(
            prepared.pending,
            signatureValue: prepared.value,
            pdfAt: prepared.input,
            writingTo: prepared.output
        )
        #expect(try pki.verify(prepared.output.path).isValid)
    }

    @Test("a pending file edited in its PDF update: refused when read or when completed, nothing written")
    func editedPDFUpdatesAreRefused() async throws {
        let prepared = try prepared()
        var object = try prepared.object()
        var pdf = try #require(object["pdf"] as? [String: Any])
        let text = try #require(pdf["update"] as? String)
        let compact = try #require(Data(base64Encoded: text))

        // A byte of the update changed (a digit of the claimed time in /M): its digest differs.
        var update = Array(compact)
        let time = try #require(compact.range(of: Data("/M (D:".utf8)))
        update[time.upperBound - compact.startIndex] =
            update[time.upperBound - compact.startIndex] == 0x31 ? 0x32 : 0x31
        pdf["update"] = Data(update).base64EncodedString()
        object["pdf"] = pdf
        let edited = try PendingSignature(jsonData: try JSONSerialization.data(withJSONObject: object))
        try await expectRefused(prepared, edited, value: prepared.value, .pendingSignatureMismatch)

        // Offsets and sizes that no longer describe the update: refused when read, the field named.
        let edits: [(String, Any)] = [
            ("byteRange", [0, 1, 2, 3]), ("contentsOffset", 5), ("reservedSize", 7), ("originalSHA256", "AAAA"),
            ("update", "bm90IGFuIHVwZGF0ZQ=="),
        ]
        for (key, value) in edits {
            var changed = try prepared.object()
            var payload = try #require(changed["pdf"] as? [String: Any])
            payload[key] = value
            changed["pdf"] = payload
            let error = try #require(throws: CertificateProviderError.self, "\(key)") {
                try PendingSignature(jsonData: try JSONSerialization.data(withJSONObject: changed))
            }
            #expect(error.code == .malformedInput, "\(key): \(error)")
            #expect(error.reason.contains("pdf."), "\(key): \(error.reason)")
        }
        #expect(try Data(contentsOf: prepared.input) == prepared.original)
    }
}
