import CMS
internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// The OpenSSL side of ``CMSVerifier``: one synchronous pass, so the error queue belongs to it.
///
/// The structure is read once; the content (embedded, or given beside a detached signature) is
/// streamed once through the digests of every signer; then each SignerInfo goes through the same
/// pipeline (``verifySigner(_:context:contentCheck:)``): signer certificate, signature value,
/// content digest, ESS binding, algorithm policy, key usage, signature timestamp (``SignatureTimestampCheck``),
/// validity and chain at the validation time or the proven time, revocation (``PathRevocationCheck``).
package enum SignedDataVerifier {
    package enum Content {
        case none
        case bytes([UInt8])
        case file(URL)
        /// The detached content's digest with the signer's own algorithm (the content is not here:
        /// a prepared PDF update, a document prepared from its digest).
        case digest([UInt8])
    }

    /// What the content pass found for one signer.
    package enum ContentCheck {
        case verified
        case changed([String])
        case missing
        case unreadable
        case damaged([String])
    }

    /// What is known about the whole signature before a check fails.
    private struct Envelope {
        let validationTime: Date
        var isDetached = false
        var certificates: [Certificate] = []
        var embeddedContent: [UInt8]?

        func result(_ failure: VerificationFailure?, signers: [SignerVerification] = []) -> VerificationResult {
            let first = signers.first
            let fallbackChain = certificates
            return VerificationResult(
                failure: failure,
                signerCertificate: first?.signerCertificate,
                signingTime: first?.signingTime,
                digestAlgorithm: first?.digestAlgorithm,
                format: first?.format,
                isDetached: isDetached,
                chainChecked: first?.chainChecked ?? false,
                chain: first?.chain ?? fallbackChain,
                embeddedContent: embeddedContent,
                signers: signers,
                validationTime: validationTime
            )
        }
    }

    /// Verifies at the policy's time; a CAdES-LTA signature that fails then is validated in the
    /// past (EN 319 102-1 §5.6.2.4): at the time its first archive timestamps prove, with the
    /// archive timestamp chain checked up to the validation time.
    package static func verify(
        signature: [UInt8],
        content: Content,
        trustAnchors: [Certificate],
        policy: ValidationPolicy
    ) -> VerificationResult {
        // The long-term readers (embedded revocation data, archive timestamps) take DER: a PEM
        // signature is checked as the DER inside it (unreadable PEM is refused by the parse).
        let signature =
            signature.starts(with: Array("-----BEGIN".utf8))
            ? ((try? CMSContentInfoHandle.derFromPEM(signature)) ?? nil) ?? signature : signature
        let result = verifyOnce(signature: signature, content: content, trustAnchors: trustAnchors, policy: policy)
        guard !result.isValid, result.format == .cadesLTA, policy.archiveChainTime == nil,
            let proven = ArchiveTimestampCheck.firstArchiveTime(of: signature), proven < result.validationTime
        else { return result }
        var past = policy
        past.validationTime = proven
        past.archiveChainTime = result.validationTime
        var pastResult = verifyOnce(signature: signature, content: content, trustAnchors: trustAnchors, policy: past)
        guard pastResult.isValid else { return result }
        pastResult.pastValidationTime = proven
        return pastResult
    }

    private static func verifyOnce(
        signature: [UInt8],
        content: Content,
        trustAnchors: [Certificate],
        policy: ValidationPolicy
    ) -> VerificationResult {
        GOSTEngine.load()
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        var envelope = Envelope(validationTime: policy.validationTime ?? Date())
        let cms: CMSContentInfoHandle
        switch parse(signature) {
        case .parsed(let handle): cms = handle
        case .refused(let reason): return envelope.result(failure(.malformed, reason))
        }
        if let excess = SignedDataLimits.excess(of: cms) {
            return envelope.result(VerificationFailure(.limitExceeded, excess))
        }
        let infos = signerInfos(cms)
        guard OBJ_obj2nid(CMS_get0_type(cms.pointer)) == NID_pkcs7_signed, !infos.isEmpty else {
            return envelope.result(failure(.malformed, "the CMS structure is not SignedData with a signer"))
        }
        envelope.isDetached = CMS_is_detached(cms.pointer) == 1
        envelope.certificates = embeddedCertificates(cms)
        if !envelope.isDetached, let slot = CMS_get0_content(cms.pointer), let octets = slot.pointee {
            envelope.embeddedContent =
                octets.pointee.data.map { Array(UnsafeBufferPointer(start: $0, count: Int(octets.pointee.length))) }
                ?? []
        }

        // An attached signature is verified over the content it embeds; a document given beside it
        // must be that content, byte for byte.
        var contentFailure: VerificationFailure?
        if let embedded = envelope.embeddedContent {
            switch sameBytes(embedded, content) {
            case true?, nil: break
            case false?:
                contentFailure = VerificationFailure(
                    .contentChanged,
                    "the document given beside the signature is not the content the signature embeds: one of them "
                        + "was changed"
                )
            }
        }

        _ = CMS_set1_signers_certs(cms.pointer, nil, 0)
        ERR_clear_error()
        let contentChecks = checkContent(cms, infos, content: envelope.isDetached ? content : .none)
        let policy = longTermPolicy(policy, signature: signature, infos: infos)
        let document = policy.documentValidationData
        let context = Context(
            certificates: envelope.certificates + document.certificates.filter { !envelope.certificates.contains($0) },
            trustAnchors: trustAnchors,
            policy: policy,
            validationTime: envelope.validationTime,
            signerCount: infos.count,
            eContentType: SignedAttributesCheck.objectText(CMS_get0_eContentType(cms.pointer))
        )
        var signers: [SignerVerification] = []
        for (index, info) in infos.enumerated() {
            signers.append(verifySigner(info, context: context.forSigner(index), contentCheck: contentChecks[index]))
        }
        if let contentFailure { return envelope.result(contentFailure, signers: signers) }
        guard let index = signers.firstIndex(where: { !$0.isValid }), let failure = signers[index].failure else {
            return envelope.result(nil, signers: signers)
        }
        guard signers.count > 1 else { return envelope.result(failure, signers: signers) }
        let who = signers[index].signerCertificate.map { " ('\($0.subject)')" } ?? ""
        return envelope.result(
            VerificationFailure(
                failure.code,
                "signer \(index + 1) of \(signers.count)\(who): \(failure.reason)",
                openSSLErrors: failure.openSSLErrors
            ),
            signers: signers
        )
    }

    /// A failure whose OpenSSL errors are the queue's.
    package static func failure(_ code: VerificationFailure.Code, _ reason: String) -> VerificationFailure {
        VerificationFailure(code, reason, openSSLErrors: OpenSSLErrorQueue.drain())
    }

    /// What reading the signature's bytes gave.
    /// The policy with what the signature carries (B-LT: its CRLs and OCSP responses, used
    /// offline), what the document carries beside it (a PDF's DSS), and its archive timestamps' base.
    private static func longTermPolicy(
        _ policy: ValidationPolicy,
        signature: [UInt8],
        infos: [OpaquePointer]
    ) -> ValidationPolicy {
        var policy = policy
        if let embedded = try? CMSValidationData.contents(of: signature) {
            policy.embeddedCRLs = embedded.crls.compactMap { try? CertificateRevocationList(derEncoded: $0) }
            policy.embeddedOCSPResponses = embedded.ocspResponses + embedded.basicOCSPResponses
        }
        policy.embeddedCRLs += policy.documentValidationData.crls
        policy.embeddedOCSPResponses += policy.documentValidationData.ocspResponses
        // The base reads the whole signature again: only for a signer with an archive timestamp.
        let isArchived = infos.contains { !ArchiveTimestampAttribute.tokens(of: $0).isEmpty }
        policy.archiveTimestampBase = isArchived ? ArchiveTimestampCheck.base(of: signature) : nil
        return policy
    }

    private enum Parsed {
        case parsed(CMSContentInfoHandle)
        case refused(String)
    }

    /// Reads a DER or BER (indefinite-length) ContentInfo, or PEM. Zero bytes may follow it (a PDF's
    /// `/Contents` is padded with them); any other trailing byte means the file is not what it
    /// claims, and is refused.
    private static func parse(_ bytes: [UInt8]) -> Parsed {
        guard !bytes.isEmpty else { return .refused("the signature file is empty") }
        let notCMS = "the data is not a CMS signature (corrupt, truncated or another format)"
        if bytes.starts(with: Array("-----BEGIN".utf8)) {
            let der = try? CMSContentInfoHandle.derFromPEM(bytes)
            guard let der = der ?? nil, der.first == 0x30 else { return .refused(notCMS) }
            return parse(der)
        }
        return bytes.withUnsafeBufferPointer { buffer -> Parsed in
            var cursor = buffer.baseAddress
            guard let raw = d2i_CMS_ContentInfo(nil, &cursor, buffer.count) else { return .refused(notCMS) }
            let handle = CMSContentInfoHandle(takingOwnershipOf: raw)
            guard let cursor, let base = buffer.baseAddress else { return .refused(notCMS) }
            let end = cursor - base
            guard buffer[end...].allSatisfy({ $0 == 0 }) else {
                return .refused(
                    "the signature ends after \(end) bytes and \(buffer.count - end) more bytes follow that are not "
                        + "part of it (only zero padding, as in a PDF's /Contents, may follow a CMS signature)"
                )
            }
            return .parsed(handle)
        }
    }

    private static func signerInfos(_ cms: CMSContentInfoHandle) -> [OpaquePointer] {
        guard let infos = CMS_get0_SignerInfos(cms.pointer) else {
            ERR_clear_error()
            return []
        }
        return (0..<COpenSSLShims_sk_CMS_SignerInfo_num(infos)).compactMap {
            COpenSSLShims_sk_CMS_SignerInfo_value(infos, $0)
        }
    }

    private static func withContentBIO<R>(_ content: Content, _ body: (OpaquePointer?) -> R) throws -> R {
        switch content {
        case .none, .digest:
            return body(nil)
        case .bytes(let bytes):
            return try CertificateProviderError.convertingOpenSSLErrors {
                try MemoryBIO.withReadBIO(bytes) { body($0) }
            }
        case .file(let url):
            guard let bio = BIO_new_file(url.path, "rb") else {
                throw OpenSSLErrorQueue.error(.fileSystem, "cannot open '\(url.path)'")
            }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    /// Whether `content` (when given) holds exactly `embedded`; nil when no content was given.
    private static func sameBytes(_ embedded: [UInt8], _ content: Content) -> Bool? {
        switch content {
        case .none, .digest:
            return nil
        case .bytes(let bytes):
            return bytes == embedded
        case .file(let url):
            guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
            defer { try? handle.close() }
            var offset = 0
            while true {
                // read(upToCount:) answers nil (or empty data) at the end of the file and throws on errors.
                let chunk: Data
                do { chunk = try handle.read(upToCount: 1 << 20) ?? Data() } catch { return false }
                if chunk.isEmpty { return offset == embedded.count }
                guard offset + chunk.count <= embedded.count,
                    chunk.elementsEqual(embedded[offset..<(offset + chunk.count)])
                else { return false }
                offset += chunk.count
            }
        }
    }

    /// Streams the content (the embedded one when `content` is `.none`) once through the digests
    /// of the SignedData and checks each signer's content digest against it.
    private static func checkContent(
        _ cms: CMSContentInfoHandle,
        _ infos: [OpaquePointer],
        content: Content
    ) -> [ContentCheck] {
        if CMS_is_detached(cms.pointer) == 1, case .none = content { return infos.map { _ in .missing } }
        if case .digest(let digest) = content {
            // Each signer's messageDigest must be the given digest; the caller checks the algorithm.
            return infos.map { info in
                guard let (_, signed) = try? ArchiveTimestampAttribute.signedDigest(of: info) else { return .missing }
                return signed == digest ? .verified : .changed([])
            }
        }
        let checks: [ContentCheck]? = try? withContentBIO(content) { source in
            ERR_clear_error()
            guard let chain = CMS_dataInit(cms.pointer, source) else {
                let errors = OpenSSLErrorQueue.drain()
                return infos.map { _ in .damaged(errors) }
            }
            defer {
                // Free the digest BIOs (and the embedded content's BIO), not the caller's source.
                var link: OpaquePointer? = chain
                while let current = link, current != source {
                    link = BIO_pop(current)
                    BIO_free(current)
                }
            }
            // As CMS_verify does: read to the end; a short read shows up as a digest mismatch.
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while BIO_read(chain, &buffer, Int32(buffer.count)) > 0 {}
            return infos.map { info -> ContentCheck in
                var signer: OpaquePointer?
                CMS_SignerInfo_get0_algs(info, nil, &signer, nil, nil)
                guard signer != nil else { return .verified }  // reported as signerCertificateMissing
                if let matches = XOFContentDigest.matches(info, chain: chain) {
                    return matches ? .verified : .changed([])
                }
                ERR_clear_error()
                return CMS_SignerInfo_verify_content(info, chain) == 1 ? .verified : .changed(OpenSSLErrorQueue.drain())
            }
        }
        return checks ?? infos.map { _ in .unreadable }
    }

    private static func embeddedCertificates(_ cms: CMSContentInfoHandle) -> [Certificate] {
        guard let stack = CMS_get1_certs(cms.pointer) else {
            ERR_clear_error()
            return []
        }
        defer { COpenSSLShims_sk_X509_pop_free(stack) }
        return (try? X509Handle.handles(inStack: stack).map(Certificate.init(handle:))) ?? []
    }

    package static func signingTime(_ signerInfo: OpaquePointer) -> Date? {
        let location = CMS_signed_get_attr_by_NID(signerInfo, NID_pkcs9_signingTime, -1)
        guard location >= 0, let attribute = CMS_signed_get_attr(signerInfo, location),
            let value = X509_ATTRIBUTE_get0_type(attribute, 0)
        else { return nil }
        let type = value.pointee.type
        guard type == V_ASN1_UTCTIME || type == V_ASN1_GENERALIZEDTIME, let time = value.pointee.value.utctime else {
            return nil
        }
        return ASN1Time.date(of: OpaquePointer(time))
    }

    static func algorithmNID(_ algor: UnsafeMutablePointer<X509_ALGOR>?) -> Int32 {
        guard let algor else { return NID_undef }
        var object: OpaquePointer?
        X509_ALGOR_get0(&object, nil, nil, algor)
        return OBJ_obj2nid(object)
    }

    /// OpenSSL's short (or long) name of an algorithm, or its dotted OID when OpenSSL does not know it.
    static func algorithmName(_ algor: UnsafeMutablePointer<X509_ALGOR>?, long: Bool) -> String? {
        guard let algor else { return nil }
        var object: OpaquePointer?
        X509_ALGOR_get0(&object, nil, nil, algor)
        guard let object else { return nil }
        let nid = OBJ_obj2nid(object)
        if nid != NID_undef, let name = long ? OBJ_nid2ln(nid) : OBJ_nid2sn(nid) { return String(cString: name) }
        return ASN1Object.dotted(object)
    }

    /// The package's ``DigestAlgorithm`` with the algorithm's OID (any that `allSupported` lists).
    static func digestAlgorithm(_ algor: UnsafeMutablePointer<X509_ALGOR>?) -> DigestAlgorithm? {
        guard let algor else { return nil }
        var object: OpaquePointer?
        X509_ALGOR_get0(&object, nil, nil, algor)
        guard let object, let oid = ASN1Object.dotted(object) else { return nil }
        return DigestAlgorithm.allSupported.first { $0.oid == oid }
    }

    package static func digestName(nid: Int32) -> String? {
        guard nid != NID_undef, let name = OBJ_nid2sn(nid) else { return nil }
        return String(cString: name).lowercased()
    }

    /// The digest inside a signature algorithm: `sha1WithRSAEncryption` → sha1, RSASSA-PSS → its
    /// hashAlgorithm parameter (SHA-1 when absent, RFC 4055); nil for algorithms without one
    /// (`rsaEncryption`, whose digest is the SignerInfo's).
    static func signatureDigestNID(_ algor: UnsafeMutablePointer<X509_ALGOR>?) -> Int32? {
        guard let algor else { return nil }
        let nid = algorithmNID(algor)
        if nid == NID_rsassaPss {
            var object: OpaquePointer?
            var parameterType: Int32 = 0
            var parameter: UnsafeRawPointer?
            X509_ALGOR_get0(&object, &parameterType, &parameter, algor)
            guard parameterType == V_ASN1_SEQUENCE, let parameter else { return NID_sha1 }
            let sequence = parameter.assumingMemoryBound(to: ASN1_STRING.self)
            var cursor = UnsafePointer(sequence.pointee.data)
            guard let parameters = d2i_RSA_PSS_PARAMS(nil, &cursor, Int(sequence.pointee.length)) else {
                ERR_clear_error()
                return nil
            }
            defer { RSA_PSS_PARAMS_free(parameters) }
            guard let hash = parameters.pointee.hashAlgorithm else { return NID_sha1 }
            return algorithmNID(hash)
        }
        var digest: Int32 = NID_undef
        guard OBJ_find_sigid_algs(nid, &digest, nil) == 1, digest != NID_undef else { return nil }
        return digest
    }
}
