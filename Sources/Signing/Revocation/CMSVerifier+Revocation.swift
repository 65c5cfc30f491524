public import CertificateProviders
import Foundation

extension CMSVerifier {
    /// Verifies a signature like ``verify(signature:content:trustAnchors:policy:)`` and, when the
    /// policy asks for ``ValidationPolicy/checkRevocation``, fetches the revocation answers of each
    /// signer first: OCSP from its certificate's authorityInfoAccess, else the CRLs of its CRL
    /// distribution points, through `fetcher`, with the limits of `revocation`.
    ///
    /// Verification runs twice: once to learn each signer's verified chain (the issuer is needed
    /// to ask), then again with the answers. Without `checkRevocation` nothing is fetched and the
    /// result is that of the synchronous variant.
    ///
    /// - Parameters:
    ///   - signature: DER, BER or PEM CMS ContentInfo.
    ///   - content: the signed document (bytes or a file; nil for an attached signature).
    ///   - trustAnchors: as in ``verify(signature:content:trustAnchors:policy:)``.
    ///   - policy: validation time, algorithms, key usage, CRLs, `checkRevocation`.
    ///   - fetcher: how OCSP responders and CRL distribution points are reached.
    ///   - revocation: timeouts and size limits of those fetches (its `crls` and `checksOnline` are
    ///     ignored: the policy decides).
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
        var firstPass = policy
        firstPass.checkRevocation = false
        firstPass.crls = []
        let learned = try run(firstPass)
        var configuration = revocation
        configuration.crls = []
        configuration.checksOnline = true
        let checker = RevocationChecker(configuration: configuration, fetcher: fetcher)
        var answers: [String: RevocationStatus] = [:]
        for signer in learned.signers {
            guard let certificate = signer.signerCertificate, answers[certificate.sha256FingerprintHex] == nil,
                let issuer = RevocationSeam.issuer(of: certificate, chain: signer.chain, certificates: signer.chain)
            else { continue }
            var problems: [String] = []
            let status =
                await checker.onlineStatus(
                    of: certificate,
                    issuer: issuer,
                    trustAnchors: trustAnchors,
                    problems: &problems
                )
                ?? RevocationStatus(state: .unknown, source: problems.joined(separator: "; "))
            answers[certificate.sha256FingerprintHex] = status
        }
        var secondPass = policy
        secondPass.onlineRevocationAnswers = answers
        return try run(secondPass)
    }
}

/// The revocation seam's work (called from `SignedDataVerifier.revocationStatus`).
enum RevocationSeam {
    /// The issuer of `certificate`: the next certificate of its verified chain, else one of the
    /// signature's certificates whose subject is its issuer and whose key signed it.
    static func issuer(of certificate: Certificate, chain: [Certificate], certificates: [Certificate]) -> Certificate? {
        if chain.count > 1, chain[0] == certificate { return chain[1] }
        return certificates.first {
            $0 != certificate && $0.subject == certificate.issuer && RevocationOpenSSL.isIssued(certificate, by: $0)
        }
    }

    /// The status for the signer of `chain` from the policy's CRLs, then the answers fetched
    /// before verification; `.unknown` naming what was tried when neither decides.
    static func status(
        chain: [Certificate],
        certificates: [Certificate],
        policy: ValidationPolicy,
        validationTime: Date,
        provenTime: Date?
    ) -> RevocationStatus {
        guard let signer = chain.first else {
            return RevocationStatus(state: .unknown, source: "no signer certificate")
        }
        guard let issuer = issuer(of: signer, chain: chain, certificates: certificates) else {
            return RevocationStatus(
                state: .unknown,
                source: "the issuer of '\(signer.subject)' is not known (give trust anchors with --ca)"
            )
        }
        var problems: [String] = []
        var crls: [CertificateRevocationList] = []
        for (index, bytes) in policy.crls.enumerated() {
            do { crls += try CertificateRevocationList.lists(derOrPEM: bytes) } catch let error
                as CertificateProviderError
            {
                problems.append("CRL \(index + 1): \(error.reason)")
            } catch {
                problems.append("CRL \(index + 1): \(error)")
            }
        }
        // CRLs are judged at the validation time; a CRL issued later than a proven time still
        // lists revocations that happened before it, so the proven time only matters to the pipeline.
        if let status = RevocationChecker.offlineStatus(
            of: signer,
            issuer: issuer,
            crls: crls,
            at: validationTime,
            skew: 300,
            problems: &problems
        ) {
            return status
        }
        if let answer = policy.onlineRevocationAnswers[signer.sha256FingerprintHex] {
            if answer.state != .unknown { return answer }
            problems.append(answer.source)
        } else if policy.checkRevocation {
            problems.append("online revocation checking needs the asynchronous CMSVerifier.verify(…, fetcher:)")
        }
        if problems.isEmpty { problems.append("no CRL for '\(signer.issuer)' was given") }
        return RevocationStatus(state: .unknown, source: problems.joined(separator: "; "))
    }
}
