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
    private var answers: [String: Task<RevocationEvidence, any Error>] = [:]
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
    ///   - time: the time the answer must be current at (default now).
    /// - Returns: a checked OCSP response saying good, else a CRL that says good.
    /// - Throws: `.revocationUnavailable` naming the certificate and what was tried when no answer
    ///   says good (`.certificateRevoked` when one says revoked).
    public func evidence(
        for certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        at time: Date = Date()
    ) async throws -> RevocationEvidence {
        let key = certificate.sha256FingerprintHex
        if let known = answers[key] { return try await known.value }
        let task = Task { try await self.fetch(certificate, issuer: issuer, trustAnchors: trustAnchors, at: time) }
        answers[key] = task
        return try await task.value
    }

    private func fetch(
        _ certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        at time: Date
    ) async throws -> RevocationEvidence {
        var problems: [String] = []
        if let given = try givenEvidence(certificate, issuer: issuer, trustAnchors: trustAnchors, at: time) {
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
            try Self.requireGood(answer.status, of: certificate)
            return .ocsp(answer.response)
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
                at: time,
                problems: &problems
            ), let crl = crls.first(where: { $0.issuer == certificate.issuer }) {
                try Self.requireGood(status, of: certificate)
                return .crl(crl)
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
    /// - Throws: `.certificateRevoked` when one says revoked.
    private func givenEvidence(
        _ certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        at time: Date
    ) throws -> RevocationEvidence? {
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
            try Self.requireGood(status, of: certificate)
            return .ocsp(response)
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
            try Self.requireGood(status, of: certificate)
            return .crl(crl)
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

    private static func requireGood(_ status: RevocationStatus, of certificate: Certificate) throws {
        guard status.state == .revoked else { return }
        let when = status.revocationTime.map { " on \($0)" } ?? ""
        throw CertificateProviderError(
            .certificateRevoked,
            "the certificate '\(certificate.subject)' was revoked\(when) (\(status.source))"
        )
    }
}
