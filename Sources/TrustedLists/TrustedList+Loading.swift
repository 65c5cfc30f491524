public import CertificateProviders
public import Foundation

extension TrustedList {
    /// Reads, verifies and parses the list in the file at `url`.
    ///
    /// A file larger than `limits.maximumBytes` is refused before it is read.
    /// - Parameters:
    ///   - url: a LOTL or TL file (XML).
    ///   - signers: the certificates that may have signed it: the LOTL's signing certificates, or
    ///     for a TL those its LOTL pointer names.
    ///   - time: the time the list must still be current at (its `NextUpdate` after it).
    ///   - limits: how much the list may hold.
    /// - Throws: ``TrustedListError`` with the reason (see its codes).
    public static func load(
        contentsOf url: URL,
        signers: [Certificate],
        at time: Date = Date(),
        limits: TrustedListLimits = TrustedListLimits()
    ) throws -> TrustedList {
        let name = url.lastPathComponent
        let bytes = try readBounded(url, limit: limits.maximumBytes, name: name)
        return try TrustedList(xml: bytes, name: name, signers: signers, at: time, limits: limits)
    }

    /// Verifies and parses a list held in memory.
    ///
    /// Order of checks: size and XML limits (no DTD, no entities, no network), the root element's
    /// namespace, the enveloped XML signature (libxmlsec1: it must cover the whole list and verify
    /// with one of `signers`), then the fields, then `NextUpdate` against `time`.
    /// - Parameters:
    ///   - bytes: the list's XML.
    ///   - name: what errors call the list.
    ///   - signers: the certificates that may have signed it.
    ///   - time: the time the list must still be current at.
    ///   - limits: how much the list may hold.
    /// - Throws: ``TrustedListError`` with the reason.
    public init(
        xml bytes: [UInt8],
        name: String,
        signers: [Certificate],
        at time: Date = Date(),
        limits: TrustedListLimits = TrustedListLimits()
    ) throws {
        let xml = try Self.parse(bytes, name: name, limits: limits)
        try self.init(parsed: xml, name: name, signers: signers, at: time)
    }

    /// Parses a list within `limits` and checks its root element; nothing is verified yet.
    static func parse(_ bytes: [UInt8], name: String, limits: TrustedListLimits) throws -> TrustedListXML {
        guard bytes.count <= limits.maximumBytes else {
            throw TrustedListError(.limitExceeded, "\(name) is larger than \(limits.maximumBytes) bytes")
        }
        let xml = try TrustedListXML.parse(bytes, limits: limits, name: name)
        guard let root = xml.root else { throw TrustedListError(.malformedXML, "\(name) has no root element") }
        guard root.name == "TrustServiceStatusList", root.namespace == Self.namespace else {
            throw TrustedListError(
                .wrongNamespace,
                "\(name)'s root element is {\(root.namespace ?? "")}\(root.name), not ETSI TS 119 612 v2's "
                    + "{\(Self.namespace)}TrustServiceStatusList"
            )
        }
        return xml
    }

    /// Verifies a parsed list's signature with `signers`, then reads it and checks its `NextUpdate`.
    init(parsed xml: TrustedListXML, name: String, signers: [Certificate], at time: Date) throws {
        guard let root = xml.root else { throw TrustedListError(.malformedXML, "\(name) has no root element") }
        let signer = try Self.verifiedSigner(xml, signers: signers, name: name)
        let reader = TrustedListReader(name: name)
        let fields = try reader.fields(root)
        guard let nextUpdate = fields.nextUpdate else {
            throw TrustedListError(.expired, "\(name) has no NextUpdate: its scheme operator closed the list")
        }
        guard nextUpdate > time else {
            throw TrustedListError(
                .expired,
                "\(name)'s NextUpdate \(Self.isoText(nextUpdate)) is before \(Self.isoText(time)): the list is "
                    + "out of date; use its newer issue"
            )
        }
        self.init(
            name: name,
            fields: fields,
            nextUpdate: nextUpdate,
            pointers: try reader.pointers(root),
            services: try reader.services(root),
            signer: signer
        )
    }

    /// The first of `signers` whose key verifies the list's signature.
    private static func verifiedSigner(
        _ xml: TrustedListXML,
        signers: [Certificate],
        name: String
    ) throws
        -> Certificate
    {
        guard !signers.isEmpty else {
            throw TrustedListError(.noSigners, "no signer certificate was given to check \(name)'s signature against")
        }
        var wrongKeys: [String] = []
        for signer in signers {
            switch xml.checkSignature(with: signer) {
            case .valid:
                return signer
            case .wrongKey(let detail):
                wrongKeys.append("\(signer.subject): \(detail)")
            case .contentChanged(let detail), .refused(let detail), .failed(let detail):
                throw TrustedListError(.signatureInvalid, "\(name)'s signature does not hold: \(detail)")
            case .unsigned(let detail):
                throw TrustedListError(.unsigned, "\(name) is not signed: \(detail)")
            }
        }
        throw TrustedListError(
            .wrongSigner,
            "\(name) is not signed by any of the \(signers.count) signer certificate(s) given ("
                + wrongKeys.joined(separator: "; ") + ")"
        )
    }

    /// What an unverified list says it is (its `TSLType` and `SchemeTerritory`): only for choosing
    /// which certificates to verify it with, never trusted.
    static func claimedIdentity(_ xml: TrustedListXML) -> (type: String, territory: String) {
        let info = xml.root?.child("SchemeInformation")
        return (info?.child("TSLType")?.text ?? "", info?.child("SchemeTerritory")?.text ?? "")
    }

    static func isoText(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0) ?? .gmt))
    }

    /// At most `limit` bytes of the file; a larger file (or one that grows while read) is refused.
    static func readBounded(_ url: URL, limit: Int, name: String) throws -> [UInt8] {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw TrustedListError(.unreadable, "\(url.path) cannot be read: \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        let tooLarge = TrustedListError(.limitExceeded, "\(name) is larger than \(limit) bytes")
        if let size = try? handle.seekToEnd(), size > UInt64(limit) { throw tooLarge }
        do {
            try handle.seek(toOffset: 0)
            let data = try handle.read(upToCount: limit + 1) ?? Data()
            guard data.count <= limit else { throw tooLarge }
            return [UInt8](data)
        } catch let error as TrustedListError {
            throw error
        } catch {
            throw TrustedListError(.unreadable, "\(url.path) cannot be read: \(error.localizedDescription)")
        }
    }
}
