public import CertificateProviders
internal import Durability
public import Foundation
import Glibc
import Signing

extension CertificateProviderError.Code {
    /// The PDF's author forbade changes (a DocMDP certification signature with permission level 1):
    /// any further signature would invalidate it. Ask the author for an unlocked copy.
    public static let pdfChangesForbidden = Self(PDFSigningCodeName.pdfChangesForbidden)
    /// A certification signature was asked for a PDF that is signed already: certification must be
    /// the document's first signature. Sign it without certification, or certify the unsigned original.
    public static let pdfCertificationNotFirst = Self(PDFSigningCodeName.pdfCertificationNotFirst)
}

/// The names of the codes this module adds: each case's name is the code's raw value.
enum PDFSigningCodeName: String {
    case pdfChangesForbidden
    case pdfCertificationNotFirst
}

/// What to put in a PAdES signature besides the CMS.
public struct PDFSignatureOptions: Sendable {
    /// The signature field to fill or create. Default nil: a new invisible field named
    /// `Signature1` (`Signature2`, … when taken). An existing empty signature field of that name is
    /// filled; a signed one is refused with `.alreadyExists`.
    public var fieldName: String?
    /// `/Reason`. Default nil (left out).
    public var reason: String?
    /// `/Location`. Default nil (left out).
    public var location: String?
    /// `/ContactInfo`. Default nil (left out).
    public var contactInfo: String?
    /// `/M`, the claimed signing time (PAdES puts it here, not in the CMS). Default nil: now.
    public var signingTime: Date?
    /// The digest over the ByteRange and in the CMS. Default SHA-256.
    public var digestAlgorithm: DigestAlgorithm
    /// The TSA that timestamps the signature (PAdES B-T: an RFC 3161 token over the signature
    /// value as the unsigned attribute id-aa-signatureTimeStampToken). Default nil: B-B.
    public var timestampAuthority: TimestampAuthorityClient?
    /// Bytes reserved in `/Contents` for the CMS. Default nil: ``PDFSigner/contentsReservation(for:)``
    /// plus, with a TSA, ``PDFSigner/timestampReservation(for:)``. Either way a signature that does
    /// not fit makes the reservation grow to fit it and the signature be made again (a second key
    /// operation), so a small value costs time, not failure.
    public var reservedSize: Int?
    /// Whether an existing output file (other than the input) is replaced, atomically. Default
    /// false: an existing output is refused with `.alreadyExists`.
    public var replacesExistingOutput = false
    /// A visible appearance for the signature's widget. Default nil: an invisible signature.
    public var appearance: PDFSignatureAppearance?
    /// Makes the signature a certification signature (a DocMDP transform in its `/Reference`, the
    /// catalog's `/Perms /DocMDP` naming it) that allows later revisions what the permission says.
    /// Only the document's first signature can certify it. Default nil: an approval signature.
    public var certification: PDFDocMDPPermission?

    /// Creates options; every parameter defaults to the value documented on its property.
    public init(
        fieldName: String? = nil,
        reason: String? = nil,
        location: String? = nil,
        contactInfo: String? = nil,
        signingTime: Date? = nil,
        digestAlgorithm: DigestAlgorithm = .sha256,
        timestampAuthority: TimestampAuthorityClient? = nil,
        reservedSize: Int? = nil
    ) {
        self.fieldName = fieldName
        self.reason = reason
        self.location = location
        self.contactInfo = contactInfo
        self.signingTime = signingTime
        self.digestAlgorithm = digestAlgorithm
        self.timestampAuthority = timestampAuthority
        self.reservedSize = reservedSize
    }
}

/// What ``PDFSigner`` wrote.
public struct PDFSigningResult: Sendable {
    /// The signature field's name.
    public let fieldName: String
    /// The signed byte ranges, `[0, a, b, c]`: bytes `0..<a` and `b..<b+c`.
    public let byteRange: [Int64]
    /// The CMS signature's size in bytes.
    public let signatureSize: Int
    /// The bytes reserved for it in `/Contents` (the rest is zero padding).
    public let reservedSize: Int
    /// The signature timestamp (B-T), when a TSA was asked.
    public let timestamp: TimestampToken?
}

/// Signs PDFs in place of a detached `.p7s`: PAdES baseline B-B or, with a TSA, B-T (ETSI EN 319 142-1), a
/// `/SubFilter /ETSI.CAdES.detached` signature appended as an incremental update, so earlier
/// signatures stay valid (countersigning is signing a signed PDF again).
///
/// qpdf reads the PDF (every cross-reference variant); this module writes the update itself: the
/// signature dictionary, an invisible widget field in `/AcroForm` and on the first page, a
/// cross-reference section of the kind the file already uses. The ByteRange is hashed by streaming
/// the file (memory stays flat in the file size) and signed by any `SigningKey` — local, PKCS#11,
/// remote — through ``Signing``'s CMS builder, without a signingTime attribute and with ESS
/// signing-certificate-v2.
///
/// ```swift
/// let result = try await PDFSigner.sign(pdfAt: input, writingTo: output, identity: identity,
///                                       options: PDFSignatureOptions(reason: "Approved"))
/// ```
public enum PDFSigner {
    /// Signs `input` and writes the signed PDF to `output`; when both are the same file it is
    /// replaced atomically (a crash leaves the old file or the new one).
    ///
    /// - Parameters:
    ///   - input: the PDF.
    ///   - output: where to write; must not exist unless it is `input`.
    ///   - identity: the signer.
    ///   - options: field, reason, location, time, digest, timestamp authority (B-T).
    /// - Returns: the field name, ByteRange, sizes and timestamp.
    /// - Throws: `.unsupportedOperation` for an encrypted PDF; ``CertificateProviderError/Code/pdfChangesForbidden``
    ///   when a certification signature forbids changes;
    ///   ``CertificateProviderError/Code/pdfCertificationNotFirst`` when `options.certification` is
    ///   set and the PDF is signed already; `.alreadyExists` for an output that exists
    ///   or a field that is already signed; `.malformedInput` for a file qpdf cannot read;
    ///   `.fileSystem`; whatever the key throws; the TSA client's errors (`.timestampInvalid`,
    ///   `.serverRejected`, `.network`, `.timeout`). Nothing is written when it throws.
    @discardableResult
    public static func sign(
        pdfAt input: URL,
        writingTo output: URL,
        identity: SigningIdentity,
        options: PDFSignatureOptions = PDFSignatureOptions()
    ) async throws -> PDFSigningResult {
        let options = options.resolvingAppearance(signer: identity.certificate)
        return try await sign(input, output, reservation: reservation(identity, options), options: options) {
            digest,
            _ in
            try await SignedDataSigner.sign(
                .pades(digest: digest, digestAlgorithm: options.digestAlgorithm),
                identity: identity
            )
        }
    }

    /// Signs `input` with a provider whose server builds the signature (`DocumentSigning`, e.g.
    /// CryptoPro DSS) through its hash mode: the ByteRange digest goes to the server, and the CMS
    /// it returns is checked — it verifies over exactly the signed bytes, has one signer, that
    /// signer is `identity`'s certificate, and it is a detached CAdES-BES with the digest asked
    /// for — before it is embedded (as the signing coordinator checks `DocumentSigning` results).
    ///
    /// The server decides the signed attributes: a server that adds a `signingTime` attribute
    /// (CryptoPro DSS does) makes a signature that validators accept but that is, strictly, not
    /// PAdES *baseline* (EN 319 142-1 wants the time only in `/M`).
    ///
    /// - Parameters:
    ///   - input: the PDF.
    ///   - output: where to write; must not exist unless it is `input`.
    ///   - identity: the provider's identity (its certificate and chain size the reservation and
    ///     name the expected signer).
    ///   - server: the provider that signs the digest.
    ///   - options: field, reason, location, time, digest, timestamp authority.
    /// - Returns: the field name, ByteRange, sizes and timestamp.
    /// - Throws: as ``sign(pdfAt:writingTo:identity:options:)``; `.serverRejected` when the server's
    ///   signature does not verify over the signed bytes; `.serverSignatureMismatch` when it is not
    ///   the signature asked for; nothing is written then.
    @discardableResult
    public static func sign(
        pdfAt input: URL,
        writingTo output: URL,
        identity: SigningIdentity,
        server: any DocumentSigning,
        options: PDFSignatureOptions = PDFSignatureOptions()
    ) async throws -> PDFSigningResult {
        let options = options.resolvingAppearance(signer: identity.certificate)
        let request = DocumentSigningRequest(
            payload: .digest([], options.digestAlgorithm),
            format: .cadesBES,
            isDetached: true,
            digestAlgorithm: options.digestAlgorithm
        )
        return try await sign(input, output, reservation: reservation(identity, options), options: options) {
            digest,
            coveredFile in
            var digestRequest = request
            digestRequest.payload = .digest(digest, options.digestAlgorithm)
            let cms = try await server.signDocument(digestRequest)
            try ServerSignatureCheck.check(
                cms,
                request: digestRequest,
                expectedSigner: identity.certificate,
                coveredBytes: coveredFile,
                document: input.lastPathComponent
            )
            return cms
        }
    }

    /// The first reservation for `identity`'s signature with `options` (their own, or estimated).
    private static func reservation(_ identity: SigningIdentity, _ options: PDFSignatureOptions) -> Int {
        options.reservedSize
            ?? contentsReservation(for: identity) + (options.timestampAuthority.map(timestampReservation(for:)) ?? 0)
    }

    /// The shared path: `makeCMS` gets the ByteRange digest and where the signed bytes are, and
    /// returns what goes in `/Contents` (a CMS signature, or a timestamp token for `.documentTimestamp`).
    static func sign(
        _ input: URL,
        _ output: URL,
        reservation: Int,
        options: PDFSignatureOptions,
        kind: PDFSignatureKind = .signature,
        makeCMS: ([UInt8], CoveredBytes) async throws -> [UInt8]
    ) async throws -> PDFSigningResult {
        let inPlace = input.standardizedFileURL.path == output.standardizedFileURL.path
        let replacing = inPlace || options.replacesExistingOutput
        let directory = output.deletingLastPathComponent().path
        let temporary = try makeTemporary(for: output, replacing: replacing)
        var keep = false
        defer { if !keep { unlink(temporary) } }

        var reserved = reservation
        var result: PDFSigningResult?
        do {
            // A signature (with its timestamp token) larger than its reservation makes the
            // reservation grow to fit and the signature is made again (the ByteRange moves with
            // it): at most three rounds.
            var copied = false
            for _ in 0..<3 where result == nil {
                let plan = try SigningPlan.make(input: input.path, reservedSize: reserved, options: options, kind: kind)
                let target = try PDFFile(path: temporary, writable: true)
                if !copied {
                    try copyOriginal(input, to: target, expectedSize: plan.originalSize)
                    copied = true
                }
                let placed = try PlacedUpdate.write(plan, to: target)
                let digest = try placed.digest(of: target, algorithm: options.digestAlgorithm)
                try Task.checkCancellation()

                var cms = try await makeCMS(digest, CoveredBytes(path: temporary, ranges: placed.coveredRanges))
                var token: TimestampToken?
                if let authority = options.timestampAuthority {
                    let stamped = try await SignatureTimestamper.addTimestamps(to: cms, authority: authority)
                    cms = stamped.signature
                    token = stamped.addedTokens.compactMap { $0 }.first
                }
                guard cms.count <= plan.reservedSize else {
                    reserved = cms.count + 2048
                    continue
                }
                try target.write(PDFBytes.hex(cms), at: placed.contentsStart + 1)
                try target.sync()
                result = PDFSigningResult(
                    fieldName: plan.fieldName,
                    byteRange: placed.byteRange,
                    signatureSize: cms.count,
                    reservedSize: plan.reservedSize,
                    timestamp: token
                )
            }
        } catch is CancellationError {
            throw CertificateProviderError(.cancelled, "signing '\(input.lastPathComponent)' was cancelled")
        }
        guard let result else {
            throw CertificateProviderError(
                .cryptoFailure,
                "the signature kept outgrowing the room reserved for it in the PDF; nothing was written"
            )
        }
        if replacing {
            try FileSystem.rename(temporary, output.path)
        } else {
            try FileSystem.link(temporary, output.path)
        }
        keep = replacing
        try FileSystem.syncDirectory(directory)
        return result
    }

    /// Creates the hidden temporary file the signed PDF is written to, beside `output`.
    /// - Throws: `.alreadyExists` when `output` exists and is not to be replaced; `.fileSystem`.
    static func makeTemporary(for output: URL, replacing: Bool) throws -> String {
        if !replacing, FileSystem.exists(output.path) {
            throw CertificateProviderError(
                .alreadyExists,
                "'\(output.path)' already exists; choose another output or sign in place"
            )
        }
        let directory = output.deletingLastPathComponent().path
        let temporary = (directory as NSString).appendingPathComponent(
            ".\(output.lastPathComponent).\(UUID().uuidString).partial"
        )
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystem.failure("creating", temporary) }
        close(descriptor)
        return temporary
    }

    /// Copies the original PDF into the temporary file.
    /// - Throws: `.fileSystem` when the input changed since the plan was made, or cannot be copied.
    static func copyOriginal(_ input: URL, to target: borrowing PDFFile, expectedSize: Int64) throws {
        let source = try PDFFile(path: input.path)
        guard source.size == expectedSize else {
            throw CertificateProviderError(.fileSystem, "'\(input.path)' changed while it was being signed; try again")
        }
        var written: Int64 = 0
        var copyError: (any Error)?
        try source.forEachChunk(in: 0..<source.size) { chunk in
            guard copyError == nil else { return }
            do { try target.write(Array(chunk.bindMemory(to: UInt8.self)), at: written) } catch {
                copyError = error
            }
            written += Int64(chunk.count)
        }
        if let copyError { throw copyError }
    }

    /// The first estimate of the bytes a timestamp token takes in `/Contents`: the token's
    /// structure and signature, its TSA certificate and chain (estimated from the trust anchors
    /// the TSA's chain must reach: the chain below them is usually of their size). When the real
    /// token is larger, ``sign(pdfAt:writingTo:identity:options:)`` reserves again to fit it.
    public static func timestampReservation(for authority: TimestampAuthorityClient) -> Int {
        let anchors = authority.configuration.trustAnchors.map(\.derRepresentation.count).max() ?? 2048
        return 3072 + 3 * anchors
    }

    /// The bytes reserved in `/Contents` for `identity`'s signature: its certificates (the signer's
    /// twice, as certificate and as issuer and serial), the largest signature its key can make, and
    /// room for the CMS structure and signed attributes. Never a fixed guess.
    public static func contentsReservation(for identity: SigningIdentity) -> Int {
        contentsReservation(certificate: identity.certificate, chain: identity.chain, keySize: identity.key.keySize)
    }

    /// ``contentsReservation(for:)`` for a signer known by its certificates and key size alone.
    static func contentsReservation(certificate: Certificate, chain: [Certificate], keySize: Int) -> Int {
        let certificates =
            certificate.derRepresentation.count * 2 + chain.reduce(0) { $0 + $1.derRepresentation.count }
        let signature = max(512, keySize / 4 + 16)
        return certificates + signature + 2048
    }
}
