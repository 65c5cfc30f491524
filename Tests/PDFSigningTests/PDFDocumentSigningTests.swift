import CSCProvider
import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

@Suite("PDFSigner with a DocumentSigning provider (CryptoPro DSS hash mode) against the emulator")
struct PDFDocumentSigningTests {
    func provider(_ url: URL, certificateID: Int = 0) throws -> CryptoProDSSProvider {
        try CryptoProDSSProvider(
            parameters: ProviderParameters([
                CryptoProDSSProvider.ParameterKey.url: .url(url),
                CryptoProDSSProvider.ParameterKey.username: .string(StandardSeed.username),
                CryptoProDSSProvider.ParameterKey.password: .secret(Secret(StandardSeed.password)),
                CryptoProDSSProvider.ParameterKey.pin: .secret(Secret(StandardSeed.certificatePIN)),
                CryptoProDSSProvider.ParameterKey.uploadMode: .string("hash"),
            ])
        )
    }

    /// An emulator, a CryptoPro DSS provider in hash mode (initialised) and a fresh PDF in a
    /// temporary directory: what each test signs with.
    struct ServerSigning {
        let emulator: DSSEmulator
        let directory: TemporaryDirectory
        let input: String
        let server: CryptoProDSSProvider
        let identity: SigningIdentity

        /// Signs the input through the server into `signed.pdf` in the directory.
        func sign(_ options: PDFSignatureOptions) async throws -> (path: String, result: PDFSigningResult) {
            try await directory.signPDF(input, into: "signed.pdf", identity: identity, server: server, options: options)
        }
    }

    /// Runs `body` with a ``ServerSigning`` over a fresh `variant` PDF.
    func withServer(
        _ prefix: String,
        _ variant: PDFFixtures.Variant,
        _ body: (ServerSigning) async throws -> Void
    ) async throws {
        try await withEmulator(.init(faultsEnabled: true, requestLogLimit: 0)) { emulator, url in
            let directory = try TemporaryDirectory(prefix: prefix)
            let input = try PDFFixtures.make(variant, in: directory)
            let server = try provider(url)
            let identity = try await server.initialize(options: [:])
            try await body(
                ServerSigning(
                    emulator: emulator,
                    directory: directory,
                    input: input,
                    server: server,
                    identity: identity
                )
            )
        }
    }

    @Test("the ByteRange digest goes up with Hash: True; pyHanko, pdfsig and qpdf accept the embedded CMS")
    func signsThroughHashMode() async throws {
        try await withServer("pdf-cryptopro", .objectStreams) { signing in
            let (output, result) = try await signing.sign(PDFSignatureOptions(reason: "DSS"))
            #expect(result.signatureSize <= result.reservedSize)

            let root = signing.emulator.seed.certificateAuthority
            try PDFFixtures.expectOthersAccept(output, root: root, in: signing.directory)

            let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: output), trustAnchors: [root])
            #expect(report.isValid, "\(report.signatures.map(\.verification))")
            #expect(report.signatures.first?.verification.signerCertificate == signing.identity.certificate)
            // The server decides the signed attributes: CryptoPro DSS (and the emulator) put a
            // signingTime into CAdES-BES, which PAdES baseline leaves to /M; validators accept it.
            #expect(report.signatures.first?.verification.signingTime != nil)
        }
    }

    @Test("with a TSA the server's CMS becomes B-T")
    func serverSignatureTimestamped() async throws {
        try await withServer("pdf-cryptopro-bt", .classic) { signing in
            let emulator = signing.emulator
            let (output, result) = try await signing.sign(
                PDFSignatureOptions(timestampAuthority: try emulatorTSA(emulator))
            )
            #expect(result.timestamp != nil)
            try PDFFixtures.expectTimestampedTrusted(
                output,
                root: emulator.seed.certificateAuthority,
                timestampRoot: emulator.timestampAuthorityCA,
                in: signing.directory
            )
        }
    }

    @Test("a server signature by another certificate than the selected one is refused and nothing is written")
    func otherSignerRefused() async throws {
        try await withServer("pdf-cryptopro-mismatch", .classic) { signing in
            // The caller claims another identity than the one the server signs with.
            let other = try PDFPKI(sharedBy: .pdfSuites).rsa
            let claimed = SigningIdentity(certificate: other.certificate, chain: other.chain, key: signing.identity.key)
            let output = signing.directory.path("signed.pdf")
            await #expect {
                try await PDFSigner.sign(
                    pdfAt: URL(fileURLWithPath: signing.input),
                    writingTo: URL(fileURLWithPath: output),
                    identity: claimed,
                    server: signing.server
                )
            } throws: { error in
                (error as? CertificateProviderError)?.code == .serverSignatureMismatch
            }
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }
}

@Suite("PDFSigner with a remote CSC key (signHash) against the emulator")
struct PDFCSCSigningTests {
    @Test("a SCAL 2 credential signs the signed attributes' hash; pyHanko, pdfsig and qpdf accept the PDF")
    func signsWithCSC() async throws {
        try await withEmulator(.init(faultsEnabled: true, requestLogLimit: 0)) { emulator, url in
            let (directory, input) = try PDFFixtures.make(.linearized, inNewDirectory: "pdf-csc")
            let provider = try CSCProvider(
                parameters: ProviderParameters([
                    CSCProvider.ParameterKey.url: .url(url),
                    CSCProvider.ParameterKey.clientID: .string(StandardSeed.username),
                    CSCProvider.ParameterKey.clientSecret: .secret(Secret(StandardSeed.password)),
                    CSCProvider.ParameterKey.credentialID: .string(String(StandardSeed.secondCertificateID)),
                ])
            )
            let identity = try await provider.initialize(options: [:])
            let output = try await directory.signPDF(input, into: "signed.pdf", identity: identity).path
            let root = emulator.seed.certificateAuthority
            try PDFFixtures.expectOthersAccept(output, root: root, in: directory)
            // Our own CMS: PAdES baseline, no signingTime.
            let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: output), trustAnchors: [root])
            #expect(report.isValid && report.signatures.first?.verification.signingTime == nil)
        }
    }
}
