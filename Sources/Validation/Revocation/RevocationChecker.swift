import CMS
public import CertificateProviders
public import Foundation

/// Finds out whether a certificate was revoked: from CRLs the caller gives, and, when asked to go
/// online, from the OCSP responders of the certificate's authorityInfoAccess, else the CRLs of its
/// CRL distribution points, fetched through a `BinaryHTTPFetching` with size and time limits.
///
/// Every answer is checked before it counts: an OCSP response must be signed by the issuer or a
/// responder the issuer delegated (id-kp-OCSPSigning), chain to the trust anchors, answer for the
/// certificate asked, carry back the request's nonce and be fresh (thisUpdate not in the future
/// nor before the certificate's notBefore; nextUpdate not passed, or without it not older than
/// ``Configuration/maximumAnswerAge``); a CRL is used only within its scope, by OpenSSL's RFC 5280
/// processing (issuer's signature, issuing distribution point, delta with its base only, no
/// unhandled critical extension) and must be current. Answers that fail are skipped; when none is
/// left the status is `.unknown` and its `source` lists what was tried.
///
/// ``CMSVerifier`` uses it for ``ValidationPolicy/crls`` and ``ValidationPolicy/checkRevocation``;
/// it can also be used on its own.
public struct RevocationChecker: Sendable {
    /// What to consult; every field documents its default.
    public struct Configuration: Sendable {
        /// CRLs given by the caller (`--crl`), consulted first (default none).
        public var crls: [CertificateRevocationList]
        /// Whether to ask OCSP responders and CRL distribution points over the network
        /// (default false: offline).
        public var checksOnline: Bool
        /// Seconds for each network exchange (default 10).
        public var timeout: TimeInterval
        /// The largest OCSP response accepted (default 256 KiB).
        public var maximumOCSPResponseBytes: Int
        /// The largest CRL downloaded (default 16 MiB).
        public var maximumCRLBytes: Int
        /// The tolerance for thisUpdate / nextUpdate against the clock (default 300 s).
        public var allowedClockSkew: TimeInterval
        /// The oldest an OCSP answer without nextUpdate may be, from its thisUpdate (default 7
        /// days; see ``ValidationPolicy/revocationMaximumAge``).
        public var maximumAnswerAge: TimeInterval
        /// Whether an OCSP answer must carry back the request's nonce (default false; see
        /// ``ValidationPolicy/requiresOCSPNonce``).
        public var requiresOCSPNonce: Bool

        /// Creates a configuration.
        public init(
            crls: [CertificateRevocationList] = [],
            checksOnline: Bool = false,
            timeout: TimeInterval = 10,
            maximumOCSPResponseBytes: Int = 256 << 10,
            maximumCRLBytes: Int = 16 << 20,
            allowedClockSkew: TimeInterval = 300,
            maximumAnswerAge: TimeInterval = 7 * 86_400,
            requiresOCSPNonce: Bool = false
        ) {
            self.crls = crls
            self.checksOnline = checksOnline
            self.timeout = timeout
            self.maximumOCSPResponseBytes = maximumOCSPResponseBytes
            self.maximumCRLBytes = maximumCRLBytes
            self.allowedClockSkew = allowedClockSkew
            self.maximumAnswerAge = maximumAnswerAge
            self.requiresOCSPNonce = requiresOCSPNonce
        }
    }

    /// The media type of an OCSP request (RFC 6960 A.1).
    public static let ocspRequestContentType = "application/ocsp-request"

    /// The configuration in force.
    public let configuration: Configuration
    /// How OCSP responders and CRL distribution points are reached (nil: offline only).
    public let fetcher: (any BinaryHTTPFetching)?

    /// Creates a checker.
    /// - Parameters:
    ///   - configuration: CRLs, online or not, limits.
    ///   - fetcher: needed when ``Configuration/checksOnline`` is set.
    public init(configuration: Configuration, fetcher: (any BinaryHTTPFetching)? = nil) {
        self.configuration = configuration
        self.fetcher = fetcher
    }

    /// The revocation status of `certificate`.
    ///
    /// - Parameters:
    ///   - certificate: the certificate to check.
    ///   - issuer: its issuer's certificate (from the verified chain).
    ///   - trustAnchors: the anchors an OCSP responder's certificate must chain to (the issuer is
    ///     added as an untrusted intermediate).
    ///   - validationTime: the time every answer must be current at (default nil: now, read when
    ///     each answer is at hand, so a slow responder's fresh answer is not judged older than it is).
    /// - Returns: good or revoked from the first answer that passes its checks, else unknown.
    public func status(
        of certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        validationTime: Date? = nil
    ) async -> RevocationStatus {
        var problems: [String] = []
        if let status = Self.offlineStatus(
            of: certificate,
            issuer: issuer,
            crls: configuration.crls,
            at: validationTime ?? Date(),
            problems: &problems
        ) {
            return status
        }
        if configuration.checksOnline {
            if RevocationOpenSSL.ocspURLs(of: certificate).isEmpty && RevocationOpenSSL.crlURLs(of: certificate).isEmpty
            {
                problems.append("the certificate names no OCSP responder and no CRL distribution point")
            }
            if let status = await ocspStatus(
                of: certificate,
                issuer: issuer,
                trustAnchors: trustAnchors,
                at: validationTime,
                problems: &problems
            ) {
                return status
            }
            for (url, crls) in await distributionPointCRLs(of: certificate, problems: &problems) {
                if let status = Self.offlineStatus(
                    of: certificate,
                    issuer: issuer,
                    crls: crls,
                    at: validationTime ?? Date(),
                    problems: &problems
                ) {
                    return RevocationStatus(
                        state: status.state,
                        revocationTime: status.revocationTime,
                        source: "CRL \(url.absoluteString)"
                    )
                }
            }
        }
        return .undecided(issuer: certificate.issuer, tried: problems)
    }

    /// The status from `crls` alone (no network, OpenSSL's CRL processing with `issuer` as the
    /// anchor), or nil when they do not decide; why goes into `problems`.
    package static func offlineStatus(
        of certificate: Certificate,
        issuer: Certificate,
        crls: [CertificateRevocationList],
        at time: Date,
        problems: inout [String]
    ) -> RevocationStatus? {
        guard !crls.isEmpty else { return nil }
        let check = RevocationOpenSSL.checkCRLs(
            leaf: certificate,
            untrusted: [],
            anchors: [issuer],
            crls: crls,
            at: time
        )
        guard let verdict = check.verdicts.first else { return nil }
        let source = "CRL of '\(certificate.issuer)'"
        switch verdict.state {
        case .good, .revoked:
            return RevocationStatus(state: verdict.state, revocationTime: verdict.revocationTime, source: source)
        default:
            problems.append("\(source): \(verdict.problems.joined(separator: ", "))")
            return nil
        }
    }

    /// The status from the OCSP responders of the certificate's authorityInfoAccess, or nil when
    /// none gives a usable answer (why goes into `problems`). A nil `time` is now, read when each
    /// answer has arrived: a responder that took minutes to answer is not judged at the time it
    /// was asked, which its fresh answer would postdate.
    package func ocspStatus(
        of certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        at time: Date?,
        problems: inout [String]
    ) async -> RevocationStatus? {
        await ocspAnswer(of: certificate, issuer: issuer, trustAnchors: trustAnchors, at: time, problems: &problems)?
            .status
    }

    /// Like ``ocspStatus(of:issuer:trustAnchors:at:problems:)``, with the checked OCSPResponse (DER)
    /// that gave the status, for embedding as validation data (B-LT).
    package func ocspAnswer(
        of certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        at time: Date?,
        problems: inout [String]
    ) async -> (status: RevocationStatus, response: [UInt8])? {
        guard let fetcher else {
            problems.append("no network fetcher was given for online revocation checks")
            return nil
        }
        for url in RevocationOpenSSL.ocspURLs(of: certificate) {
            do {
                let request = try RevocationOpenSSL.makeOCSPRequest(for: certificate, issuer: issuer)
                let answer = try await fetcher.post(
                    url,
                    contentType: Self.ocspRequestContentType,
                    body: request.der,
                    timeout: configuration.timeout,
                    maximumBytes: configuration.maximumOCSPResponseBytes
                )
                let freshness = RevocationOpenSSL.OCSPFreshness(
                    time: time ?? Date(),
                    skew: configuration.allowedClockSkew,
                    maximumAge: configuration.maximumAnswerAge,
                    requiresNonce: configuration.requiresOCSPNonce
                )
                let status = try RevocationOpenSSL.checkOCSPResponse(
                    answer.body,
                    request: request,
                    certificate: certificate,
                    issuer: issuer,
                    trustAnchors: trustAnchors + [issuer],
                    freshness: freshness,
                    source: "OCSP \(url.absoluteString)"
                )
                if status.state == .unknown {
                    problems.append(status.source)
                    continue
                }
                return (status, answer.body)
            } catch let error as CertificateProviderError {
                problems.append("OCSP \(url.absoluteString): \(error.reason)")
            } catch {
                problems.append("OCSP \(url.absoluteString): \(error)")
            }
        }
        return nil
    }

    /// The CRLs of the certificate's CRL distribution points, by URL; what could not be fetched
    /// or read goes into `problems`.
    package func distributionPointCRLs(
        of certificate: Certificate,
        problems: inout [String]
    ) async -> [(url: URL, crls: [CertificateRevocationList])] {
        guard fetcher != nil else { return [] }
        var found: [(url: URL, crls: [CertificateRevocationList])] = []
        for url in RevocationOpenSSL.crlURLs(of: certificate) {
            do {
                found.append((url, try await crls(at: url)))
            } catch let error as CertificateProviderError {
                problems.append("CRL \(url.absoluteString): \(error.reason)")
            } catch {
                problems.append("CRL \(url.absoluteString): \(error)")
            }
        }
        return found
    }

    /// The CRLs a distribution point serves.
    /// - Throws: the fetcher's errors; `.malformedInput` when the answer is not a CRL;
    ///   `.unsupportedOperation` without a fetcher.
    package func crls(at url: URL) async throws -> [CertificateRevocationList] {
        guard let fetcher else {
            throw CertificateProviderError(.unsupportedOperation, "no network fetcher was given for CRL downloads")
        }
        let answer = try await fetcher.get(
            url,
            timeout: configuration.timeout,
            maximumBytes: configuration.maximumCRLBytes
        )
        return try CertificateRevocationList.lists(derOrPEM: answer.body)
    }
}
