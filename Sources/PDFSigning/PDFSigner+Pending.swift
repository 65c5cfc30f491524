public import CertificateProviders
internal import Durability
public import Foundation
import Glibc
public import Signing

/// Two-phase PAdES signing: the incremental update is built once with its `/Contents` reserved and
/// its `/ByteRange` fixed, the input is left as it is, and the value made elsewhere is put in later,
/// in this process or another.
extension PDFSigner {
    /// Prepares a PAdES signature of the PDF at `input` whose value is made elsewhere (a phone, a
    /// smart card on another desk, a service that asks a person first).
    ///
    /// The incremental update (signature dictionary, field, widget, cross-reference section) is
    /// built now, with the ByteRange fixed and room reserved in `/Contents`, and kept in the pending
    /// signature's `PendingSignature.pdf` with the PDF's size and SHA-256; nothing is written and
    /// the PDF is not touched. Hand `PendingSignature.digestToSign` (or
    /// `PendingSignature.dataToSign`) to the signer, then call
    /// ``complete(_:signatureValue:pdfAt:writingTo:options:)`` with its answer.
    ///
    /// The room in `/Contents` is fixed now, as the signature cannot be made again then: it holds
    /// the certificates and the largest value the certificate's key makes and, when
    /// `options.timestampAuthority` is set (it is not contacted now), a signature timestamp token.
    ///
    /// - Parameters:
    ///   - input: the PDF.
    ///   - certificate: the signer's certificate.
    ///   - chain: the certificates that go with it into the signature.
    ///   - scheme: how the key signs: nil (default) takes the key's; `.rsaPSS` for an RSA key that
    ///     signs PSS.
    ///   - options: field, reason, location, contact, time (whole seconds; default now), digest
    ///     (a GOST key needs its Streebog digest), reservation.
    /// - Returns: the pending signature (format `pades`).
    /// - Throws: as ``sign(pdfAt:writingTo:identity:options:)`` for the PDF (encrypted, locked by a
    ///   certification, a field that is already signed, unreadable); `.unsupportedAlgorithm` for a
    ///   digest the key cannot have; `.invalidParameter` for a scheme that does not fit the key.
    public static func prepare(
        pdfAt input: URL,
        certificate: Certificate,
        chain: [Certificate] = [],
        scheme: SignatureScheme? = nil,
        options: PDFSignatureOptions = PDFSignatureOptions()
    ) throws -> PendingSignature {
        let algorithm = try CMSSigner.resolve(options.digestAlgorithm, forKey: certificate.publicKeyAlgorithm)
        var fixed = options
        let signingTime = Date(
            timeIntervalSince1970: (options.signingTime ?? Date()).timeIntervalSince1970.rounded(.down)
        )
        fixed.signingTime = signingTime
        // A visible appearance names the signer and shows the same time as `/M`.
        fixed = fixed.resolvingAppearance(signer: certificate)
        let reservation =
            options.reservedSize
            ?? contentsReservation(certificate: certificate, chain: chain, keySize: certificate.publicKeySize)
            + (options.timestampAuthority.map(timestampReservation(for:)) ?? 0)
        let plan = try SigningPlan.make(input: input.path, reservedSize: reservation, options: fixed)
        let (placed, update) = try PlacedUpdate.fill(plan)
        let payload = PendingSignature.PDFUpdate(
            originalSize: plan.originalSize,
            originalSHA256: [],
            fieldName: plan.fieldName,
            byteRange: placed.byteRange,
            reservedSize: plan.reservedSize,
            contentsOffset: plan.contentsOffset,
            update: update
        )
        let read = try readOriginal(input, for: payload, algorithm: algorithm) { _, _ in }
        return try CMSSigner.preparePDF(
            digest: read.byteRangeDigest,
            certificate: certificate,
            chain: chain,
            digestAlgorithm: algorithm,
            scheme: scheme,
            signingTime: signingTime,
            documentName: input.lastPathComponent,
            pdf: PendingSignature.PDFUpdate(
                originalSize: payload.originalSize,
                originalSHA256: read.sha256,
                fieldName: payload.fieldName,
                byteRange: payload.byteRange,
                reservedSize: payload.reservedSize,
                contentsOffset: payload.contentsOffset,
                update: payload.update
            )
        )
    }

    /// Completes a prepared PAdES signature with the value its key made and writes the signed PDF;
    /// when `input` and `output` are the same file it is replaced atomically (a crash leaves the old
    /// file or the new one).
    ///
    /// Before anything is written, the value must verify with the pending signature's certificate
    /// over its data to sign, the signed attributes must follow from its fields, and the PDF must
    /// be the one it was prepared for (size and SHA-256) with the prepared update hashing to the
    /// prepared digest. With `options` a signature timestamp (B-T) goes into the CMS and B-LT or
    /// B-LTA are added, as for a one-call signature.
    ///
    /// - Parameters:
    ///   - pending: what ``prepare(pdfAt:certificate:chain:scheme:options:)`` made, here or in
    ///     another process.
    ///   - signatureValue: the key's signature of `PendingSignature.dataToSign` (for RSA, ECDSA and
    ///     GOST keys: of its digest, as `openssl pkeyutl -sign` makes it over
    ///     `PendingSignature.digestToSign`).
    ///   - input: the PDF it was prepared for.
    ///   - output: where to write; must not exist unless it is `input` (or
    ///     ``PDFCompletionOptions/replacesExistingOutput``).
    ///   - options: the timestamp authority and long-term level.
    /// - Returns: the field name, ByteRange, sizes and timestamp.
    /// - Throws: `.signatureValueInvalid` when the value does not verify; `.pendingSignatureMismatch`
    ///   when the PDF changed since it was prepared or the pending signature was edited;
    ///   `.invalidParameter` for a pending signature that is not a PAdES one, or a timestamped
    ///   signature larger than the room reserved; `.alreadyExists` for an output that exists;
    ///   `.fileSystem`; the TSA's and the long-term level's errors. Nothing is written when it throws.
    @discardableResult
    public static func complete(
        _ pending: PendingSignature,
        signatureValue: [UInt8],
        pdfAt input: URL,
        writingTo output: URL,
        options: PDFCompletionOptions = PDFCompletionOptions()
    ) async throws -> PDFSigningResult {
        try await completeReading(pending, answer: .signatureValue(signatureValue), input, output, options).result
    }

    /// Completes a prepared PAdES signature with its answer: the value its key made (as
    /// ``complete(_:signatureValue:pdfAt:writingTo:options:)``), or a CMS made elsewhere over the
    /// prepared ByteRange digest (pyHanko's signer, a service), whose signer must be the prepared
    /// certificate and whose messageDigest the prepared digest (`PendingSignatureAnswer`). The CMS
    /// goes into the reserved `/Contents` as it is, with the timestamp and level `options` ask for.
    /// - Parameters:
    ///   - pending: what ``prepare(pdfAt:certificate:chain:scheme:options:)`` made.
    ///   - answer: `.signatureValue(bytes)` or `.cms(bytes)`.
    ///   - input: the PDF it was prepared for.
    ///   - output: where to write (as for ``complete(_:signatureValue:pdfAt:writingTo:options:)``).
    ///   - options: the timestamp authority and long-term level.
    /// - Returns: the field name, ByteRange, sizes and timestamp.
    /// - Throws: as ``complete(_:signatureValue:pdfAt:writingTo:options:)``; for a CMS also
    ///   `.malformedInput` and `.pendingSignatureMismatch` (another signer, document or digest), and
    ///   `.invalidParameter` when it is larger than the room reserved. Nothing is written when it throws.
    @discardableResult
    public static func complete(
        _ pending: PendingSignature,
        with answer: PendingSignatureAnswer,
        pdfAt input: URL,
        writingTo output: URL,
        options: PDFCompletionOptions = PDFCompletionOptions()
    ) async throws -> PDFSigningResult {
        try await completeReading(pending, answer: answer, input, output, options).result
    }

    /// ``complete(_:with:pdfAt:writingTo:options:)``, returning also the original PDF's digest with
    /// the pending signature's algorithm (what the journal records).
    static func completeReading(
        _ pending: PendingSignature,
        answer: PendingSignatureAnswer,
        _ input: URL,
        _ output: URL,
        _ options: PDFCompletionOptions
    ) async throws -> (result: PDFSigningResult, documentDigest: [UInt8]) {
        guard let pdf = pending.pdf else {
            throw CertificateProviderError.invalidParameter(
                "pending signature \(pending.id) (\(pending.format)) is not a PDF signature: complete it as CMS"
            )
        }
        // The answer, and the signed attributes against the pending fields, before any file is opened.
        var cms = try answer.signature(for: pending, attachedContent: nil)
        let inPlace = input.standardizedFileURL.path == output.standardizedFileURL.path
        let replacing = inPlace || options.replacesExistingOutput
        let temporary = try makeTemporary(for: output, replacing: replacing)
        var keep = false
        defer { if !keep { unlink(temporary) } }
        let read: OriginalRead
        var token: TimestampToken?
        do {
            let target = try PDFFile(path: temporary, writable: true)
            read = try readOriginal(input, for: pdf, algorithm: pending.digestAlgorithm) { chunk, offset in
                try target.write(Array(chunk.bindMemory(to: UInt8.self)), at: offset)
            }
            try check(read, of: input, against: pending)
            if let authority = options.timestampAuthority {
                let stamped = try await SignatureTimestamper.addTimestamps(to: cms, authority: authority)
                cms = stamped.signature
                token = stamped.addedTokens.compactMap { $0 }.first
            }
            try checkRoom(cms, pdf, pending)
            try target.write(pdf.update, at: pdf.originalSize)
            try target.write(PDFBytes.hex(cms), at: pdf.byteRange[1] + 1)
            try target.sync()
            if let longTerm = options.longTerm {
                let staged = URL(fileURLWithPath: temporary)
                _ = try await longTerm.upgrade(pdfAt: staged, writingTo: staged)
            }
        } catch is CancellationError {
            throw CertificateProviderError(.cancelled, "completing '\(input.lastPathComponent)' was cancelled")
        }
        if replacing {
            try FileSystem.rename(temporary, output.path)
        } else {
            try FileSystem.link(temporary, output.path)
        }
        keep = replacing
        try FileSystem.syncDirectory(output.deletingLastPathComponent().path)
        let result = PDFSigningResult(
            fieldName: pdf.fieldName,
            byteRange: pdf.byteRange,
            signatureSize: cms.count,
            reservedSize: pdf.reservedSize,
            timestamp: token
        )
        return (result, read.documentDigest)
    }

    /// What one read of the original PDF found.
    struct OriginalRead {
        /// Its size in bytes.
        let size: Int64
        /// Its SHA-256.
        let sha256: [UInt8]
        /// Its digest with the signature's algorithm.
        let documentDigest: [UInt8]
        /// The digest of the signed PDF's ByteRange: the original, then the update but `/Contents`.
        let byteRangeDigest: [UInt8]
    }

    /// Reads the original PDF once, passing each chunk and its offset to `copy`, and hashes it with
    /// the prepared update's covered parts.
    /// - Throws: `.pendingSignatureMismatch` when it is not of the prepared size; `.fileSystem`;
    ///   what `copy` throws.
    private static func readOriginal(
        _ input: URL,
        for pdf: PendingSignature.PDFUpdate,
        algorithm: DigestAlgorithm,
        copy: (UnsafeRawBufferPointer, Int64) throws -> Void
    ) throws -> OriginalRead {
        let source = try PDFFile(path: input.path)
        guard source.size == pdf.originalSize else {
            throw changed(input, "it has \(source.size) bytes, not \(pdf.originalSize)")
        }
        var sha256 = DigestAlgorithm.Hasher(.sha256)
        var document = DigestAlgorithm.Hasher(algorithm)
        var byteRange = DigestAlgorithm.Hasher(algorithm)
        var offset: Int64 = 0
        var copyError: (any Error)?
        try source.forEachChunk(in: 0..<source.size) { chunk in
            sha256.update(chunk)
            document.update(chunk)
            byteRange.update(chunk)
            if copyError == nil {
                do { try copy(chunk, offset) } catch { copyError = error }
            }
            offset += Int64(chunk.count)
        }
        if let copyError { throw copyError }
        let parts = pdf.coveredParts
        byteRange.update(Array(parts.head))
        byteRange.update(Array(parts.tail))
        return OriginalRead(
            size: source.size,
            sha256: sha256.finalize(),
            documentDigest: document.finalize(),
            byteRangeDigest: byteRange.finalize()
        )
    }

    /// - Throws: `.pendingSignatureMismatch` when the PDF is not the prepared one, or the prepared
    ///   update does not hash to the signed digest (an edited pending signature).
    private static func check(_ read: OriginalRead, of input: URL, against pending: PendingSignature) throws {
        guard read.sha256 == pending.pdf?.originalSHA256 else {
            throw changed(input, "its SHA-256 differs")
        }
        guard read.byteRangeDigest == pending.contentDigest else {
            throw CertificateProviderError(
                .pendingSignatureMismatch,
                "the pending signature \(pending.id) was altered: its PDF update does not hash to the digest it "
                    + "signs; nothing was written; prepare '\(input.lastPathComponent)' again"
            )
        }
    }

    /// - Throws: `.invalidParameter` when the signature (with its timestamp) outgrew the room
    ///   prepared for it.
    private static func checkRoom(_ cms: [UInt8], _ pdf: PendingSignature.PDFUpdate, _ pending: PendingSignature) throws
    {
        guard cms.count > pdf.reservedSize else { return }
        throw CertificateProviderError.invalidParameter(
            "the signature of pending signature \(pending.id) takes \(cms.count) bytes, more than the "
                + "\(pdf.reservedSize) reserved in the PDF when it was prepared; nothing was written; prepare it "
                + "again with the timestamp authority named (or a larger reserved size)"
        )
    }

    private static func changed(_ input: URL, _ how: String) -> CertificateProviderError {
        CertificateProviderError(
            .pendingSignatureMismatch,
            "'\(input.path)' changed since its signature was prepared (\(how)): nothing was written; prepare it again"
        )
    }
}
