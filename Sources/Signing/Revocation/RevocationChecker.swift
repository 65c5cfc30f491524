public import CertificateProviders
public import Foundation

/// Finds out whether a certificate was revoked: from CRLs the caller gives, and, when asked to go
/// online, from the OCSP responders of the certificate's authorityInfoAccess, else the CRLs of its
/// CRL distribution points, fetched through a `BinaryHTTPFetching` with size and time limits.
///
/// Every answer is checked before it counts: an OCSP response must be signed by the issuer or a
/// responder the issuer delegated (id-kp-OCSPSigning), chain to the trust anchors, echo the nonce
/// when it carries one and be current (thisUpdate / nextUpdate); a CRL must be the issuer's,
/// signed by it and current. Answers that fail are skipped; when none is left the status is
/// `.unknown` and its `source` lists what was tried.
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

        /// Creates a configuration.
        public init(
            crls: [CertificateRevocationList] = [],
            checksOnline: Bool = false,
            timeout: TimeInterval = 10,
            maximumOCSPResponseBytes: Int = 256 << 10,
            maximumCRLBytes: Int = 16 << 20,
            allowedClockSkew: TimeInterval = 300
        ) {
            self.crls = crls
            self.checksOnline = checksOnline
            self.timeout = timeout
            self.maximumOCSPResponseBytes = maximumOCSPResponseBytes
            self.maximumCRLBytes = maximumCRLBytes
            self.allowedClockSkew = allowedClockSkew
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
    ///   - certificate: the certificate to check (a signer's).
    ///   - issuer: its issuer's certificate (from the verified chain).
    ///   - trustAnchors: the anchors an OCSP responder's certificate must chain to (the issuer is
    ///     added as an untrusted intermediate).
    ///   - validationTime: the time the given CRLs must be current at (default now); fetched
    ///     answers must be current now.
    /// - Returns: good or revoked from the first answer that passes its checks, else unknown.
    public func status(
        of certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        validationTime: Date = Date()
    ) async -> RevocationStatus {
        var problems: [String] = []
        if let status = Self.offlineStatus(
            of: certificate,
            issuer: issuer,
            crls: configuration.crls,
            at: validationTime,
            skew: configuration.allowedClockSkew,
            problems: &problems
        ) {
            return status
        }
        if configuration.checksOnline {
            if let status = await onlineStatus(
                of: certificate,
                issuer: issuer,
                trustAnchors: trustAnchors,
                problems: &problems
            ) {
                return status
            }
        }
        if problems.isEmpty { problems.append("no CRL for '\(certificate.issuer)' was given") }
        return RevocationStatus(state: .unknown, source: problems.joined(separator: "; "))
    }

    /// The status from `crls` alone (no network), or nil when none of them decides; what was wrong
    /// with the CRLs that were skipped goes into `problems`.
    static func offlineStatus(
        of certificate: Certificate,
        issuer: Certificate,
        crls: [CertificateRevocationList],
        at time: Date,
        skew: TimeInterval,
        problems: inout [String]
    ) -> RevocationStatus? {
        for (index, crl) in crls.enumerated() {
            let found = RevocationOpenSSL.status(
                of: certificate,
                issuer: issuer,
                in: crl,
                at: time,
                skew: skew,
                source: "CRL \(index + 1) of '\(crl.issuer)' issued \(crl.thisUpdate)"
            )
            if let status = found.status { return status }
            if let problem = found.problem { problems.append(problem) }
        }
        return nil
    }

    /// The status from OCSP (authorityInfoAccess), else CRL distribution points, or nil.
    func onlineStatus(
        of certificate: Certificate,
        issuer: Certificate,
        trustAnchors: [Certificate],
        problems: inout [String]
    ) async -> RevocationStatus? {
        guard let fetcher else {
            problems.append("no network fetcher was given for online revocation checks")
            return nil
        }
        let skew = configuration.allowedClockSkew
        let ocspURLs = RevocationOpenSSL.ocspURLs(of: certificate)
        let crlURLs = RevocationOpenSSL.crlURLs(of: certificate)
        if ocspURLs.isEmpty && crlURLs.isEmpty {
            problems.append("the certificate names no OCSP responder and no CRL distribution point")
            return nil
        }
        for url in ocspURLs {
            do {
                let request = try RevocationOpenSSL.makeOCSPRequest(for: certificate, issuer: issuer)
                let answer = try await fetcher.post(
                    url,
                    contentType: Self.ocspRequestContentType,
                    body: request.der,
                    timeout: configuration.timeout,
                    maximumBytes: configuration.maximumOCSPResponseBytes
                )
                let status = try RevocationOpenSSL.checkOCSPResponse(
                    answer.body,
                    request: request,
                    certificate: certificate,
                    issuer: issuer,
                    trustAnchors: trustAnchors + [issuer],
                    at: Date(),
                    skew: skew,
                    source: "OCSP \(url.absoluteString)"
                )
                if status.state == .unknown {
                    problems.append(status.source)
                    continue
                }
                return status
            } catch let error as CertificateProviderError {
                problems.append("OCSP \(url.absoluteString): \(error.reason)")
            } catch {
                problems.append("OCSP \(url.absoluteString): \(error)")
            }
        }
        for url in crlURLs {
            do {
                let answer = try await fetcher.get(
                    url,
                    timeout: configuration.timeout,
                    maximumBytes: configuration.maximumCRLBytes
                )
                let crls = try CertificateRevocationList.lists(derOrPEM: answer.body)
                var found: [String] = []
                if let status = Self.offlineStatus(
                    of: certificate,
                    issuer: issuer,
                    crls: crls,
                    at: Date(),
                    skew: skew,
                    problems: &found
                ) {
                    return RevocationStatus(
                        state: status.state,
                        revocationTime: status.revocationTime,
                        source: "CRL \(url.absoluteString)"
                    )
                }
                problems += found.isEmpty ? ["CRL \(url.absoluteString) is not the issuer's"] : found
            } catch let error as CertificateProviderError {
                problems.append("CRL \(url.absoluteString): \(error.reason)")
            } catch {
                problems.append("CRL \(url.absoluteString): \(error)")
            }
        }
        return nil
    }
}
