import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import TestSupport

extension TemporaryDirectory {
    /// Signs the PDF at `input` with ``PDFSigner`` (our writer) into the file `name` in this directory.
    /// - Returns: the signed file's path and the signer's result.
    @discardableResult
    func signPDF(
        _ input: String,
        into name: String,
        identity: SigningIdentity,
        options: PDFSignatureOptions = PDFSignatureOptions()
    ) async throws -> (path: String, result: PDFSigningResult) {
        try await signPDF(input, into: name) {
            try await PDFSigner.sign(pdfAt: $0, writingTo: $1, identity: identity, options: options)
        }
    }

    /// Signs the PDF at `input` through a server that makes the whole CMS (``DocumentSigning``) into
    /// the file `name` in this directory.
    /// - Returns: the signed file's path and the signer's result.
    func signPDF(
        _ input: String,
        into name: String,
        identity: SigningIdentity,
        server: any DocumentSigning,
        options: PDFSignatureOptions = PDFSignatureOptions()
    ) async throws -> (path: String, result: PDFSigningResult) {
        try await signPDF(input, into: name) {
            try await PDFSigner.sign(pdfAt: $0, writingTo: $1, identity: identity, server: server, options: options)
        }
    }

    /// Runs `sign` from the file at `input` to the file `name` in this directory.
    private func signPDF(
        _ input: String,
        into name: String,
        _ sign: (URL, URL) async throws -> PDFSigningResult
    ) async throws -> (path: String, result: PDFSigningResult) {
        let output = path(name)
        return (output, try await sign(URL(fileURLWithPath: input), URL(fileURLWithPath: output)))
    }
}
