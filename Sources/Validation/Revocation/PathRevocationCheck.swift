import CMS
internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// The revocation status of every certificate of the signer's path and of its time-stamping
/// authority's path, trust anchors excepted, from the policy's CRLs (OpenSSL's RFC 5280 processing)
/// and the OCSP answers and CRLs fetched before verification; then what it means for the signer:
/// `.signerRevoked` (a certificate of the signer's path revoked before the proven time),
/// `.timestampInvalid` (a certificate of the TSA's path revoked), `.revocationUnknown`.
///
/// Called by the per-signer pipeline of ``SignedDataVerifier`` only when the policy wants revocation
/// (`checkRevocation`, or `crls` given). Synchronous, inside the verifier's OpenSSL pass: network
/// answers are fetched before verification by the asynchronous `CMSVerifier.verify(…, fetcher:)` and
/// handed in through the policy.
package enum PathRevocationCheck {
    /// What the pipeline does with the answers.
    package struct Verdict {
        /// The summary, with one status per certificate.
        package let status: RevocationStatus
        /// Why the signer fails, or nil.
        package let failure: VerificationFailure?
    }

    /// One path to check: the certificates above the leaf and the anchors it leads to.
    private struct Path {
        let leaf: Certificate
        let untrusted: [Certificate]
        let anchors: [Certificate]
        let leafRole: CertificateRevocationStatus.Role
        let caRole: CertificateRevocationStatus.Role
    }

    /// The statuses of the signer's path (`chain`: the verified chain, signer first and anchor last,
    /// when `chainChecked`; otherwise just the signer) and of the TSA's path of a valid
    /// `timestamp`; and the verdict: a revoked certificate fails the signer (`.signerRevoked`, or
    /// `.timestampInvalid` for the TSA's path) unless, for the signer's path, `provenTime`
    /// precedes the revocation; an unknown one fails it with `.revocationUnknown`.
    package static func verdict(
        chain: [Certificate],
        chainChecked: Bool,
        timestamp: VerifiedTimestamp?,
        provenTime: Date?,
        context: SignerContext
    ) -> Verdict {
        var problems: [String] = []
        let crls = collectCRLs(context.policy, problems: &problems)
        var paths = [
            chainChecked && chain.count > 1
                ? Path(
                    leaf: chain[0],
                    untrusted: Array(chain.dropFirst().dropLast()) + context.certificates,
                    anchors: [chain[chain.count - 1]],
                    leafRole: .signer,
                    caRole: .signerCA
                )
                : Path(
                    leaf: context.signer,
                    untrusted: chainChecked ? [] : context.certificates,
                    anchors: chainChecked ? [context.signer] : [],
                    leafRole: .signer,
                    caRole: .signerCA
                )
        ]
        if let timestamp, timestamp.isValid, let tsa = timestamp.tsa {
            paths.append(
                Path(
                    leaf: tsa,
                    untrusted: tokenCertificates(context.signerInfo) + context.certificates,
                    anchors: context.timestampTrustAnchors,
                    leafRole: .timestampAuthority,
                    caRole: .timestampAuthorityCA
                )
            )
        }
        var statuses: [CertificateRevocationStatus] = []
        for path in paths {
            statuses += check(path, crls: crls, problems: problems, provenTime: provenTime, context: context)
        }
        let asked = context.policy.checkRevocation || !context.policy.crls.isEmpty
        return judge(statuses, provenTime: provenTime, asked: asked)
    }

    /// The policy's CRLs (parsed; what cannot be read goes into `problems`) and the fetched ones,
    /// each with the words that name it.
    private static func collectCRLs(
        _ policy: ValidationPolicy,
        problems: inout [String]
    ) -> [(crl: CertificateRevocationList, source: String)] {
        var crls: [(crl: CertificateRevocationList, source: String)] = []
        for (index, bytes) in policy.crls.enumerated() {
            do {
                for crl in try CertificateRevocationList.lists(derOrPEM: bytes) {
                    crls.append((crl, "CRL \(index + 1) of '\(crl.issuer)' issued \(crl.thisUpdate)"))
                }
            } catch let error as CertificateProviderError {
                problems.append("CRL \(index + 1): \(error.reason)")
            } catch {
                problems.append("CRL \(index + 1): \(error)")
            }
        }
        let embedded = policy.embeddedCRLs.map { crl in
            (crl, "embedded CRL of '\(crl.issuer)' issued \(crl.thisUpdate)")
        }
        return crls + policy.fetchedCRLs + embedded
    }

    /// The certificates every signature-timestamp token of the SignerInfo carries.
    private static func tokenCertificates(_ signerInfo: OpaquePointer) -> [Certificate] {
        CMSTimestamping.tokens(of: signerInfo).flatMap { der -> [Certificate] in
            der.withUnsafeBufferPointer { buffer -> [Certificate] in
                var cursor = buffer.baseAddress
                guard let cms = d2i_CMS_ContentInfo(nil, &cursor, buffer.count) else { return [] }
                defer { CMS_ContentInfo_free(cms) }
                guard let stack = CMS_get1_certs(cms) else { return [] }
                defer { COpenSSLShims_sk_X509_pop_free(stack) }
                return (try? X509Handle.handles(inStack: stack).map(Certificate.init(handle:))) ?? []
            }
        }
    }

    /// One status per certificate of `path` but its anchor (or its self-signed top).
    private static func check(
        _ path: Path,
        crls: [(crl: CertificateRevocationList, source: String)],
        problems: [String],
        provenTime: Date?,
        context: SignerContext
    ) -> [CertificateRevocationStatus] {
        let check = CRLsAtProofOfExistence.check(
            leaf: path.leaf,
            untrusted: path.untrusted,
            anchors: path.anchors,
            crls: crls.map(\.crl),
            validationTime: context.validationTime,
            provenTime: provenTime
        )
        var count = check.chain.count
        if let top = check.chain.last, check.endsInAnchor || (count > 1 && top.subject == top.issuer) { count -= 1 }
        return (0..<count).map { depth in
            let certificate = check.chain[depth]
            let verdict = check.verdicts[depth]
            let issuer = depth + 1 < check.chain.count ? check.chain[depth + 1] : nil
            let role = depth == 0 ? path.leafRole : path.caRole
            let source =
                crls.first { !$0.crl.isDelta && $0.crl.issuer == certificate.issuer }?.source
                ?? "CRL of '\(certificate.issuer)'"
            let status: RevocationStatus
            switch verdict.state {
            case .good, .revoked:
                status = RevocationStatus(state: verdict.state, revocationTime: verdict.revocationTime, source: source)
            default:
                status = undecided(
                    certificate,
                    issuer: issuer,
                    certificates: context.certificates,
                    verdict: verdict,
                    problems: problems,
                    provenTime: provenTime,
                    policy: context.policy
                )
            }
            return CertificateRevocationStatus(certificate: certificate, role: role, status: status, issuer: issuer)
        }
    }

    /// The OCSP answer fetched before verification when the CRLs do not decide, else `.unknown`
    /// naming what was tried.
    private static func undecided(
        _ certificate: Certificate,
        issuer: Certificate?,
        certificates: [Certificate],
        verdict: RevocationOpenSSL.CRLVerdict,
        problems: [String],
        provenTime: Date?,
        policy: ValidationPolicy
    ) -> RevocationStatus {
        var tried = problems
        if let issuer,
            let answer = embeddedOCSPStatus(
                certificate,
                issuer: issuer,
                certificates: certificates,
                provenTime: provenTime,
                policy: policy,
                tried: &tried
            )
        {
            return answer
        }
        if !policy.crls.isEmpty || !policy.fetchedCRLs.isEmpty || !policy.embeddedCRLs.isEmpty {
            tried.append("CRL of '\(certificate.issuer)': \(verdict.problems.joined(separator: ", "))")
        }
        if let answer = policy.onlineRevocationAnswers[certificate.sha256FingerprintHex] {
            if answer.state != .unknown { return answer }
            tried.append(answer.source)
        } else if policy.checkRevocation {
            tried.append("online revocation checking needs the asynchronous CMSVerifier.verify(…, fetcher:)")
        }
        return .undecided(issuer: certificate.issuer, tried: tried)
    }

    /// The status from an OCSP response the signature carries (B-LT) that answers for
    /// `certificate`: signed by its issuer or a responder it delegated, thisUpdate not before the
    /// certificate's notBefore nor in the future, and judged against the proven time as a CRL is:
    /// issued at or after it, or still current then (EN 319 102-1 §5.6.2.4). Its nextUpdate
    /// passing later changes nothing: the answer is kept evidence of the status at that time.
    private static func embeddedOCSPStatus(
        _ certificate: Certificate,
        issuer: Certificate,
        certificates: [Certificate],
        provenTime: Date?,
        policy: ValidationPolicy,
        tried: inout [String]
    ) -> RevocationStatus? {
        for response in policy.embeddedOCSPResponses {
            do {
                let status = try RevocationOpenSSL.checkEmbeddedOCSPResponse(
                    response,
                    certificate: certificate,
                    issuer: issuer,
                    certificates: certificates,
                    at: policy.validationTime ?? Date(),
                    provenTime: provenTime
                )
                if status.state != .unknown { return status }
                tried.append(status.source)
            } catch let error as CertificateProviderError where !error.reason.contains("does not cover") {
                tried.append("embedded OCSP answer: \(error.reason)")
            } catch {
                continue
            }
        }
        return nil
    }

    /// The summary and the failure: a revoked certificate of the signer's path fails unless the
    /// proven time precedes its revocation; a revoked one of the TSA's path always fails; then an
    /// unknown one fails.
    private static func judge(
        _ statuses: [CertificateRevocationStatus],
        provenTime: Date?,
        asked: Bool
    ) -> Verdict {
        func summary(_ state: RevocationStatus.State, _ entry: CertificateRevocationStatus?) -> RevocationStatus {
            let source =
                entry.map { "'\($0.certificate.subject)': \($0.status.source)" }
                ?? (statuses.isEmpty
                    ? "no certificate to check: the signer's certificate is itself a trust anchor"
                    : statuses.map { "'\($0.certificate.subject)': \($0.status.source)" }.joined(separator: "; "))
            return RevocationStatus(
                state: state,
                revocationTime: entry?.status.revocationTime,
                source: source,
                certificates: statuses
            )
        }
        let isTSA: (CertificateRevocationStatus) -> Bool = {
            $0.role == .timestampAuthority || $0.role == .timestampAuthorityCA
        }
        let revoked = statuses.first { $0.status.state == .revoked }
        let fatal = statuses.first { entry in
            guard entry.status.state == .revoked else { return false }
            if isTSA(entry) { return true }
            guard let provenTime, let time = entry.status.revocationTime else { return true }
            return provenTime >= time
        }
        if let fatal {
            let when = fatal.status.revocationTime.map { " on \($0)" } ?? ""
            let whose = fatal.role == .signer ? "the signer's certificate" : "the certificate"
            let failure =
                isTSA(fatal)
                ? VerificationFailure(
                    .timestampInvalid,
                    "the signature timestamp's authority certificate '\(fatal.certificate.subject)' was revoked"
                        + "\(when) (\(fatal.status.source))",
                    timestampKind: .authorityRevoked
                )
                : VerificationFailure(
                    .signerRevoked,
                    "\(whose) '\(fatal.certificate.subject)' was revoked\(when) (\(fatal.status.source))"
                )
            return Verdict(status: summary(.revoked, fatal), failure: failure)
        }
        // A revocation after the proven time does not fail the signer, but every other
        // certificate still needs an answer.
        if let unknown = statuses.first(where: { $0.status.state != .good && $0.status.state != .revoked }) {
            let why =
                asked
                ? "revocation was asked for and no usable answer could be had for"
                : "the revocation data the signature carries does not decide the status of"
            return Verdict(
                status: revoked.map { summary(.revoked, $0) } ?? summary(.unknown, unknown),
                failure: VerificationFailure(
                    .revocationUnknown,
                    "\(why) '\(unknown.certificate.subject)' (\(unknown.status.source))"
                )
            )
        }
        if let revoked { return Verdict(status: summary(.revoked, revoked), failure: nil) }
        return Verdict(status: summary(.good, nil), failure: nil)
    }
}
