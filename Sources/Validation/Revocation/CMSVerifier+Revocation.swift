import CMS
public import CertificateProviders
import Foundation

extension CMSVerifier {
    /// Verifies a signature like ``verify(signature:content:trustAnchors:policy:)`` and, when the
    /// policy asks for ``ValidationPolicy/checkRevocation``, fetches the revocation answers of
    /// every certificate of each signer's path and of its time-stamping authority's path (trust
    /// anchors excepted) that the policy's CRLs do not decide: OCSP from the certificate's
    /// authorityInfoAccess, else the CRLs of its CRL distribution points, through `fetcher`, with
    /// the limits of `revocation` and the freshness rules of the policy.
    ///
    /// Verification runs twice: once to learn the paths (each certificate's issuer is needed to
    /// ask), then again with the answers, at the same validation time. Without `checkRevocation`
    /// nothing is fetched and the result is that of the synchronous variant.
    ///
    /// - Parameters:
    ///   - signature: DER, BER or PEM CMS ContentInfo.
    ///   - content: the signed document (bytes or a file; nil for an attached signature).
    ///   - trustAnchors: as in ``verify(signature:content:trustAnchors:policy:)``.
    ///   - policy: validation time, algorithms, key usage, CRLs, `checkRevocation`.
    ///   - fetcher: how OCSP responders and CRL distribution points are reached.
    ///   - revocation: timeouts and size limits of those fetches (its `crls`, `checksOnline`,
    ///     `maximumAnswerAge` and `requiresOCSPNonce` are ignored: the policy decides).
    /// - Throws: `.fileSystem` when a content file cannot be read.
    public static func verify(
        signature: [UInt8],
        content: Document?,
        trustAnchors: [Certificate],
        policy: ValidationPolicy,
        fetcher: any BinaryHTTPFetching,
        revocation: RevocationChecker.Configuration = RevocationChecker.Configuration()
    ) async throws -> VerificationResult {
        func run(_ policy: ValidationPolicy) throws -> VerificationResult {
            switch content?.source {
            case .none: return verify(signature: signature, content: nil, trustAnchors: trustAnchors, policy: policy)
            case .bytes(let bytes)?:
                return verify(signature: signature, content: bytes, trustAnchors: trustAnchors, policy: policy)
            case .file(let url)?:
                return try verify(signature: signature, contentFileAt: url, trustAnchors: trustAnchors, policy: policy)
            }
        }
        guard policy.checkRevocation else { return try run(policy) }
        // The first pass judges with the given CRLs and names every certificate of each path
        // (signer's and TSA's) with its issuer; those left unknown are asked for online.
        let learned = try run(policy)
        var configuration = revocation
        configuration.crls = []
        configuration.checksOnline = true
        configuration.maximumAnswerAge = policy.revocationMaximumAge
        configuration.requiresOCSPNonce = policy.requiresOCSPNonce
        let checker = RevocationChecker(configuration: configuration, fetcher: fetcher)
        // With a validation time given (--at), every answer must be current at it. Without one,
        // "now" is when each answer arrives, and the second pass judges at its own now: a slow
        // network (or a loaded machine) must not make a fresh answer look made after the check.
        let time = policy.validationTime
        var secondPass = policy
        var asked: Set<String> = []
        for entry in learned.signers.flatMap({ $0.revocation?.certificates ?? [] }) {
            let fingerprint = entry.certificate.sha256FingerprintHex
            guard entry.status.state == .unknown, let issuer = entry.issuer, asked.insert(fingerprint).inserted else {
                continue
            }
            var problems: [String] = []
            if let status = await checker.ocspStatus(
                of: entry.certificate,
                issuer: issuer,
                trustAnchors: trustAnchors + (policy.timestampTrustAnchors ?? []),
                at: time,
                problems: &problems
            ) {
                secondPass.onlineRevocationAnswers[fingerprint] = status
                continue
            }
            for (url, crls) in await checker.distributionPointCRLs(of: entry.certificate, problems: &problems) {
                secondPass.fetchedCRLs += crls.map { ($0, "CRL \(url.absoluteString)") }
            }
            if RevocationOpenSSL.ocspURLs(of: entry.certificate).isEmpty
                && RevocationOpenSSL.crlURLs(of: entry.certificate).isEmpty
            {
                problems.append("the certificate names no OCSP responder and no CRL distribution point")
            }
            secondPass.onlineRevocationAnswers[fingerprint] = RevocationStatus(
                state: .unknown,
                source: problems.joined(separator: "; ")
            )
        }
        return try run(secondPass)
    }
}
