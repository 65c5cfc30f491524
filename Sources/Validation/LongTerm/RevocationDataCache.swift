import CMS
public import CertificateProviders
public import Foundation

/// The revocation answers of one run, by certificate: each distinct certificate is asked for once
/// (OCSP from its authorityInfoAccess, else its CRL distribution points), however many signatures
/// of the run need it, and a CRL distribution point is downloaded once. Share one cache between
/// every signature a run extends (`certsign extend A.p7s B.p7s …`, a batch `sign --level b-lt`).
///
/// Format-neutral: CAdES and PAdES validation data both come from it.
public actor RevocationDataCache {
    /// How answers are fetched and checked (its `checksOnline` is ignored: the cache always asks).
    public let checker: RevocationChecker
    private var answers: [String: Task<(RevocationEvidence, RevocationStatus), any Error>] = [:]
    private var crlDownloads: [URL: Task<[CertificateRevocationList], any Error>] = [:]
    /// How many OCSP requests and CRL downloads were made.
    public private(set) var requestCount = 0
    /// CRLs the caller already holds, tried before the network.
    public let givenCRLs: [CertificateRevocationList]
    /// OCSP responses (DER OCSPResponse) the caller already holds, tried before the network.
    public let givenOCSPResponses: [[UInt8]]

    /// Creates an empty cache.
    /// - Parameters:
    ///   - fetcher: how OCSP responders and CRL distribution points are reached.
    ///   - configuration: timeouts and size limits (default: ``RevocationChecker/Configuration``'s).
    ///   - crls: CRLs already at hand (an offline signer's); a certificate one of them decides (issued
    ///     by its issuer, current, in its scope) takes it and asks no one (default none).
    ///   - ocspResponses: OCSP responses (DER) already at hand; one that answers for a certificate,
    ///     is signed by its issuer or a responder it delegated and is current is taken first (default
    ///     none).
    public init(
        fetcher: any BinaryHTTPFetching,
        configuration: RevocationChecker.Configuration = .init(),
        crls: [CertificateRevocationList] = [],
        ocspResponses: [[UInt8]] = []
    ) {
        var configuration = configuration
        configuration.checksOnline = true
        configuration.crls = []
        checker = RevocationChecker(configuration: configuration, fetcher: fetcher)
        givenCRLs = crls
        givenOCSPResponses = ocspResponses
    }

    /// The revocation answer for `certificate`, fetched the first time it is asked for.
    ///
    /// - Parameters:
    ///   - certificate: the certificate.
    ///   - issuer: its issuer.
    ///   - trustAnchors: what an OCSP responder's certificate must chain to (the issuer is added).
    ///   - time: the time the answer must be current at (default nil: now, read when the answer is
    ///     at hand, so a responder that takes minutes does not make its fresh answer look made
    ///     after the check).
    ///   - provenTime: the time a signature timestamp proves the signature existed at (default
    ///     none): an answer saying the certificate was revoked after it is evidence too, since the
    ///     signature stays valid (EN 319 102-1 §5.6.2.4).
    /// - Returns: a checked OCSP response saying good (or revoked after `provenTime`), else such a CRL.
    /// - Throws: `.revocationUnavailable` naming the certificate and what was tried when no answer
    ///   decides; `.certificateRevoked` when one says revoked (before `provenTime`, when given).
    public func evidence(
        for certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        at time: Date? = nil,
        provenTime: Date? = nil
    ) async throws -> RevocationEvidence {
        let key = certificate.sha256FingerprintHex
        let task =
            answers[key]
            ?? Task { try await self.fetch(certificate, issuer: issuer, trustAnchors: trustAnchors, at: time) }
        answers[key] = task
        let (evidence, status) = try await task.value
        try Self.require(status, of: certificate, provenTime: provenTime)
        return evidence
    }

    private func fetch(
        _ certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        at time: Date?
    ) async throws -> (RevocationEvidence, RevocationStatus) {
        var problems: [String] = []
        if let given = try givenEvidence(certificate, issuer: issuer, trustAnchors: trustAnchors, at: time ?? Date()) {
            return given
        }
        let ocspURLs = RevocationOpenSSL.ocspURLs(of: certificate)
        requestCount += ocspURLs.isEmpty ? 0 : 1
        if let answer = await checker.ocspAnswer(
            of: certificate,
            issuer: issuer,
            trustAnchors: trustAnchors,
            at: time,
            problems: &problems
        ) {
            return (.ocsp(answer.response), answer.status)
        }
        for url in RevocationOpenSSL.crlURLs(of: certificate) {
            let crls: [CertificateRevocationList]
            do {
                crls = try await download(url)
            } catch let error as CertificateProviderError {
                problems.append("CRL \(url.absoluteString): \(error.reason)")
                continue
            } catch {
                problems.append("CRL \(url.absoluteString): \(error)")
                continue
            }
            if let status = RevocationChecker.offlineStatus(
                of: certificate,
                issuer: issuer,
                crls: crls,
                at: time ?? Date(),
                problems: &problems
            ), let crl = crls.first(where: { $0.issuer == certificate.issuer }) {
                return (.crl(crl), status)
            }
        }
        if ocspURLs.isEmpty && RevocationOpenSSL.crlURLs(of: certificate).isEmpty {
            problems.append("the certificate names no OCSP responder and no CRL distribution point")
        }
        throw CertificateProviderError(
            .revocationUnavailable,
            "no revocation answer for '\(certificate.subject)': \(problems.joined(separator: "; "))"
        )
    }

    /// The answer the given OCSP responses or CRLs hold for `certificate`, or nil when none decides.
    private func givenEvidence(
        _ certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        at time: Date
    ) throws -> (RevocationEvidence, RevocationStatus)? {
        let freshness = RevocationOpenSSL.OCSPFreshness(
            time: time,
            skew: checker.configuration.allowedClockSkew,
            maximumAge: checker.configuration.maximumAnswerAge,
            requiresNonce: false
        )
        for response in givenOCSPResponses {
            guard
                let status = try? RevocationOpenSSL.checkOCSPResponse(
                    response,
                    request: nil,
                    certificate: certificate,
                    issuer: issuer,
                    trustAnchors: trustAnchors + [issuer],
                    freshness: freshness,
                    source: "the given OCSP response"
                ), status.state != .unknown
            else { continue }
            return (.ocsp(response), status)
        }
        var ignored: [String] = []
        let crls = givenCRLs.filter { $0.issuer == certificate.issuer }
        if let status = RevocationChecker.offlineStatus(
            of: certificate,
            issuer: issuer,
            crls: crls,
            at: time,
            problems: &ignored
        ), let crl = crls.first {
            return (.crl(crl), status)
        }
        return nil
    }

    /// Downloads a CRL distribution point once per run.
    private func download(_ url: URL) async throws -> [CertificateRevocationList] {
        if let known = crlDownloads[url] { return try await known.value }
        requestCount += 1
        let checker = checker
        let task = Task { try await checker.crls(at: url) }
        crlDownloads[url] = task
        return try await task.value
    }

    /// A revoked certificate fails, unless it was revoked after `provenTime`.
    private static func require(_ status: RevocationStatus, of certificate: Certificate, provenTime: Date?) throws {
        guard status.state == .revoked else { return }
        if let provenTime, let revoked = status.revocationTime, revoked > provenTime { return }
        let when = status.revocationTime.map { " on \($0)" } ?? ""
        let before = provenTime.map { ", before the time its signature timestamp proves (\($0))" } ?? ""
        throw CertificateProviderError(
            .certificateRevoked,
            "the certificate '\(certificate.subject)' was revoked\(when)\(before) (\(status.source))"
        )
    }
}
