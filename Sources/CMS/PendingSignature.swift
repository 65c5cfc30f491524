public import CertificateProviders
public import Foundation

/// A CMS / CAdES signature, or a PAdES one in a PDF, prepared here and waiting for its signature
/// value, which is made elsewhere: a phone, a smart card on another desk, a colleague's HSM, a
/// service that asks a person first.
///
/// ``CMSSigner/prepare(content:certificate:chain:format:detached:digestAlgorithm:scheme:signingTime:documentName:)``
/// builds the signed attributes once (content type, signing time, message digest and, for CAdES,
/// ESS signing-certificate-v2) and fixes them here: ``dataToSign`` is their DER, what the key signs,
/// and ``digestToSign`` its digest with ``digestAlgorithm``, for keys that sign a precomputed digest
/// (`openssl pkeyutl -sign`, PKCS#11 `CKM_ECDSA`, a CSC `signHash`). ``CMSSigner/complete(_:signatureValue:attachedContent:)``
/// finishes it, in this process or another, after a restart. A PAdES one (PDFSigning's
/// `PDFSigner.prepare(pdfAt:certificate:chain:scheme:options:)`) also carries the PDF's incremental
/// update in ``pdf``.
///
/// It is `Codable` (``jsonData()`` and ``init(jsonData:)``), so it can be kept anywhere; its JSON
/// carries a ``version`` and keeps its field names across releases. It holds no secret: only the
/// document's digest, the certificates and the signed attributes. Two are equal when every field is
/// (certificates by their DER).
public struct PendingSignature: Sendable, Equatable {
    /// The newest JSON layout this release writes and reads: 1 for CMS / CAdES, 2 adds ``pdf``.
    public static let currentVersion = 2

    /// The layout of the JSON it was read from; for one made here the oldest layout that holds it
    /// (1 without ``pdf``, so that earlier releases still read it, 2 with it).
    public let version: Int
    /// A random identifier (a UUID), for tracking it in a queue or a journal.
    public let id: String
    /// When it was prepared.
    public let created: Date
    /// The document's name, for people (not checked).
    public let documentName: String?
    /// The document's size in bytes, when it was read here (nil when prepared from a digest).
    public let documentSize: Int64?
    /// `.cadesBES` or `.cms`; `pades` for a signature in a PDF (with ``pdf``).
    public let format: SignatureFormat
    /// Whether the content stays out of the signature; an attached one takes the content again on
    /// completion.
    public let detached: Bool
    /// The digest of the content and of the signature.
    public let digestAlgorithm: DigestAlgorithm
    /// The scheme the value must be made with (RSA PKCS#1 v1.5 or PSS, ECDSA, GOST).
    public let scheme: SignatureScheme
    /// The content's digest with ``digestAlgorithm`` (the messageDigest attribute).
    public let contentDigest: [UInt8]
    /// The signing-time attribute; for PAdES the claimed time in the PDF's `/M` (the CMS has no
    /// signing-time attribute there).
    public let signingTime: Date
    /// The signer's certificate: the value must verify with its key.
    public let certificate: Certificate
    /// The certificates that go into the signature with it (issuers first to last).
    public let chain: [Certificate]
    /// The DER of the signed attributes: what the key signs.
    public let dataToSign: [UInt8]
    /// The PDF's prepared incremental update, for a PAdES signature; nil for CMS / CAdES.
    public let pdf: PDFUpdate?

    /// ``dataToSign``'s digest with ``digestAlgorithm``: what a key that signs precomputed digests
    /// signs.
    public var digestToSign: [UInt8] { digestAlgorithm.hash(dataToSign) }

    package init(
        id: String = UUID().uuidString.lowercased(),
        created: Date = Date(),
        documentName: String?,
        documentSize: Int64?,
        format: SignatureFormat,
        detached: Bool,
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme,
        contentDigest: [UInt8],
        signingTime: Date,
        certificate: Certificate,
        chain: [Certificate],
        dataToSign: [UInt8],
        pdf: PDFUpdate? = nil
    ) {
        version = pdf == nil ? 1 : Self.currentVersion
        self.id = id
        // The JSON keeps whole seconds: so does the value, or a read copy would differ from it.
        self.created = Date(timeIntervalSince1970: created.timeIntervalSince1970.rounded(.down))
        self.documentName = documentName
        self.documentSize = documentSize
        self.format = format
        self.detached = detached
        self.digestAlgorithm = digestAlgorithm
        self.scheme = scheme
        self.contentDigest = contentDigest
        self.signingTime = Date(timeIntervalSince1970: signingTime.timeIntervalSince1970.rounded(.down))
        self.certificate = certificate
        self.chain = chain
        self.dataToSign = dataToSign
        self.pdf = pdf
    }
}

extension PendingSignature {
    /// This pending signature with `name` and `size` as the document's (the coordinator reads the
    /// document itself, then prepares from its digest).
    package func describing(documentName name: String, size: Int64) -> PendingSignature {
        PendingSignature(
            id: id,
            created: created,
            documentName: name,
            documentSize: size,
            format: format,
            detached: detached,
            digestAlgorithm: digestAlgorithm,
            scheme: scheme,
            contentDigest: contentDigest,
            signingTime: signingTime,
            certificate: certificate,
            chain: chain,
            dataToSign: dataToSign,
            pdf: pdf
        )
    }
}

extension PendingSignature: Codable {
    private enum CodingKeys: String, CodingKey {
        case version, id, created, documentName, documentSize, format, detached, digestAlgorithm, scheme, contentDigest
        case signingTime, certificate, chain, dataToSign, digestToSign, pdf
    }

    /// Reads the JSON layout of ``currentVersion`` (or older).
    /// - Throws: `DecodingError` for a missing or wrong field, a later version, bytes that are not
    ///   base64, a certificate that cannot be read, an unknown digest, a `digestToSign` that is not
    ///   the digest of `dataToSign`, or a `pdf` whose fields do not describe one update (an edited file).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        guard (1...Self.currentVersion).contains(version) else {
            throw DecodingError.dataCorruptedError(
                forKey: .version,
                in: container,
                debugDescription: "version \(version) is not one this release reads (1…\(Self.currentVersion))"
            )
        }
        id = try container.decode(String.self, forKey: .id)
        created = try Self.date(container, .created)
        documentName = try container.decodeIfPresent(String.self, forKey: .documentName)
        documentSize = try container.decodeIfPresent(Int64.self, forKey: .documentSize)
        format = SignatureFormat(try container.decode(String.self, forKey: .format))
        detached = try container.decode(Bool.self, forKey: .detached)
        let digestName = try container.decode(String.self, forKey: .digestAlgorithm)
        guard let digestAlgorithm = DigestAlgorithm(name: digestName) else {
            throw DecodingError.dataCorruptedError(
                forKey: .digestAlgorithm,
                in: container,
                debugDescription: "unknown digest '\(digestName)'"
            )
        }
        self.digestAlgorithm = digestAlgorithm
        scheme = SignatureScheme(try container.decode(String.self, forKey: .scheme))
        contentDigest = try Self.bytes(container, .contentDigest)
        signingTime = try Self.date(container, .signingTime)
        certificate = try Self.certificate(
            container,
            .certificate,
            try container.decode(String.self, forKey: .certificate)
        )
        chain = try container.decode([String].self, forKey: .chain).map { try Self.certificate(container, .chain, $0) }
        dataToSign = try Self.bytes(container, .dataToSign)
        pdf = try container.decodeIfPresent(PDFUpdate.self, forKey: .pdf)
        if try container.decodeIfPresent(String.self, forKey: .digestToSign) != nil,
            try Self.bytes(container, .digestToSign) != digestAlgorithm.hash(dataToSign)
        {
            throw DecodingError.dataCorruptedError(
                forKey: .digestToSign,
                in: container,
                debugDescription: "digestToSign is not the \(digestAlgorithm.displayName) digest of dataToSign"
            )
        }
    }

    /// Writes the JSON layout of ``currentVersion``: bytes and certificates in base64, times in ISO 8601.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(id, forKey: .id)
        try container.encode(Self.text(created), forKey: .created)
        try container.encodeIfPresent(documentName, forKey: .documentName)
        try container.encodeIfPresent(documentSize, forKey: .documentSize)
        try container.encode(format.rawValue, forKey: .format)
        try container.encode(detached, forKey: .detached)
        try container.encode(digestAlgorithm.rawValue, forKey: .digestAlgorithm)
        try container.encode(scheme.rawValue, forKey: .scheme)
        try container.encode(Data(contentDigest).base64EncodedString(), forKey: .contentDigest)
        try container.encode(Self.text(signingTime), forKey: .signingTime)
        try container.encode(Data(certificate.derRepresentation).base64EncodedString(), forKey: .certificate)
        try container.encode(chain.map { Data($0.derRepresentation).base64EncodedString() }, forKey: .chain)
        try container.encode(Data(dataToSign).base64EncodedString(), forKey: .dataToSign)
        try container.encode(Data(digestToSign).base64EncodedString(), forKey: .digestToSign)
        try container.encodeIfPresent(pdf, forKey: .pdf)
    }

    /// The JSON of this pending signature (sorted keys, pretty-printed).
    /// - Throws: `.cryptoFailure` when it cannot be encoded (it always can).
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(self)
        } catch {
            throw CertificateProviderError(.cryptoFailure, "the pending signature could not be encoded: \(error)")
        }
    }

    /// Reads a pending signature from its JSON.
    /// - Throws: `.malformedInput` naming the field when the JSON is not a pending signature of a
    ///   version this release reads, or was edited where that shows (see ``init(from:)``).
    public init(jsonData: Data) throws {
        do {
            self = try JSONDecoder().decode(PendingSignature.self, from: jsonData)
        } catch let error as DecodingError {
            throw CertificateProviderError.malformedInput("not a pending signature: \(Self.describe(error))")
        } catch {
            throw CertificateProviderError.malformedInput("not a pending signature: \(error)")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
            .valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "field '\(path)': \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func text(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    private static func date(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Date {
        let text = try container.decode(String.self, forKey: key)
        guard let date = try? Date(text, strategy: .iso8601) else {
            throw DecodingError.dataCorruptedError(
                forKey: key,
                in: container,
                debugDescription: "'\(text)' is not an ISO 8601 time"
            )
        }
        return date
    }

    private static func bytes(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> [UInt8] {
        guard let data = Data(base64Encoded: try container.decode(String.self, forKey: key)) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not base64")
        }
        return Array(data)
    }

    private static func certificate(
        _ container: KeyedDecodingContainer<CodingKeys>,
        _ key: CodingKeys,
        _ base64: String
    ) throws -> Certificate {
        guard let der = Data(base64Encoded: base64), let certificate = try? Certificate(derEncoded: Array(der)) else {
            throw DecodingError.dataCorruptedError(
                forKey: key,
                in: container,
                debugDescription: "not a base64 DER certificate"
            )
        }
        return certificate
    }
}
