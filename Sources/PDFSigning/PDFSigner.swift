public import CertificateProviders
public import Foundation
import Glibc
import Signing

extension CertificateProviderError.Code {
    /// The PDF's author forbade changes (a DocMDP certification signature with permission level 1):
    /// any further signature would invalidate it. Ask the author for an unlocked copy.
    public static let pdfChangesForbidden = Self("pdfChangesForbidden")
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
    ///   when a certification signature forbids changes; `.alreadyExists` for an output that exists
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
        try await sign(input, output, identity: identity, options: options) { digest, _ in
            try await CMSSigner.signPAdES(digest: digest, identity: identity, digestAlgorithm: options.digestAlgorithm)
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
        let request = DocumentSigningRequest(
            payload: .digest([], options.digestAlgorithm),
            format: .cadesBES,
            isDetached: true,
            digestAlgorithm: options.digestAlgorithm
        )
        return try await sign(input, output, identity: identity, options: options) { digest, coveredFile in
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

    /// The shared path: `makeCMS` gets the ByteRange digest and where the signed bytes are.
    private static func sign(
        _ input: URL,
        _ output: URL,
        identity: SigningIdentity,
        options: PDFSignatureOptions,
        makeCMS: ([UInt8], CoveredBytes) async throws -> [UInt8]
    ) async throws -> PDFSigningResult {
        let inPlace = input.standardizedFileURL.path == output.standardizedFileURL.path
        let replacing = inPlace || options.replacesExistingOutput
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
        var keep = false
        defer { if !keep { unlink(temporary) } }

        var reserved =
            options.reservedSize
            ?? contentsReservation(for: identity) + (options.timestampAuthority.map(timestampReservation(for:)) ?? 0)
        var result: PDFSigningResult?
        do {
            // A signature (with its timestamp token) larger than its reservation makes the
            // reservation grow to fit and the signature is made again (the ByteRange moves with
            // it): at most three rounds.
            var copied = false
            for _ in 0..<3 where result == nil {
                let plan = try SigningPlan.make(
                    input: input.path,
                    reservedSize: reserved,
                    options: options
                )
                let target = try PDFFile(path: temporary, writable: true)
                if !copied {
                    let source = try PDFFile(path: input.path)
                    guard source.size == plan.originalSize else {
                        throw CertificateProviderError(
                            .fileSystem,
                            "'\(input.path)' changed while it was being signed; try again"
                        )
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
                    copied = true
                }
                try target.write(plan.update, at: plan.originalSize)
                let contentsStart = plan.originalSize + Int64(plan.contentsOffset)
                let contentsEnd = contentsStart + Int64(plan.reservedSize * 2 + 2)
                let total = plan.originalSize + Int64(plan.update.count)
                try target.truncate(to: total)
                let byteRange = [0, contentsStart, contentsEnd, total - contentsEnd]
                let rangeText = Array("0 \(contentsStart) \(contentsEnd) \(total - contentsEnd)".utf8)
                guard rangeText.count <= SigningPlan.byteRangeWidth else {
                    throw CertificateProviderError(.invalidParameter, "the PDF is too large to sign")
                }
                try target.write(
                    rangeText + [UInt8](repeating: 0x20, count: SigningPlan.byteRangeWidth - rangeText.count),
                    at: plan.originalSize + Int64(plan.byteRangeOffset)
                )

                var hasher = DigestAlgorithm.Hasher(options.digestAlgorithm)
                try target.forEachChunk(in: 0..<contentsStart) { hasher.update($0) }
                try target.forEachChunk(in: contentsEnd..<total) { hasher.update($0) }
                let digest = hasher.finalize()
                try Task.checkCancellation()

                var cms = try await makeCMS(
                    digest,
                    CoveredBytes(path: temporary, ranges: [0..<contentsStart, contentsEnd..<total])
                )
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
                try target.write(PDFBytes.hex(cms), at: contentsStart + 1)
                try target.sync()
                result = PDFSigningResult(
                    fieldName: plan.fieldName,
                    byteRange: byteRange,
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
        let certificates =
            identity.certificate.derRepresentation.count * 2
            + identity.chain.reduce(0) { $0 + $1.derRepresentation.count }
        let signature = max(512, identity.key.keySize / 4 + 16)
        return certificates + signature + 2048
    }
}

/// The prepared update: everything but the ByteRange numbers and the CMS.
struct SigningPlan: Sendable {
    /// Characters reserved for the ByteRange numbers.
    static let byteRangeWidth = 80

    let originalSize: Int64
    let update: [UInt8]
    /// Offsets inside `update`: the ByteRange numbers and the `<` opening `/Contents`.
    let byteRangeOffset: Int
    let contentsOffset: Int
    let reservedSize: Int
    let fieldName: String

    private static let signaturePlaceholder = "/CertSignPlaceholderSignature"
    private static let fieldPlaceholder = "/CertSignPlaceholderField"

    static func make(input: String, reservedSize reserved: Int, options: PDFSignatureOptions) throws -> SigningPlan {
        let file = try PDFFile(path: input)
        let document = try QPDFDocument(path: input)
        let last = try file.lastCrossReference()
        let root = document.root
        guard document.isDictionary(root), document.isIndirect(root) else {
            throw CertificateProviderError(.malformedInput, "'\(input)' has no document catalog")
        }
        try refuseIfLocked(document, path: input)
        guard let size = document.key(document.trailer, "/Size").flatMap(document.integer), size > 0 else {
            throw CertificateProviderError(.malformedInput, "'\(input)' has no /Size in its trailer")
        }
        var nextNumber = Int(size)
        let signatureNumber = nextNumber
        nextNumber += 1
        var update = IncrementalUpdate()

        // The field: fill an existing empty one, or add a new widget on the first page.
        let fields = PDFFields(document: document)
        let existingNames = Set(fields.all.map(\.name))
        let fieldName: String
        var existingField: PDFFields.Field?
        if let wanted = options.fieldName {
            fieldName = wanted
            if let field = fields.all.first(where: { $0.name == wanted }) {
                guard field.isSignature, document.key(field.handle, "/V") == nil, document.isIndirect(field.handle)
                else {
                    throw CertificateProviderError(
                        .alreadyExists,
                        "the PDF already has a field '\(wanted)' that is signed or not a signature field; choose "
                            + "another --field"
                    )
                }
                existingField = field
            }
        } else {
            fieldName = (1...).lazy.map { "Signature\($0)" }.first { !existingNames.contains($0) }!
        }

        var acroForm = document.key(root, "/AcroForm")
        let acroFormIndirect = acroForm.map(document.isIndirect) ?? false
        if acroForm == nil { acroForm = document.newDictionary() }
        let form = acroForm!
        let fieldNumber: Int
        if let existingField {
            document.set(existingField.handle, "/V", document.newName(signaturePlaceholder))
            let id = document.objectID(existingField.handle)
            fieldNumber = id.number
            update.objects.append(
                .init(
                    number: id.number,
                    generation: id.generation,
                    body: Array(document.unparseResolved(existingField.handle).utf8)
                )
            )
        } else {
            fieldNumber = nextNumber
            nextNumber += 1
            guard document.pageCount > 0 else {
                throw CertificateProviderError(.malformedInput, "'\(input)' has no pages")
            }
            let page = document.page(0)
            let annotations = document.newArray()
            for item in document.items(document.key(page, "/Annots") ?? document.newArray()) {
                document.append(annotations, item)
            }
            document.append(annotations, document.newName(fieldPlaceholder))
            document.set(page, "/Annots", annotations)
            let pageID = document.objectID(page)
            update.objects.append(
                .init(
                    number: pageID.number,
                    generation: pageID.generation,
                    body: Array(document.unparseResolved(page).utf8)
                )
            )
            let widget =
                "<< /Type /Annot /Subtype /Widget /FT /Sig /T \(PDFBytes.textString(fieldName)) /V "
                + "\(signatureNumber) 0 R /F 132 /Rect [0 0 0 0] /P \(document.unparse(page)) >>"
            update.objects.append(.init(number: fieldNumber, generation: 0, body: Array(widget.utf8)))
            let fieldArray = document.newArray()
            for item in document.items(document.key(form, "/Fields") ?? document.newArray()) {
                document.append(fieldArray, item)
            }
            document.append(fieldArray, document.newName(fieldPlaceholder))
            document.set(form, "/Fields", fieldArray)
        }
        document.set(form, "/SigFlags", document.newInteger(3))
        if acroFormIndirect {
            let id = document.objectID(form)
            update.objects.append(
                .init(number: id.number, generation: id.generation, body: Array(document.unparseResolved(form).utf8))
            )
        } else {
            document.set(root, "/AcroForm", form)
            let id = document.objectID(root)
            update.objects.append(
                .init(number: id.number, generation: id.generation, body: Array(document.unparseResolved(root).utf8))
            )
        }
        update.objects = update.objects.map { object in
            let text = String(decoding: object.body, as: UTF8.self)
                .replacingOccurrences(of: signaturePlaceholder, with: "\(signatureNumber) 0 R")
                .replacingOccurrences(of: fieldPlaceholder, with: "\(fieldNumber) 0 R")
            return .init(number: object.number, generation: object.generation, body: Array(text.utf8))
        }

        // The signature dictionary, with room for the ByteRange numbers and the CMS.
        var head =
            "<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /M "
            + "(\(PDFBytes.date(options.signingTime ?? Date())))"
        if let reason = options.reason { head += " /Reason \(PDFBytes.textString(reason))" }
        if let location = options.location { head += " /Location \(PDFBytes.textString(location))" }
        if let contact = options.contactInfo { head += " /ContactInfo \(PDFBytes.textString(contact))" }
        head += " /ByteRange ["
        let placeholderRange = "0 0 0 0" + String(repeating: " ", count: byteRangeWidth - 7)
        let signatureBody =
            Array((head + placeholderRange + "] /Contents ").utf8) + [0x3C]
            + [UInt8](repeating: 0x30, count: reserved * 2) + Array("> >>".utf8)
        update.objects.append(.init(number: signatureNumber, generation: 0, body: signatureBody))

        // Trailer: /Root, /Info, /ID (first part kept, second new).
        var trailer = "/Root \(document.unparse(root))"
        if let info = document.key(document.trailer, "/Info") { trailer += " /Info \(document.unparse(info))" }
        let idItems = document.key(document.trailer, "/ID").map(document.items) ?? []
        let permanentID = idItems.first.flatMap(document.bytes) ?? randomBytes(16)
        trailer +=
            " /ID [<\(String(decoding: PDFBytes.hex(permanentID), as: UTF8.self))> "
            + "<\(String(decoding: PDFBytes.hex(randomBytes(16)), as: UTF8.self))>]"

        let lastByte = try file.read(at: file.size - 1, count: 1).first
        let serialized = update.serialize(
            originalSize: file.size,
            needsLeadingNewline: lastByte != 0x0A && lastByte != 0x0D,
            previous: last.offset,
            kind: last.kind,
            size: max(Int(size), nextNumber),
            trailerEntries: trailer
        )
        let signatureStart = serialized.objectOffsets[signatureNumber]!
        let headerLength = "\(signatureNumber) 0 obj\n".utf8.count
        return SigningPlan(
            originalSize: file.size,
            update: serialized.bytes,
            byteRangeOffset: signatureStart + headerLength + head.utf8.count,
            contentsOffset: signatureStart + headerLength + head.utf8.count + byteRangeWidth
                + "] /Contents ".utf8.count,
            reservedSize: reserved,
            fieldName: fieldName
        )
    }

    /// Throws when a certification signature (DocMDP, permission 1) forbids any change.
    private static func refuseIfLocked(_ document: QPDFDocument, path: String) throws {
        guard let signature = document.key(document.root, "/Perms").flatMap({ document.key($0, "/DocMDP") }) else {
            return
        }
        for reference in document.items(document.key(signature, "/Reference") ?? document.newArray()) {
            guard let method = document.key(reference, "/TransformMethod"), document.isName(method, "/DocMDP") else {
                continue
            }
            let permission =
                document.key(reference, "/TransformParams").flatMap { document.key($0, "/P") }.flatMap(document.integer)
                ?? 2
            if permission == 1 {
                throw CertificateProviderError(
                    .pdfChangesForbidden,
                    "'\(path)' is certified with 'no changes allowed' (DocMDP P=1): another signature would "
                        + "invalidate the certification"
                )
            }
        }
    }

    private static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}

/// The form fields of a document, terminal ones with their full names (`parent.child`).
struct PDFFields {
    struct Field {
        let name: String
        let handle: UInt32
        let isSignature: Bool
    }

    let all: [Field]

    init(document: QPDFDocument) {
        var found: [Field] = []
        func walk(_ handle: UInt32, prefix: String, inheritedType: Bool, depth: Int) {
            guard depth < 32, document.isDictionary(handle) else { return }
            let partial = document.key(handle, "/T").flatMap(document.text)
            let name = [prefix, partial ?? ""].filter { !$0.isEmpty }.joined(separator: ".")
            let type = document.key(handle, "/FT")
            let isSignature = type.map { document.isName($0, "/Sig") } ?? inheritedType
            let kids = document.key(handle, "/Kids").map(document.items) ?? []
            let namedKids = kids.filter { document.key($0, "/T") != nil }
            if namedKids.isEmpty {
                if partial != nil || !prefix.isEmpty {
                    found.append(Field(name: name, handle: handle, isSignature: isSignature))
                }
            } else {
                for kid in namedKids { walk(kid, prefix: name, inheritedType: isSignature, depth: depth + 1) }
            }
        }
        if let form = document.key(document.root, "/AcroForm"), let fields = document.key(form, "/Fields") {
            for field in document.items(fields) { walk(field, prefix: "", inheritedType: false, depth: 0) }
        }
        all = found
    }
}
