import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning

extension TemporaryDirectory {
    /// Signs the PDF at `input` with ``PDFSigner`` (our writer) into the file `name` in this directory.
    /// - Returns: the signed file's path.
    @discardableResult
    func signPDF(
        _ input: String,
        into name: String,
        identity: SigningIdentity,
        options: PDFSignatureOptions = PDFSignatureOptions()
    ) async throws -> String {
        let output = path(name)
        try await PDFSigner.sign(
            pdfAt: URL(fileURLWithPath: input),
            writingTo: URL(fileURLWithPath: output),
            identity: identity,
            options: options
        )
        return output
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
        let output = path(name)
        let result = try await PDFSigner.sign(
            pdfAt: URL(fileURLWithPath: input),
            writingTo: URL(fileURLWithPath: output),
            identity: identity,
            server: server,
            options: options
        )
        return (output, result)
    }
}
