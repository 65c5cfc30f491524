import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

/// The test PKI every PDF suite shares (`PDFPKI(sharedBy: .pdfSuites)`): a root, an intermediate
/// and leaves under it (RSA and EC).
typealias PDFPKI = RSAAndECSigners

extension PDFPKI {
    /// Verifies the PDF at `path` against this PKI's root.
    func verify(_ path: String) throws -> PDFVerificationReport {
        try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: path), trustAnchors: [root])
    }

    /// Signs `input` into `output` with the RSA signer (in `field`, or a new field).
    func signOurs(_ input: String, _ output: String, field: String? = nil) async throws {
        try await signOurs(input, output, options: PDFSignatureOptions(fieldName: field))
    }

    /// Signs `input` into `output` with the RSA signer and `options`.
    func signOurs(_ input: String, _ output: String, options: PDFSignatureOptions) async throws {
        try await PDFSigner.sign(
            pdfAt: URL(fileURLWithPath: input),
            writingTo: URL(fileURLWithPath: output),
            identity: rsa,
            options: options
        )
    }
}

@Suite("PDFSigner: PAdES B-B that pyHanko, pdfsig and qpdf accept")
struct PDFSignerTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// Checks a signed file with all three oracles; `signatures` is how many it must hold.
    func expectValid(
        _ path: String,
        signatures: Int,
        directory: TemporaryDirectory,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try PDFFixtures.expectOthersAccept(
            path,
            root: pki.root,
            signatures: signatures,
            in: directory,
            sourceLocation: sourceLocation
        )
    }

    @Test(
        "classic, object-stream and linearized PDFs made by qpdf; RSA and EC; local and external keys",
        arguments: PDFFixtures.Variant.allCases
    )
    func signsEveryVariant(_ variant: PDFFixtures.Variant) async throws {
        let (directory, input) = try PDFFixtures.make(variant, inNewDirectory: "pdf-sign")
        for (name, identity) in [("rsa", pki.rsa), ("ec-external", try PDFPKI.external(pki.ec))] {
            let (output, result) = try await directory.signPDF(
                input,
                into: "\(variant)-\(name)-signed.pdf",
                identity: identity,
                options: PDFSignatureOptions(reason: "Согласовано", location: "Berlin")
            )
            #expect(result.fieldName == "Signature1")
            #expect(result.signatureSize <= result.reservedSize)
            try expectValid(output, signatures: 1, directory: directory)
            // The original bytes are kept: the update is appended.
            let original = try Data(contentsOf: URL(fileURLWithPath: input))
            let signed = try Data(contentsOf: URL(fileURLWithPath: output))
            #expect(signed.prefix(original.count) == original)
        }
    }

    @Test(
        "a second signature (countersignature) keeps the first valid, on every variant",
        arguments: PDFFixtures.Variant.allCases
    )
    func countersigns(_ variant: PDFFixtures.Variant) async throws {
        let (directory, input) = try PDFFixtures.make(variant, inNewDirectory: "pdf-countersign")
        let first = try await directory.signPDF(input, into: "first.pdf", identity: pki.rsa).path
        let (second, result) = try await directory.signPDF(first, into: "second.pdf", identity: pki.ec)
        #expect(result.fieldName == "Signature2")
        try expectValid(second, signatures: 2, directory: directory)
    }

    @Test("signs a PDF pyHanko signed, and pyHanko's signature stays valid")
    func signsPyHankoSignedPDF() async throws {
        let (directory, input) = try PDFFixtures.make(.objectStreams, inNewDirectory: "pdf-pyhanko")
        let pyhanko = directory.path("pyhanko.pdf")
        try PDFFixtures.pyhankoSign(input, output: pyhanko, identity: pki.rsa, field: "PyHankoSig", in: directory)
        let output = try await directory.signPDF(pyhanko, into: "both.pdf", identity: pki.ec).path
        try expectValid(output, signatures: 2, directory: directory)
    }

    @Test("in place: the file is replaced atomically by its signed version")
    func signsInPlace() async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-inplace")
        let input = URL(fileURLWithPath: try PDFFixtures.make(.classic, in: directory))
        let before = try Data(contentsOf: input)
        try await PDFSigner.sign(
            pdfAt: input,
            writingTo: input,
            identity: pki.rsa,
            options: PDFSignatureOptions(fieldName: "Approval")
        )
        let after = try Data(contentsOf: input)
        #expect(after.count > before.count && after.prefix(before.count) == before)
        try expectValid(input.path, signatures: 1, directory: directory)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).allSatisfy {
                !$0.hasSuffix(".partial")
            }
        )
    }

    @Test("an existing output is refused; a signed field name is refused")
    func refusesOverwrites() async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-refuse")
        let input = URL(fileURLWithPath: try PDFFixtures.make(.classic, in: directory))
        let output = URL(fileURLWithPath: directory.path("out.pdf"))
        try await PDFSigner.sign(
            pdfAt: input,
            writingTo: output,
            identity: pki.rsa,
            options: PDFSignatureOptions(fieldName: "Approval")
        )
        await #expect(throws: CertificateProviderError(.alreadyExists, "")) {
            try await PDFSigner.sign(pdfAt: input, writingTo: output, identity: pki.rsa)
        }
        await #expect(throws: CertificateProviderError(.alreadyExists, "")) {
            try await PDFSigner.sign(
                pdfAt: output,
                writingTo: URL(fileURLWithPath: directory.path("again.pdf")),
                identity: pki.rsa,
                options: PDFSignatureOptions(fieldName: "Approval")
            )
        }
    }

    @Test("encrypted PDFs are refused with a clear error")
    func refusesEncrypted() async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-encrypted")
        for (name, userPassword) in [("open", ""), ("locked", "user-secret")] {
            let encrypted = directory.path("\(name).pdf")
            let result = try ExternalTool.run(
                "qpdf",
                ["--encrypt", userPassword, "owner-secret", "256", "--", input, encrypted]
            )
            try #require(result.status == 0, "\(result.errorOutput)")
            do {
                try await PDFSigner.sign(
                    pdfAt: URL(fileURLWithPath: encrypted),
                    writingTo: URL(fileURLWithPath: directory.path("\(name)-signed.pdf")),
                    identity: pki.rsa
                )
                Issue.record("an encrypted PDF (\(name)) was signed")
            } catch let error as CertificateProviderError {
                #expect(error.code == .unsupportedOperation)
                #expect(error.reason.contains("encrypted"))
            }
            #expect(!FileManager.default.fileExists(atPath: directory.path("\(name)-signed.pdf")))
        }
    }

    @Test("a certification signature that forbids changes (DocMDP P=1) is honoured")
    func refusesDocMDPNoChanges() async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-docmdp")
        let certified = directory.path("certified.pdf")
        try PDFFixtures.pyhankoSign(
            input,
            output: certified,
            identity: pki.rsa,
            field: "Author",
            in: directory,
            certifyNoChanges: true
        )
        await #expect(throws: CertificateProviderError(.pdfChangesForbidden, "")) {
            try await PDFSigner.sign(
                pdfAt: URL(fileURLWithPath: certified),
                writingTo: URL(fileURLWithPath: directory.path("x.pdf")),
                identity: pki.ec
            )
        }
    }

    @Test("the CMS follows PAdES baseline: no signingTime, ESS signing-certificate-v2, /M in the dictionary")
    func padesAttributes() async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-attrs")
        let (output, result) = try await directory.signPDF(input, into: "signed.pdf", identity: pki.rsa)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        let hex = bytes[Int(result.byteRange[1]) + 1..<Int(result.byteRange[2]) - 1]
        let der = stride(from: 0, to: result.signatureSize * 2, by: 2).map { index -> UInt8 in
            UInt8(String(decoding: hex[hex.startIndex + index..<hex.startIndex + index + 2], as: UTF8.self), radix: 16)!
        }
        let cmsPath = try directory.write("sig.der", der)
        let printed = try ExternalTool.run("openssl", ["cms", "-cmsout", "-print", "-inform", "DER", "-in", cmsPath])
        #expect(printed.status == 0)
        #expect(!printed.output.contains("signingTime"))
        #expect(printed.output.contains("id-smime-aa-signingCertificateV2"))
        #expect(String(decoding: bytes, as: UTF8.self).contains("/SubFilter /ETSI.CAdES.detached"))
    }
}
