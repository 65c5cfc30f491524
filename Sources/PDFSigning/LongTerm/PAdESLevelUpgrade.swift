import CertificateProviders
internal import Durability
public import Foundation
import Glibc
public import Signing

/// PAdES B-LT and B-LTA (ETSI EN 319 142-1 §5.4, as pyHanko and EU DSS build them) for signed PDFs:
/// `sign --format pades --level b-lt|b-lta` and `extend FILE.pdf`.
///
/// The steps, each an incremental update so every earlier signature stays valid:
/// 1. when a signature has no signature timestamp and the file no document timestamp, a
///    document timestamp (B-T);
/// 2. a `/DSS` revision with the certificates of every signature's path, of its signature
///    timestamps' TSA paths and of every document timestamp's TSA path, and a revocation answer
///    (OCSP, else CRL) for each of their certificates but the trust anchors, from the
///    ``ValidationDataCollector`` (one request per distinct certificate per run); what the file's
///    DSS already holds is not written again; `/VRI` entries with ``addsVRI`` (B-LT);
/// 3. for B-LTA a document timestamp over it all. Extending a B-LTA file again (renewal) adds the
///    validation data of its last document timestamp in a further DSS revision, then a further
///    document timestamp.
public struct PAdESLevelUpgrade: Sendable {
    /// ``SignatureLevel/bLT`` or ``SignatureLevel/bLTA``.
    public let level: SignatureLevel
    /// The TSA of the document timestamps.
    public let authority: TimestampAuthorityClient
    /// Where the validation data comes from (share its cache across a run).
    public let collector: ValidationDataCollector
    /// Whether the DSS gets a `/VRI` entry per signature (default false: the DSS alone is what
    /// PAdES baseline asks for).
    public let addsVRI: Bool

    /// Creates the step.
    /// - Parameters:
    ///   - level: B-LT or B-LTA.
    ///   - authority: the TSA.
    ///   - collector: the validation data source.
    ///   - addsVRI: whether to write `/VRI` entries.
    /// - Throws: `.invalidParameter` for a level below B-LT.
    public init(
        level: SignatureLevel,
        authority: TimestampAuthorityClient,
        collector: ValidationDataCollector,
        addsVRI: Bool = false
    ) throws {
        try level.requireLongTerm(belowHint: "sign with a TSA (or certsign timestamp) for B-T")
        self.level = level
        self.authority = authority
        self.collector = collector
        self.addsVRI = addsVRI
    }

    /// What an upgrade did.
    public struct Result: Sendable {
        /// The document timestamps added (B-T for a signature without one, B-LTA).
        public let addedTimestamps: [TimestampToken]
        /// The certificates, OCSP responses and CRLs the DSS revision added (all 0: no revision
        /// was needed).
        public let addedCertificates: Int
        /// See ``addedCertificates``.
        public let addedOCSPResponses: Int
        /// See ``addedCertificates``.
        public let addedCRLs: Int
    }

    /// Raises every signature of the PDF at `input` to ``level`` and writes the result to
    /// `output`; when both are the same file it is replaced atomically.
    /// - Parameters:
    ///   - input: a signed PDF (this package's, pyHanko's, any PAdES or adbe.pkcs7.detached one).
    ///   - output: where to write; must not exist unless it is `input`.
    /// - Returns: what was added.
    /// - Throws: `.invalidParameter` for a PDF without signatures, or a B-LTA file asked for B-LT;
    ///   `.revocationUnavailable` naming a certificate without an answer; `.certificateRevoked`;
    ///   the TSA client's errors; as ``PDFSigner/addDocumentTimestamp(toPDFAt:writingTo:authority:fieldName:)``.
    ///   Nothing is written when it throws.
    public func upgrade(pdfAt input: URL, writingTo output: URL) async throws -> Result {
        let inPlace = input.standardizedFileURL.path == output.standardizedFileURL.path
        if !inPlace, FileSystem.exists(output.path) {
            throw CertificateProviderError(.alreadyExists, "'\(output.path)' already exists; choose another output")
        }
        var temporaries: [String] = []
        defer { for path in temporaries { unlink(path) } }
        func fresh() throws -> URL {
            let path = try PDFSigner.makeTemporary(for: output, replacing: true)
            temporaries.append(path)
            return URL(fileURLWithPath: path)
        }
        var current = input
        var stamps: [TimestampToken] = []
        var signatures = try PDFLongTermFacts(pdfAt: current)
        if signatures.level == .bLTA && level == .bLT {
            throw CertificateProviderError(
                .invalidParameter,
                "'\(input.path)' is PAdES B-LTA already: 'extend --level b-lta' renews it with a further document "
                    + "timestamp"
            )
        }
        if signatures.needsDocumentTimestamp {
            let stamped = try fresh()
            try PDFSigner.copyOriginal(
                current,
                to: try PDFFile(path: stamped.path, writable: true),
                expectedSize: try PDFFile(path: current.path).size
            )
            stamps.append(try await timestamp(stamped))
            current = stamped
            signatures = try PDFLongTermFacts(pdfAt: current)
        }
        let (data, vri) = try await validationData(of: signatures)
        let withDSS = try fresh()
        let added = try DSSRevision.append(data, vri: addsVRI ? vri : [], to: current, writingTo: withDSS.path)
        current = withDSS
        if level == .bLTA { stamps.append(try await timestamp(current)) }
        if inPlace {
            try FileSystem.rename(current.path, output.path)
        } else {
            try FileSystem.link(current.path, output.path)
        }
        try FileSystem.syncDirectory(output.deletingLastPathComponent().path)
        return Result(
            addedTimestamps: stamps,
            addedCertificates: added.certificates,
            addedOCSPResponses: added.ocspResponses,
            addedCRLs: added.crls
        )
    }

    /// A document timestamp added to `file` in place; its token.
    private func timestamp(_ file: URL) async throws -> TimestampToken {
        let result = try await PDFSigner.addDocumentTimestamp(toPDFAt: file, writingTo: file, authority: authority)
        guard let token = result.timestamp else {
            throw CertificateProviderError(.timestampInvalid, "the TSA's document timestamp was not returned")
        }
        return token
    }

    /// The validation data of every signature (its path and its signature timestamps' TSA paths)
    /// and every document timestamp (its TSA's path), and each signature's own for `/VRI`.
    private func validationData(
        of facts: PDFLongTermFacts
    ) async throws -> (ValidationData, [DSSRevision.VRIEntry]) {
        var all = ValidationData()
        var vri: [DSSRevision.VRIEntry] = []
        // A document timestamp's token carries only its TSA's certificate: the path above it comes
        // from the DSS and the signatures of the file.
        var pool = facts.documentCertificates
        for signature in facts.signatures {
            pool += try ValidationDataCollector.certificates(in: signature.cms).filter { !pool.contains($0) }
        }
        let collector = collector.adding(certificates: pool)
        for signature in facts.signatures {
            let data: ValidationData
            if signature.isDocumentTimestamp {
                data = try await collector.collect(signature: signature.cms, tokens: [])
            } else {
                data = try await collector.collect(signature: signature.cms, tokens: signature.timestampTokens)
            }
            all.merge(data)
            vri.append(DSSRevision.VRIEntry(contents: signature.contents, data: data))
        }
        return (all, vri)
    }
}
