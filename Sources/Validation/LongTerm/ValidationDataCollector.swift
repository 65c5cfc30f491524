import CMS
public import CertificateProviders
import Foundation

/// Gathers the validation data of a signature (B-LT): the path of each signer and of each
/// timestamp's TSA (signature and archive timestamps), built from the certificates the signature
/// and its tokens carry and the trust anchors, and a revocation answer from the
/// ``RevocationDataCache`` for every certificate of those paths but the anchors (and self-signed
/// roots). Format-neutral: a PAdES DSS is filled from the same `ValidationData` (module `CMS`).
public struct ValidationDataCollector: Sendable {
    /// The run's revocation answers (one request per distinct certificate).
    public let cache: RevocationDataCache
    /// The signers' and TSAs' trust anchors (`--ca`, `--tsa-ca`); a path ends at one of them or at a
    /// self-signed certificate.
    public let trustAnchors: [Certificate]
    /// Further certificates paths may be built from (a TSA's CA certificates, `--tsa-ca`); unlike
    /// the anchors, each gets a revocation answer unless it is self-signed.
    public let certificates: [Certificate]

    /// Creates a collector.
    /// - Parameters:
    ///   - cache: the run's revocation cache.
    ///   - trustAnchors: the anchors paths may end at (their certificates are embedded too).
    ///   - certificates: further CA certificates to build paths from (default none).
    public init(cache: RevocationDataCache, trustAnchors: [Certificate], certificates: [Certificate] = []) {
        self.cache = cache
        self.trustAnchors = trustAnchors
        self.certificates = certificates
    }

    /// The validation data of every signer of `signature` and of every timestamp token in it.
    ///
    /// - Parameters:
    ///   - signature: DER CMS SignedData.
    ///   - tokens: the timestamp tokens (DER) whose TSA paths to cover too.
    /// - Returns: the certificates of each path (anchors included) and a revocation answer for
    ///   each of their certificates but the anchors. The answers are had now, so each was issued
    ///   after the earliest token's time, or is current then, and proves the status at it: a
    ///   signer's certificate revoked after that time gets its answer embedded, as the signature
    ///   stays valid (EN 319 102-1 §5.6.2.4).
    /// - Throws: `.revocationUnavailable` naming the certificate without an answer or whose issuer
    ///   is missing; `.certificateRevoked` for a TSA's path, or a signer's revoked before the
    ///   earliest token's time (or with no token); `.malformedInput` for bytes that are not CMS.
    public func collect(signature: [UInt8], tokens: [[UInt8]]) async throws -> ValidationData {
        let found = try CMSCertificates.find(in: signature)
        var leaves: [(certificate: Certificate, pool: [Certificate], role: String)] = []
        for (index, signer) in found.signers.enumerated() {
            guard let signer else {
                throw CertificateProviderError(
                    .revocationUnavailable,
                    "signer \(index + 1) of the signature does not carry its certificate: its path cannot be embedded"
                )
            }
            leaves.append((signer, found.pool, "signer"))
        }
        for token in tokens {
            let tokenFound = try CMSCertificates.find(in: token)
            guard let tsa = tokenFound.signers.first ?? nil else {
                throw CertificateProviderError(
                    .revocationUnavailable,
                    "a timestamp token does not carry its TSA's certificate: its path cannot be embedded"
                )
            }
            leaves.append((tsa, tokenFound.pool + found.pool, "time-stamping authority"))
        }
        // The signature timestamp's time (the earliest token's): what it proves of the signers.
        let provenTime = tokens.compactMap { TimestampOpenSSL.facts(ofToken: $0)?.time }.min()
        var data = ValidationData()
        for leaf in leaves {
            let path = try self.path(
                from: leaf.certificate,
                pool: leaf.pool + trustAnchors + certificates,
                role: leaf.role
            )
            data.merge(ValidationData(certificates: path))
            let anchorsForAnswers = trustAnchors + [path[path.count - 1]]
            for (depth, certificate) in path.enumerated().dropLast() where !isAnchor(certificate) {
                switch try await cache.evidence(
                    for: certificate,
                    issuer: path[depth + 1],
                    trustAnchors: anchorsForAnswers,
                    provenTime: leaf.role == "signer" ? provenTime : nil
                ) {
                case .ocsp(let response): data.merge(ValidationData(ocspResponses: [response]))
                case .crl(let crl): data.merge(ValidationData(crls: [crl]))
                }
            }
        }
        return data
    }

    /// The same collector (and cache) with `more` certificates to build paths from: those a
    /// document carries beside its signatures (a PDF's DSS, its other signatures).
    package func adding(certificates more: [Certificate]) -> ValidationDataCollector {
        ValidationDataCollector(
            cache: cache,
            trustAnchors: trustAnchors,
            certificates: certificates + more.filter { !certificates.contains($0) }
        )
    }

    /// Every certificate `SignedData.certificates` of `signedData` carries (DER, BER).
    /// - Throws: `.malformedInput` for bytes that are not CMS SignedData.
    package static func certificates(in signedData: [UInt8]) throws -> [Certificate] {
        try CMSCertificates.find(in: signedData).pool
    }

    /// The path from `leaf` up to an anchor or a self-signed certificate.
    /// - Throws: `.revocationUnavailable` when an issuer is neither in `pool` nor an anchor.
    package func path(from leaf: Certificate, pool: [Certificate], role: String) throws -> [Certificate] {
        var path = [leaf]
        var current = leaf
        while !isAnchor(current) && !RevocationOpenSSL.isIssued(current, by: current) {
            guard path.count < 16,
                let issuer = pool.first(where: { !path.contains($0) && RevocationOpenSSL.isIssued(current, by: $0) })
            else {
                throw CertificateProviderError(
                    .revocationUnavailable,
                    "the issuer '\(current.issuer)' of the \(role)'s certificate '\(current.subject)' is neither in "
                        + "the signature nor among the trust anchors: give its CA certificate with --ca (or --tsa-ca)"
                )
            }
            path.append(issuer)
            current = issuer
        }
        return path
    }

    private func isAnchor(_ certificate: Certificate) -> Bool { trustAnchors.contains(certificate) }
}
