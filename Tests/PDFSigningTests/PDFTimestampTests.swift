import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import PDFSigning
import RemoteProviderSupport
import Signing
import TestSupport
import Testing

/// A TSA client for the emulator's `/tsa` (or a fault path under it), trusting its CA.
func emulatorTSA(_ emulator: DSSEmulator, fault: String? = nil) throws -> TimestampAuthorityClient {
    var url = try #require(emulator.timestampURL)
    if let fault { url = url.appendingPathComponent(fault) }
    return TimestampAuthorityClient(
        configuration: .init(url: url, trustAnchors: [emulator.timestampAuthorityCA], timeout: 10),
        fetcher: TransportBinaryFetcher(transport: CurlTransport())
    )
}

@Suite("PDFSigner B-T: a signature timestamp inside the PDF signature")
struct PDFTimestampTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// Runs `body` with a fault-enabled emulator (the TSA) and a fresh `variant` PDF in a new directory.
    func withTSA(
        _ prefix: String,
        _ variant: PDFFixtures.Variant,
        _ body: (DSSEmulator, TemporaryDirectory, String) async throws -> Void
    ) async throws {
        try await withEmulator(.init(faultsEnabled: true, requestLogLimit: 0)) { emulator, _ in
            let (directory, input) = try PDFFixtures.make(variant, inNewDirectory: prefix)
            try await body(emulator, directory, input)
        }
    }

    /// ``PDFFixtures/expectTimestampedTrusted(_:root:timestampRoot:in:sourceLocation:)`` with the suite's
    /// root for the signer and the emulator's TSA CA for the timestamp.
    func expectTrusted(
        _ output: String,
        timestampedBy emulator: DSSEmulator,
        in directory: TemporaryDirectory,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try PDFFixtures.expectTimestampedTrusted(
            output,
            root: pki.root,
            timestampRoot: emulator.timestampAuthorityCA,
            in: directory,
            sourceLocation: sourceLocation
        )
    }

    @Test(
        "B-T on every variant: pyHanko trusts signature and timestamp, pdfsig and qpdf accept, openssl ts verifies the token",
        arguments: PDFFixtures.Variant.allCases
    )
    func signsBT(_ variant: PDFFixtures.Variant) async throws {
        try await withTSA("pdf-bt", variant) { emulator, directory, input in
            let before = Date()
            let (output, result) = try await directory.signPDF(
                input,
                into: "signed-bt.pdf",
                identity: pki.rsa,
                options: PDFSignatureOptions(reason: "B-T", timestampAuthority: try emulatorTSA(emulator))
            )
            let after = Date()
            let token = try #require(result.timestamp)
            #expect(token.time >= before.addingTimeInterval(-1) && token.time <= after.addingTimeInterval(1))
            #expect(result.signatureSize <= result.reservedSize)
            try expectTrusted(output, timestampedBy: emulator, in: directory)

            // The token inside the PDF is an RFC 3161 token over the signature value.
            let value = directory.path("value.bin")
            let tokenPath = directory.path("token.der")
            #expect(try PDFFixtures.extractTimestamp(output, value: value, token: tokenPath))
            let ca = try directory.write("tsa-ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
            let verified = try ExternalTool.run(
                "openssl",
                ["ts", "-verify", "-token_in", "-in", tokenPath, "-data", value, "-CAfile", ca]
            )
            #expect(verified.output.contains("Verification: OK"), "\(verified.output)\(verified.errorOutput)")
            let wrong = try ExternalTool.run(
                "openssl",
                ["ts", "-verify", "-token_in", "-in", tokenPath, "-data", input, "-CAfile", ca]
            )
            #expect(!wrong.succeeded)

            // Our verifier reports the proven time beside the claimed one.
            var policy = ValidationPolicy()
            policy.timestampTrustAnchors = [emulator.timestampAuthorityCA]
            let report = try PDFSignatureVerifier.verify(
                pdfAt: URL(fileURLWithPath: output),
                trustAnchors: [pki.root],
                policy: policy
            )
            let signature = try #require(report.signatures.first)
            #expect(signature.isValid, "\(signature.verification)")
            #expect(signature.provenTime == token.time)
            #expect(signature.claimedTime != nil)
        }
    }

    @Test("a reservation too small for the signature and token grows and the signature is made again")
    func reservationGrows() async throws {
        try await withTSA("pdf-bt-grow", .objectStreams) { emulator, directory, input in
            let (output, result) = try await directory.signPDF(
                input,
                into: "signed.pdf",
                identity: pki.ec,
                options: PDFSignatureOptions(timestampAuthority: try emulatorTSA(emulator), reservedSize: 64)
            )
            #expect(result.timestamp != nil)
            #expect(result.reservedSize > 64)
            #expect(result.signatureSize <= result.reservedSize)
            try expectTrusted(output, timestampedBy: emulator, in: directory)

            // B-B too: the countersignature's reservation grows the same way; both stay valid.
            let (second, grown) = try await directory.signPDF(
                output,
                into: "second.pdf",
                identity: pki.rsa,
                options: PDFSignatureOptions(reservedSize: 64)
            )
            #expect(grown.reservedSize > 64 && grown.signatureSize <= grown.reservedSize)
            let pdfsig = try PDFFixtures.pdfsig(second)
            #expect(
                pdfsig.components(separatedBy: "Signature Validation: Signature is Valid.").count - 1 == 2,
                "\(pdfsig)"
            )
        }
    }

    @Test("a TSA answering over another imprint is a typed error and no output file is written")
    func wrongImprintWritesNothing() async throws {
        try await withTSA("pdf-bt-fault", .classic) { emulator, directory, input in
            let output = directory.path("signed.pdf")
            let before = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
            await #expect {
                try await PDFSigner.sign(
                    pdfAt: URL(fileURLWithPath: input),
                    writingTo: URL(fileURLWithPath: output),
                    identity: pki.rsa,
                    options: PDFSignatureOptions(timestampAuthority: try emulatorTSA(emulator, fault: "wrong-imprint"))
                )
            } throws: { error in
                (error as? CertificateProviderError)?.code == .timestampInvalid
            }
            #expect(!FileManager.default.fileExists(atPath: output))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == before)
        }
    }
}
