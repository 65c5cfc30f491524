import CMS
internal import COpenSSL
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// The per-signer pipeline of ``SignedDataVerifier``: each step either adds what it learnt to the
/// signer's facts or ends the check with the failure that the result reports.
extension SignedDataVerifier {
    /// What every signer's checks share, and which signer this is.
    package struct Context {
        /// Every certificate the signature carries.
        package let certificates: [Certificate]
        /// The trust anchors for the signers' chains.
        package let trustAnchors: [Certificate]
        /// The policy.
        package let policy: ValidationPolicy
        /// The policy's validation time, read once.
        package let validationTime: Date
        /// How many SignerInfos the signature has.
        package let signerCount: Int
        /// The position of the signer being checked (0-based).
        package var index = 0
        /// The encapsulated content's type (dotted OID), which each contentType attribute must name.
        package var eContentType: String? = nil

        /// The trust anchors for signature timestamps: the policy's, else the signature's.
        package var timestampTrustAnchors: [Certificate] { policy.timestampTrustAnchors ?? trustAnchors }

        package func forSigner(_ index: Int) -> Context {
            var copy = self
            copy.index = index
            return copy
        }
    }

    /// What is known about one signer before a check fails.
    package struct SignerFacts {
        package var signer: Certificate?
        package var signingTime: Date?
        package var digestAlgorithm: DigestAlgorithm?
        package var digestAlgorithmName: String?
        package var signatureAlgorithmName: String?
        package var format: SignatureFormat = .cms
        package var certificates: [Certificate] = []
        package var chain: [Certificate] = []
        package var chainChecked = false
        package var checkedAt: Date?
        package var timestamp: VerifiedTimestamp?
        package var revocation: RevocationStatus?
        package var signatureValue: [UInt8] = []

        package func result(_ failure: VerificationFailure?) -> SignerVerification {
            let fallbackChain = signer.map { signer in [signer] + certificates.filter { $0 != signer } } ?? certificates
            return SignerVerification(
                failure: failure,
                signerCertificate: signer,
                signingTime: signingTime,
                digestAlgorithm: digestAlgorithm,
                digestAlgorithmName: digestAlgorithmName,
                signatureAlgorithmName: signatureAlgorithmName,
                format: format,
                chainChecked: chainChecked && failure == nil,
                chain: failure == nil && chainChecked ? chain : fallbackChain,
                checkedAt: checkedAt,
                timestamp: timestamp,
                revocation: revocation,
                signatureValue: signatureValue
            )
        }
    }

    /// The check that ended a signer's pipeline.
    package struct SignerCheckFailed: Error {
        package let failure: VerificationFailure
    }

    /// The signer's certificate and algorithms, as the SignerInfo names them.
    package struct SignerAlgorithms {
        package let signer: Certificate
        package let digestNID: Int32
        let signatureAlgor: UnsafeMutablePointer<X509_ALGOR>?
    }

    package static func verifySigner(
        _ info: OpaquePointer,
        context: Context,
        contentCheck: ContentCheck
    ) -> SignerVerification {
        var facts = SignerFacts()
        facts.certificates = context.certificates
        facts.signingTime = signingTime(info)
        facts.signatureValue = CMSTimestamping.signatureValue(of: info)
        do throws(SignerCheckFailed) {
            let algorithms = try readSigner(info, facts: &facts)
            facts.format = longTermFormat(info, facts.format, policy: context.policy)
            let signer = algorithms.signer
            // 0. One contentType (the content's type) and one messageDigest among the signed attributes.
            if let malformed = SignedAttributesCheck.failure(info, eContentType: context.eContentType) {
                throw SignerCheckFailed(failure: malformed)
            }
            // 1. The algorithms fit together, and the signature value verifies over the signed attributes.
            if let failure = SignerSignatureCheck.failure(
                info,
                signer: signer,
                digestNID: algorithms.digestNID,
                signatureAlgor: algorithms.signatureAlgor
            ) {
                throw SignerCheckFailed(failure: failure)
            }
            // 2. The content digest (computed for every signer in one pass over the content).
            if let failure = contentFailure(contentCheck) { throw SignerCheckFailed(failure: failure) }
            // 3. ESS signing-certificate(-v2): the certificate is the one the signer signed.
            if let swapped = checkESS(info, signer: signer) { throw SignerCheckFailed(failure: swapped) }
            // 4. Algorithms and key sizes.
            if let weak = weakAlgorithm(
                digestNID: algorithms.digestNID,
                digestName: facts.digestAlgorithmName,
                signatureAlgor: algorithms.signatureAlgor,
                signer: signer,
                policy: context.policy.algorithms
            ) {
                throw SignerCheckFailed(failure: weak)
            }
            // 5. The certificate is meant for signing.
            if context.policy.requiresSigningKeyUsage, let unfit = signingPurposeFailure(signer) {
                throw SignerCheckFailed(failure: unfit)
            }
            try checkTrust(info, signer: signer, context: context, facts: &facts)
            return facts.result(nil)
        } catch {
            return facts.result(error.failure)
        }
    }

    /// CAdES-LTA when the signer carries an archive-time-stamp-v3, CAdES-LT when a CAdES-T
    /// signature carries revocation data; else `format` as read.
    private static func longTermFormat(
        _ info: OpaquePointer,
        _ format: SignatureFormat,
        policy: ValidationPolicy
    ) -> SignatureFormat {
        guard format == .cadesT else { return format }
        if !ArchiveTimestampAttribute.tokens(of: info).isEmpty { return .cadesLTA }
        return policy.embeddedCRLs.isEmpty && policy.embeddedOCSPResponses.isEmpty ? format : .cadesLT
    }

    /// Reads the signer's format, algorithms and certificate into `facts`.
    /// - Throws: `SignerCheckFailed` when the certificate is missing or an algorithm is not available.
    private static func readSigner(
        _ info: OpaquePointer,
        facts: inout SignerFacts
    ) throws(SignerCheckFailed)
        -> SignerAlgorithms
    {
        let hasESS =
            CMS_signed_get_attr_by_NID(info, NID_id_smime_aa_signingCertificateV2, -1) >= 0
            || CMS_signed_get_attr_by_NID(info, NID_id_smime_aa_signingCertificate, -1) >= 0
        // CAdES-T: CAdES-BES with a signature timestamp (an unsigned attribute), as `sign --tsa` and
        // `timestamp` name it; the timestamp's own check comes later.
        let hasTimestamp = CMS_unsigned_get_attr_by_NID(info, NID_id_smime_aa_timeStampToken, -1) >= 0
        facts.format = hasESS ? (hasTimestamp ? .cadesT : .cadesBES) : .cms

        var signerX509: OpaquePointer?
        var digestAlgor: UnsafeMutablePointer<X509_ALGOR>?
        var signatureAlgor: UnsafeMutablePointer<X509_ALGOR>?
        CMS_SignerInfo_get0_algs(info, nil, &signerX509, &digestAlgor, &signatureAlgor)
        facts.digestAlgorithm = digestAlgorithm(digestAlgor)
        facts.digestAlgorithmName = algorithmName(digestAlgor, long: false)?.lowercased()
        facts.signatureAlgorithmName = algorithmName(signatureAlgor, long: true)
        var parsedSigner: Certificate?
        do {
            parsedSigner = try signerX509.map { try Certificate(handle: X509Handle(copying: $0)) }
            try facts.digestAlgorithm?.checkAvailable()
        } catch let error as CertificateProviderError where error.code == .unsupportedAlgorithm {
            // The signer's key or the digest needs an algorithm this OpenSSL lacks (GOST without
            // the gost engine): say what to install rather than "damaged" or "missing".
            throw SignerCheckFailed(
                failure: VerificationFailure(.unsupportedAlgorithm, error.reason, openSSLErrors: error.openSSLErrors)
            )
        } catch {
            parsedSigner = nil
        }
        guard let signer = parsedSigner else {
            throw SignerCheckFailed(
                failure: failure(
                    .signerCertificateMissing,
                    "the signature does not contain the certificate of its signer (it was removed or replaced)"
                )
            )
        }
        facts.signer = signer
        return SignerAlgorithms(signer: signer, digestNID: algorithmNID(digestAlgor), signatureAlgor: signatureAlgor)
    }

    /// The failure the content pass found for this signer, or nil when its digest matched.
    private static func contentFailure(_ contentCheck: ContentCheck) -> VerificationFailure? {
        switch contentCheck {
        case .verified:
            return nil
        case .changed(let errors):
            return VerificationFailure(
                .contentChanged,
                "the document does not match the signature: it was changed after signing",
                openSSLErrors: errors
            )
        case .missing:
            return VerificationFailure(
                .contentMissing,
                "the signature is detached: give the signed document to check it"
            )
        case .unreadable:
            return VerificationFailure(.contentMissing, "the signed document cannot be read")
        case .damaged(let errors):
            return VerificationFailure(
                .malformed,
                "the signature cannot be checked: its structure is damaged",
                openSSLErrors: errors
            )
        }
    }

    /// Steps 6–8: the signature timestamp and the time to check at, the signer's validity then,
    /// the chain at the same time, and revocation when the policy asks for it.
    private static func checkTrust(
        _ info: OpaquePointer,
        signer: Certificate,
        context: Context,
        facts: inout SignerFacts
    ) throws(SignerCheckFailed) {
        let signerContext = SignerContext(
            signerInfo: info,
            signer: signer,
            index: context.index,
            certificates: context.certificates,
            trustAnchors: context.trustAnchors,
            timestampTrustAnchors: context.timestampTrustAnchors,
            policy: context.policy,
            validationTime: context.validationTime
        )
        let provenTime = try checkTime(signer: signer, context: signerContext, facts: &facts)
        let checkTime = facts.checkedAt ?? context.validationTime
        // 7. The chain, at the same time.
        if !context.trustAnchors.isEmpty {
            switch verifyChain(
                signer: signer,
                untrusted: context.certificates,
                anchors: context.trustAnchors,
                at: checkTime,
                proven: provenTime != nil
            ) {
            case .success(let chain):
                facts.chain = chain
                facts.chainChecked = true
                if let weak = weakChainAlgorithm(chain, policy: context.policy.algorithms) {
                    throw SignerCheckFailed(failure: weak)
                }
            case .failure(let failure):
                throw SignerCheckFailed(failure: failure)
            }
        }
        // 8. B-LTA: every archive timestamp covers the signature and its validation data.
        if let failure = ArchiveTimestampCheck.failure(for: signerContext) { throw SignerCheckFailed(failure: failure) }
        // 9. Revocation of the signer's and the TSA's paths, only when asked (or carried).
        if context.policy.wantsRevocation {
            let verdict = PathRevocationCheck.verdict(
                chain: facts.chainChecked ? facts.chain : [signer],
                chainChecked: facts.chainChecked,
                timestamp: facts.timestamp,
                provenTime: provenTime,
                context: signerContext
            )
            facts.revocation = verdict.status
            if let failure = verdict.failure { throw SignerCheckFailed(failure: failure) }
        }
    }

    /// Step 6: the time to check at is a valid trusted timestamp's proven time inside the
    /// certificate's validity, else the validation time (signingTime is a claim and plays no
    /// part); the signer must be valid then. Sets `facts.timestamp` and `facts.checkedAt`.
    /// - Returns: the proven time, if a timestamp proves one.
    private static func checkTime(
        signer: Certificate,
        context: SignerContext,
        facts: inout SignerFacts
    ) throws(SignerCheckFailed) -> Date? {
        facts.timestamp = SignatureTimestampCheck.timestamp(for: context)
        var provenTime: Date?
        if let timestamp = facts.timestamp {
            guard timestamp.isValid else {
                let reason = timestamp.failure?.reason ?? "it does not verify"
                throw SignerCheckFailed(
                    failure: VerificationFailure(
                        timestamp.failure?.code ?? .timestampInvalid,
                        "the signature timestamp is not valid: \(reason)",
                        openSSLErrors: timestamp.failure?.openSSLErrors ?? [],
                        timestampKind: timestamp.failure?.timestampKind ?? .other
                    )
                )
            }
            if signer.isValid(at: timestamp.time) && timestamp.time <= context.validationTime {
                provenTime = timestamp.time
            }
        }
        let checkTime = provenTime ?? context.validationTime
        facts.checkedAt = checkTime
        if !signer.isValid(at: checkTime) {
            throw SignerCheckFailed(
                failure: VerificationFailure(
                    .signerExpired,
                    validityReason(signer, at: checkTime, proven: provenTime != nil, claimed: facts.signingTime)
                )
            )
        }
        return provenTime
    }
}
