import CMS
internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation

/// Checks the `archive-time-stamp-v3` attributes of a SignerInfo (CAdES B-LTA) as EU DSS does: the
/// message imprint of each token is recomputed over the eContentType, the signed content's hash
/// (the signer's messageDigest), the SignerInfo's fields from version to signature and the
/// `ats-hash-index-v3` value the token carries; then the token's signature, TSA certificate and
/// chain to the TSA trust anchors are checked.
package enum ArchiveTimestampCheck {
    /// What the checks need from the whole signature, read once.
    package struct Base: Sendable {
        /// DER of the eContentType OID.
        package let contentType: [UInt8]
        /// For each SignerInfo (in order), its fields from version to signature.
        package let signerFields: [[UInt8]]
        /// The DER of each element of SignedData.certificates and SignedData.crls.
        package let contents: CMSValidationData.Contents
    }

    /// The base of a DER signature, or nil when it has no archive timestamp or is not DER.
    package static func base(of signature: [UInt8]) -> Base? {
        guard let cms = try? CMSTimestamping.parse(signature), let infos = try? CMSTimestamping.signerInfos(of: cms),
            infos.contains(where: { !ArchiveTimestampAttribute.tokens(of: $0).isEmpty }),
            let contentType = try? CMSValidationData.copyDER({ i2d_ASN1_OBJECT(CMS_get0_eContentType(cms.pointer), $0) }
            ),
            let fields = try? (0..<infos.count).map({
                try ArchiveTimestampAttribute.signerFields(signature, signerIndex: $0)
            }),
            let contents = try? CMSValidationData.contents(of: signature)
        else { return nil }
        return Base(contentType: contentType, signerFields: fields, contents: contents)
    }

    /// Why an archive timestamp of the SignerInfo in `context` is not valid, or nil when each is
    /// (or it has none).
    package static func failure(for context: SignerContext) -> VerificationFailure? {
        let tokens = ArchiveTimestampAttribute.tokens(of: context.signerInfo)
        guard !tokens.isEmpty else { return nil }
        func invalid(_ reason: String, _ kind: TimestampFailureKind = .other) -> VerificationFailure {
            VerificationFailure(.timestampInvalid, reason, timestampKind: kind)
        }
        guard let base = context.policy.archiveTimestampBase, context.index < base.signerFields.count else {
            return invalid("the archive timestamps cannot be checked: the signature is not DER CMS")
        }
        // Each archive timestamp must verify when the next one was applied (its TSA's certificate
        // valid then), the last one at the validation time (EN 319 102-1 §5.6.2.4).
        let times = tokens.map { TimestampOpenSSL.facts(ofToken: $0)?.time }
        let now = context.policy.archiveChainTime ?? context.validationTime
        for (number, token) in tokens.enumerated() {
            let name = "archive timestamp \(number + 1) of \(tokens.count)"
            let checkTime = number + 1 < tokens.count ? (times[number + 1] ?? now) : now
            guard let index = ArchiveTimestampAttribute.hashIndex(ofToken: token) else {
                return invalid("\(name) carries no ats-hash-index-v3 (an older archive timestamp form is not checked)")
            }
            guard let (algorithm, digest) = try? ArchiveTimestampAttribute.signedDigest(of: context.signerInfo),
                TimestampOpenSSL.facts(ofToken: token)?.imprintAlgorithm.lowercased() == algorithm.rawValue
            else {
                return invalid("\(name) hashes with another digest than the signer's: it cannot be checked")
            }
            if let (missing, kind) = uncovered(index, base: base, signerInfo: context.signerInfo) {
                return invalid("\(name): \(missing)", kind)
            }
            let data = base.contentType + digest + base.signerFields[context.index] + index
            let check = TimestampOpenSSL.verifyToken(
                token,
                data: data,
                trustAnchors: TimestampAnchors.anchors(context.timestampTrustAnchors, token: token),
                at: checkTime,
                skew: 300,
                what: "the \(name)",
                covering: "the signature and its validation data (ats-hash-index-v3)"
            )
            if let reason = check.failureReason { return invalid(reason, check.failureKind ?? .other) }
        }
        return nil
    }

    /// The time the first archive timestamps of `signature` prove (the latest among its signers'
    /// first ones), or nil when a signer has none.
    package static func firstArchiveTime(of signature: [UInt8]) -> Date? {
        guard let cms = try? CMSTimestamping.parse(signature), let infos = try? CMSTimestamping.signerInfos(of: cms)
        else { return nil }
        let firsts = infos.map { ArchiveTimestampAttribute.tokens(of: $0).first.flatMap(TimestampOpenSSL.facts)?.time }
        guard !firsts.isEmpty, !firsts.contains(nil) else { return nil }
        return firsts.compactMap { $0 }.max()
    }

    /// Why the index does not match the signature (an entry whose certificate, revocation entry or
    /// unsigned attribute value is gone or changed: the token's imprint no longer matches what it
    /// covers), or that it cannot be read; nil when every entry is found. Elements added after the
    /// archive timestamp are not in its index, and need not be.
    private static func uncovered(
        _ index: [UInt8],
        base: Base,
        signerInfo: OpaquePointer
    ) -> (String, TimestampFailureKind)? {
        let lists = [
            ("certificate", base.contents.certificates),
            ("revocation entry", base.contents.revocationEntries),
            ("unsigned attribute", (try? ArchiveTimestampAttribute.unsignedAttributeOctets(of: signerInfo)) ?? []),
        ]
        for (which, (what, present)) in lists.enumerated() {
            var nid: Int32 = 0
            var output: UnsafeMutablePointer<UInt8>?
            let length = index.withUnsafeBufferPointer {
                COpenSSLShims_ATSHashIndexV3_decode($0.baseAddress, $0.count, Int32(which), &nid, &output)
            }
            defer { if let output { COpenSSLShims_OPENSSL_free(output) } }
            let oid = CMSValidationData.objectIdentifier(OBJ_nid2obj(nid))
            guard length >= 0, let algorithm = DigestAlgorithm.allSupported.first(where: { $0.oid == oid }) else {
                return ("its ats-hash-index-v3 cannot be read (hashIndAlgorithm must be written)", .other)
            }
            let hashes = Set(present.map { algorithm.hash($0) })
            let size = algorithm.outputByteCount
            guard let output, length > 0 else { continue }
            let listed = UnsafeBufferPointer(start: output, count: Int(length))
            for start in stride(from: 0, to: Int(length), by: size)
            where !hashes.contains(Array(listed[start..<min(start + size, Int(length))])) {
                return ("a \(what) its ats-hash-index-v3 covers is missing or was changed", .imprintMismatch)
            }
        }
        return nil
    }
}
