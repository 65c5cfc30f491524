import CertificateProviders
import Foundation

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

    static let signaturePlaceholder = "/CertSignPlaceholderSignature"
    static let fieldPlaceholder = "/CertSignPlaceholderField"

    static func make(
        input: String,
        reservedSize reserved: Int,
        options: PDFSignatureOptions,
        kind: PDFSignatureKind = .signature
    ) throws -> SigningPlan {
        let file = try PDFFile(path: input)
        let document = try QPDFDocument(path: input)
        let root = document.root
        guard document.isDictionary(root), document.isIndirect(root) else {
            throw CertificateProviderError(.malformedInput, "'\(input)' has no document catalog")
        }
        // DocMDP P=1 forbids changes, but validation data (a document timestamp) is not one.
        if kind == .signature { try refuseIfLocked(document, path: input) }
        guard let size = document.key(document.trailer, "/Size").flatMap(document.integer), size > 0 else {
            throw CertificateProviderError(.malformedInput, "'\(input)' has no /Size in its trailer")
        }
        var objects = SigningPlanObjects(document: document, input: input, nextNumber: Int(size))
        let certification = kind == .signature ? options.certification : nil
        if let certification { try objects.certify(certification) }
        let field = try objects.chooseField(options.fieldName)
        let appearance = try objects.drawAppearance(options, field: field)
        try objects.addField(field, appearance: appearance)
        objects.update.objects += appearance?.objects ?? []

        // The signature dictionary, with room for the ByteRange numbers and the CMS.
        let head =
            kind == .documentTimestamp
            ? "<< /Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161 /ByteRange ["
            : signatureDictionaryHead(options)
        let placeholderRange = "0 0 0 0" + String(repeating: " ", count: byteRangeWidth - 7)
        let signatureBody =
            Array((head + placeholderRange + "] /Contents ").utf8) + [0x3C]
            + [UInt8](repeating: 0x30, count: reserved * 2) + Array("> >>".utf8)
        objects.update.objects.append(.init(number: objects.signatureNumber, generation: 0, body: signatureBody))

        let serialized = try objects.update.serialize(
            after: file,
            document: document,
            size: max(Int(size), objects.nextNumber)
        )
        // The signature object was appended above, so the update has its offset.
        let signatureStart = serialized.objectOffsets[objects.signatureNumber]!
        let headerLength = "\(objects.signatureNumber) 0 obj\n".utf8.count
        return SigningPlan(
            originalSize: file.size,
            update: serialized.bytes,
            byteRangeOffset: signatureStart + headerLength + head.utf8.count,
            contentsOffset: signatureStart + headerLength + head.utf8.count + byteRangeWidth
                + "] /Contents ".utf8.count,
            reservedSize: reserved,
            fieldName: field.name
        )
    }

    /// The signature dictionary up to the ByteRange numbers.
    private static func signatureDictionaryHead(_ options: PDFSignatureOptions) -> String {
        var head =
            "<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /M "
            + "(\(PDFBytes.date(options.signingTime ?? Date())))"
        if let reason = options.reason { head += " /Reason \(PDFBytes.textString(reason))" }
        if let location = options.location { head += " /Location \(PDFBytes.textString(location))" }
        if let contact = options.contactInfo { head += " /ContactInfo \(PDFBytes.textString(contact))" }
        if let certification = options.certification { head += " " + SigningPlanObjects.docMDPReference(certification) }
        return head + " /ByteRange ["
    }

    /// The trailer's entries: /Root, /Info, /ID (first part kept, second new).
    static func trailerEntries(_ document: QPDFDocument) -> String {
        var trailer = "/Root \(document.unparse(document.root))"
        if let info = document.key(document.trailer, "/Info") { trailer += " /Info \(document.unparse(info))" }
        let idItems = document.key(document.trailer, "/ID").map(document.items) ?? []
        let permanentID = idItems.first.flatMap(document.bytes) ?? randomBytes(16)
        trailer +=
            " /ID [<\(String(decoding: PDFBytes.hex(permanentID), as: UTF8.self))> "
            + "<\(String(decoding: PDFBytes.hex(randomBytes(16)), as: UTF8.self))>]"
        return trailer
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
