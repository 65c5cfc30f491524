public import CertificateProviders
public import Foundation
public import SignatureJournal
public import Signing

/// Two-phase PAdES signing through the coordinator: prepared here, its value made elsewhere, and
/// completed with the level asked for, written atomically and recorded in the journal as every
/// other signature (beside the coordinator's CAdES `prepare` and `complete`).
extension SigningCoordinator {
    /// What ``completePDF(_:signatureValue:pdfAt:writingTo:provider:options:)`` wrote and recorded.
    public struct CompletedPDF: Sendable {
        /// The field, ByteRange, sizes and signature timestamp.
        public let signing: PDFSigningResult
        /// The journal row (format `pades` to `pades-lta`, the original PDF's digest and size, the
        /// signed PDF as its file).
        public let record: SignatureRecord
        /// The signed PDF.
        public let outputURL: URL
    }

    /// Prepares a PAdES signature of the PDF at `input` for a key that is not here; see
    /// ``PDFSigner/prepare(pdfAt:certificate:chain:scheme:options:)``. Nothing is written or
    /// recorded.
    /// - Parameters:
    ///   - input: the PDF (left as it is).
    ///   - certificate: the signer's certificate.
    ///   - chain: the certificates that go with it.
    ///   - scheme: how the key signs (nil: the key's; `.rsaPSS` for RSA-PSS).
    ///   - options: field, reason, location, time, digest, and the TSA whose token needs room.
    /// - Returns: the pending signature.
    /// - Throws: as ``PDFSigner/prepare(pdfAt:certificate:chain:scheme:options:)``.
    public nonisolated func preparePDF(
        at input: URL,
        certificate: Certificate,
        chain: [Certificate] = [],
        scheme: SignatureScheme? = nil,
        options: PDFSignatureOptions = PDFSignatureOptions()
    ) throws -> PendingSignature {
        try PDFSigner.prepare(pdfAt: input, certificate: certificate, chain: chain, scheme: scheme, options: options)
    }

    /// Completes a pending PAdES signature with the value its key made; see
    /// ``completePDF(_:with:pdfAt:writingTo:provider:options:)``.
    /// - Parameters:
    ///   - pending: what ``preparePDF(at:certificate:chain:scheme:options:)`` made, here or in
    ///     another process.
    ///   - signatureValue: the key's signature of the pending signature's data to sign.
    ///   - input: the PDF it was prepared for.
    ///   - output: where to write (the input itself to sign in place).
    ///   - provider: the ID the journal records the signature under.
    ///   - options: B-T, B-LT or B-LTA, and whether an existing output is replaced.
    /// - Returns: the signing result, the journal row and the output.
    /// - Throws: as ``completePDF(_:with:pdfAt:writingTo:provider:options:)``.
    public func completePDF(
        _ pending: PendingSignature,
        signatureValue: [UInt8],
        pdfAt input: URL,
        writingTo output: URL,
        provider: ProviderID = SigningCoordinator.externalSignerID,
        options: PDFCompletionOptions = PDFCompletionOptions()
    ) async throws -> CompletedPDF {
        try await completePDF(
            pending,
            with: .signatureValue(signatureValue),
            pdfAt: input,
            writingTo: output,
            provider: provider,
            options: options
        )
    }

    /// Completes a pending PAdES signature with its answer (the value its key made, or a CMS made
    /// elsewhere over the prepared ByteRange digest; checked before anything is written, see
    /// ``PDFSigner/complete(_:with:pdfAt:writingTo:options:)``), adds the level `options` ask for,
    /// writes the signed PDF atomically and records it in the journal.
    ///
    /// When the journal row cannot be written, a new output is removed again (no signed file
    /// without its row); a PDF completed in place stays signed and the error says so.
    /// - Parameters:
    ///   - pending: what ``preparePDF(at:certificate:chain:scheme:options:)`` made, here or in
    ///     another process.
    ///   - answer: `.signatureValue(bytes)` or `.cms(bytes)`.
    ///   - input: the PDF it was prepared for.
    ///   - output: where to write (the input itself to sign in place).
    ///   - provider: the ID the journal records the signature under.
    ///   - options: B-T, B-LT or B-LTA, and whether an existing output is replaced.
    /// - Returns: the signing result, the journal row and the output.
    /// - Throws: as ``PDFSigner/complete(_:with:pdfAt:writingTo:options:)``; journal errors.
    public func completePDF(
        _ pending: PendingSignature,
        with answer: PendingSignatureAnswer,
        pdfAt input: URL,
        writingTo output: URL,
        provider: ProviderID = SigningCoordinator.externalSignerID,
        options: PDFCompletionOptions = PDFCompletionOptions()
    ) async throws -> CompletedPDF {
        let (result, documentDigest) = try await PDFSigner.completeReading(
            pending,
            answer: answer,
            input,
            output,
            options
        )
        let record = SignatureRecord(
            createdAt: pending.signingTime,
            providerID: provider,
            signerSubject: pending.certificate.subject,
            signerFingerprint: pending.certificate.sha256FingerprintHex,
            documentName: pending.documentName ?? input.lastPathComponent,
            documentSize: pending.pdf?.originalSize ?? 0,
            documentDigest: documentDigest,
            digestAlgorithm: pending.digestAlgorithm,
            format: options.level.padesFormat,
            isDetached: false,
            storage: .file(output.standardizedFileURL)
        )
        do {
            try await journal.append(record)
        } catch let error as CertificateProviderError {
            let inPlace = input.standardizedFileURL.path == output.standardizedFileURL.path
            guard inPlace else {
                try? FileManager.default.removeItem(at: output)
                throw error
            }
            throw CertificateProviderError(
                error.code,
                "\(output.path) is signed in place, but its journal row could not be written: \(error.reason)"
            )
        }
        return CompletedPDF(signing: result, record: record, outputURL: output)
    }
}
