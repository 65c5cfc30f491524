import CertificateProviders
public import Foundation
public import Signing

extension PDFSigner {
    /// Adds a PAdES document timestamp (ETSI EN 319 142-1 5.4, ISO 32000-2 12.8.5) to `input` and
    /// writes the result to `output`; when both are the same file it is replaced atomically.
    ///
    /// The timestamp is a new signature field whose value has `/Type /DocTimeStamp` and `/SubFilter
    /// /ETSI.RFC3161`: `/Contents` holds the TSA's RFC 3161 token over the digest of the new
    /// revision's ByteRange (everything before it included), appended as an incremental update, so
    /// earlier signatures stay valid. It proves the whole document, signatures and validation data
    /// included, existed at the token's time: the archive timestamp of PAdES B-LTA.
    ///
    /// - Parameters:
    ///   - input: the PDF.
    ///   - output: where to write; must not exist unless it is `input`.
    ///   - authority: the TSA; its ``TimestampAuthorityClient/Configuration/digestAlgorithm`` hashes
    ///     the ByteRange, and its answer is checked (imprint, nonce, signature, TSA chain) before
    ///     anything is written.
    ///   - fieldName: the field to fill or create; default a new `Signature1` (`Signature2`, …).
    /// - Returns: the field name, ByteRange, sizes and the token (``PDFSigningResult/timestamp``).
    /// - Throws: as ``sign(pdfAt:writingTo:identity:options:)``: the TSA client's errors
    ///   (`.timestampInvalid`, `.serverRejected`, `.network`, `.timeout`), `.unsupportedOperation`
    ///   for an encrypted PDF, `.alreadyExists`, `.malformedInput`, `.fileSystem`. Nothing is written
    ///   when it throws. A certification with "no changes" (DocMDP P=1) does not stop it: validation
    ///   data may be added under every DocMDP permission.
    @discardableResult
    public static func addDocumentTimestamp(
        toPDFAt input: URL,
        writingTo output: URL,
        authority: TimestampAuthorityClient,
        fieldName: String? = nil
    ) async throws -> PDFSigningResult {
        let options = PDFSignatureOptions(
            fieldName: fieldName,
            digestAlgorithm: authority.configuration.digestAlgorithm
        )
        var token: TimestampToken?
        let written = try await sign(
            input,
            output,
            reservation: timestampReservation(for: authority),
            options: options,
            kind: .documentTimestamp
        ) { digest, _ in
            let stamped = try await authority.timestamp(digest: digest)
            token = stamped
            return stamped.derRepresentation
        }
        return PDFSigningResult(
            fieldName: written.fieldName,
            byteRange: written.byteRange,
            signatureSize: written.signatureSize,
            reservedSize: written.reservedSize,
            timestamp: token
        )
    }
}
