internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation

/// The OpenSSL side of ``CMSVerifier``: one synchronous pass, so the error queue belongs to it.
///
/// The structure is read once; the content (embedded, or given beside a detached signature) is
/// streamed once through the digests of every signer; then each SignerInfo goes through the same
/// pipeline (``verifySigner(_:context:contentCheck:)``): signer certificate, signature value,
/// content digest, ESS binding, algorithm policy, key usage, signature timestamp (seam for part B),
/// validity and chain at the validation time or the proven time, revocation (seam for part C).
enum SignedDataVerifier {
    enum Content {
        case none
        case bytes([UInt8])
        case file(URL)
    }

    /// What the content pass found for one signer.
    enum ContentCheck {
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

    /// What is known about one signer before a check fails.
    private struct SignerFacts {
        var signer: Certificate?
        var signingTime: Date?
        var digestAlgorithm: DigestAlgorithm?
        var digestAlgorithmName: String?
        var signatureAlgorithmName: String?
        var format: SignatureFormat = .cms
        var certificates: [Certificate] = []
        var chain: [Certificate] = []
        var chainChecked = false
        var checkedAt: Date?
        var timestamp: VerifiedTimestamp?
        var revocation: RevocationStatus?

        func result(_ failure: VerificationFailure?) -> SignerVerification {
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
                revocation: revocation
            )
        }
    }

    static func verify(
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
        let context = Context(
            certificates: envelope.certificates,
            trustAnchors: trustAnchors,
            policy: policy,
            validationTime: envelope.validationTime,
            signerCount: infos.count
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

    // MARK: One signer

    /// What every signer's checks share, and which signer this is.
    struct Context {
        /// Every certificate the signature carries.
        let certificates: [Certificate]
        /// The trust anchors for the signers' chains.
        let trustAnchors: [Certificate]
        /// The policy.
        let policy: ValidationPolicy
        /// The policy's validation time, read once.
        let validationTime: Date
        /// How many SignerInfos the signature has.
        let signerCount: Int
        /// The position of the signer being checked (0-based).
        var index = 0

        /// The trust anchors for signature timestamps: the policy's, else the signature's.
        var timestampTrustAnchors: [Certificate] { policy.timestampTrustAnchors ?? trustAnchors }

        func forSigner(_ index: Int) -> Context {
            var copy = self
            copy.index = index
            return copy
        }
    }

    private static func verifySigner(
        _ info: OpaquePointer,
        context: Context,
        contentCheck: ContentCheck
    ) -> SignerVerification {
        var facts = SignerFacts()
        facts.certificates = context.certificates
        facts.signingTime = signingTime(info)
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
        let digestNID = algorithmNID(digestAlgor)
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
            return facts.result(
                VerificationFailure(.unsupportedAlgorithm, error.reason, openSSLErrors: error.openSSLErrors)
            )
        } catch {
            parsedSigner = nil
        }
        guard let signer = parsedSigner else {
            return facts.result(
                failure(
                    .signerCertificateMissing,
                    "the signature does not contain the certificate of its signer (it was removed or replaced)"
                )
            )
        }
        facts.signer = signer

        // 1. The algorithms fit together, and the signature value verifies over the signed attributes.
        if let failure = SignerSignatureCheck.failure(
            info,
            signer: signer,
            digestNID: digestNID,
            signatureAlgor: signatureAlgor
        ) {
            return facts.result(failure)
        }

        // 2. The content digest (computed for every signer in one pass over the content).
        switch contentCheck {
        case .verified: break
        case .changed(let errors):
            return facts.result(
                VerificationFailure(
                    .contentChanged,
                    "the document does not match the signature: it was changed after signing",
                    openSSLErrors: errors
                )
            )
        case .missing:
            return facts.result(
                VerificationFailure(.contentMissing, "the signature is detached: give the signed document to check it")
            )
        case .unreadable:
            return facts.result(VerificationFailure(.contentMissing, "the signed document cannot be read"))
        case .damaged(let errors):
            return facts.result(
                VerificationFailure(
                    .malformed,
                    "the signature cannot be checked: its structure is damaged",
                    openSSLErrors: errors
                )
            )
        }

        // 3. ESS signing-certificate(-v2): the certificate is the one the signer signed.
        if let swapped = checkESS(info, signer: signer) { return facts.result(swapped) }

        // 4. Algorithms and key sizes.
        if let weak = weakAlgorithm(
            digestNID: digestNID,
            digestName: facts.digestAlgorithmName,
            signatureAlgor: signatureAlgor,
            signer: signer,
            policy: context.policy.algorithms
        ) {
            return facts.result(weak)
        }

        // 5. The certificate is meant for signing.
        if context.policy.requiresSigningKeyUsage, let unfit = signingPurposeFailure(signer) {
            return facts.result(unfit)
        }

        // 6. The time to check at: a valid trusted timestamp's proven time inside the certificate's
        //    validity, else the validation time. signingTime is a claim and plays no part.
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
        facts.timestamp = signatureTimestamp(for: signerContext)
        var provenTime: Date?
        if let timestamp = facts.timestamp {
            guard timestamp.isValid else {
                let reason = timestamp.failure?.reason ?? "it does not verify"
                return facts.result(
                    VerificationFailure(
                        .timestampInvalid,
                        "the signature timestamp is not valid: \(reason)",
                        openSSLErrors: timestamp.failure?.openSSLErrors ?? []
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
            return facts.result(
                VerificationFailure(
                    .signerExpired,
                    validityReason(
                        signer,
                        at: checkTime,
                        proven: provenTime != nil,
                        claimed: facts.signingTime
                    )
                )
            )
        }

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
                if let weak = weakChainAlgorithm(chain, policy: context.policy.algorithms) { return facts.result(weak) }
            case .failure(let failure):
                return facts.result(failure)
            }
        }

        // 8. Revocation of the signer's and the TSA's paths, only when asked.
        if context.policy.wantsRevocation {
            let verdict = revocationVerdict(
                chain: facts.chainChecked ? facts.chain : [signer],
                chainChecked: facts.chainChecked,
                timestamp: facts.timestamp,
                provenTime: provenTime,
                context: signerContext
            )
            facts.revocation = verdict.status
            if let failure = verdict.failure { return facts.result(failure) }
        }
        return facts.result(nil)
    }

    // MARK: Steps

    private enum ChainOutcome {
        case success([Certificate])
        case failure(VerificationFailure)
    }

    private static func failure(_ code: VerificationFailure.Code, _ reason: String) -> VerificationFailure {
        VerificationFailure(code, reason, openSSLErrors: OpenSSLErrorQueue.drain())
    }

    /// What reading the signature's bytes gave.
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
        case .none:
            return body(nil)
        case .bytes(let bytes):
            return try MemoryBIO.withReadBIO(bytes) { body($0) }
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
        case .none:
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
        return (try? certificates(fromX509Stack: stack)) ?? []
    }

    private static func signingTime(_ signerInfo: OpaquePointer) -> Date? {
        let location = CMS_signed_get_attr_by_NID(signerInfo, NID_pkcs9_signingTime, -1)
        guard location >= 0, let attribute = CMS_signed_get_attr(signerInfo, location),
            let value = X509_ATTRIBUTE_get0_type(attribute, 0)
        else { return nil }
        let type = value.pointee.type
        guard type == V_ASN1_UTCTIME || type == V_ASN1_GENERALIZEDTIME, let time = value.pointee.value.utctime else {
            return nil
        }
        var components = tm()
        guard ASN1_TIME_to_tm(time, &components) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&components)))
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
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The package's ``DigestAlgorithm`` with the algorithm's OID (any that `allSupported` lists).
    private static func digestAlgorithm(_ algor: UnsafeMutablePointer<X509_ALGOR>?) -> DigestAlgorithm? {
        guard let algor else { return nil }
        var object: OpaquePointer?
        X509_ALGOR_get0(&object, nil, nil, algor)
        guard let object else { return nil }
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0 else { return nil }
        let oid = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return DigestAlgorithm.allSupported.first { $0.oid == oid }
    }

    static func digestName(nid: Int32) -> String? {
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

    private static func weakAlgorithm(
        digestNID: Int32,
        digestName name: String?,
        signatureAlgor: UnsafeMutablePointer<X509_ALGOR>?,
        signer: Certificate,
        policy: AlgorithmPolicy
    ) -> VerificationFailure? {
        if let name, policy.refusedDigests.contains(name) {
            return VerificationFailure(
                .weakAlgorithm,
                "the signature uses the message digest \(name.uppercased()), which is no longer secure (collisions "
                    + "can be made)"
            )
        }
        if let nid = signatureDigestNID(signatureAlgor), let inner = digestName(nid: nid),
            policy.refusedDigests.contains(inner)
        {
            let algorithm = algorithmName(signatureAlgor, long: true) ?? inner
            return VerificationFailure(
                .weakAlgorithm,
                "the signature algorithm \(algorithm) uses \(inner.uppercased()), which is no longer secure"
            )
        }
        return weakKey(signer, role: "the signer's", policy: policy)
    }

    private static func weakKey(
        _ certificate: Certificate,
        role: String,
        policy: AlgorithmPolicy
    ) -> VerificationFailure? {
        let algorithm = certificate.publicKeyAlgorithm
        let bits = certificate.publicKeySize
        if algorithm.isRSA, bits < policy.minimumRSAKeyBits {
            return VerificationFailure(
                .weakAlgorithm,
                "\(role) RSA key has \(bits) bits ('\(certificate.subject)'); at least \(policy.minimumRSAKeyBits) "
                    + "are required"
            )
        }
        if algorithm.isEC || algorithm.rawValue == "EC", bits < policy.minimumECKeyBits {
            return VerificationFailure(
                .weakAlgorithm,
                "\(role) \(algorithm) key has \(bits) bits ('\(certificate.subject)'); at least "
                    + "\(policy.minimumECKeyBits) are required"
            )
        }
        return nil
    }

    /// Weak keys and certificate signatures in a verified chain (signer first). The trust anchor at
    /// the end is the caller's choice and is not judged; every certificate below it is.
    private static func weakChainAlgorithm(_ chain: [Certificate], policy: AlgorithmPolicy) -> VerificationFailure? {
        for (index, certificate) in chain.dropLast().enumerated() {
            if index > 0, let weak = weakKey(certificate, role: "an issuing certificate's", policy: policy) {
                return weak
            }
            var digest: Int32 = NID_undef
            guard X509_get_signature_info(certificate.handle.pointer, &digest, nil, nil, nil) == 1 else {
                ERR_clear_error()
                continue
            }
            if let name = digestName(nid: digest), policy.refusedDigests.contains(name) {
                return VerificationFailure(
                    .weakAlgorithm,
                    "the certificate '\(certificate.subject)' is signed with \(name.uppercased()), which is no "
                        + "longer secure"
                )
            }
        }
        return nil
    }

    /// keyUsage (when present) must allow digitalSignature or nonRepudiation; extendedKeyUsage
    /// (when present) must include emailProtection, documentSigning or anyExtendedKeyUsage.
    private static func signingPurposeFailure(_ certificate: Certificate) -> VerificationFailure? {
        if let usage = certificate.keyUsage, usage.isDisjoint(with: [.digitalSignature, .nonRepudiation]) {
            return VerificationFailure(
                .certificateNotForSigning,
                "the signer certificate '\(certificate.subject)' is not meant for signing: its key usage is "
                    + "\(usage.names.joined(separator: ", ")) (digitalSignature or nonRepudiation is needed)"
            )
        }
        let extended = certificate.extendedKeyUsage
        let signing: Set<ExtendedKeyUsage> = [
            .emailProtection, ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.36"), ExtendedKeyUsage(oid: "2.5.29.37.0"),
        ]
        if !extended.isEmpty, signing.isDisjoint(with: extended) {
            return VerificationFailure(
                .certificateNotForSigning,
                "the signer certificate '\(certificate.subject)' is not meant for signing documents: its extended "
                    + "key usage is \(extended.map(\.description).joined(separator: ", ")) (emailProtection, "
                    + "documentSigning or anyExtendedKeyUsage is needed)"
            )
        }
        return nil
    }

    /// Checks ESS signing-certificate(-v2): the signer signed a hash of its own certificate, so a
    /// certificate swapped into the signature (same key or same issuer and serial) is detected.
    /// Only the first ESSCertID(v2) must identify the signer (RFC 5035): later ones (the issuer, …)
    /// are allowed and not required to be present.
    private static func checkESS(_ signerInfo: OpaquePointer, signer: Certificate) -> VerificationFailure? {
        var v1: OpaquePointer?
        var v2: OpaquePointer?
        defer {
            ESS_SIGNING_CERT_free(v1)
            ESS_SIGNING_CERT_V2_free(v2)
        }
        for (nid, isV2) in [(NID_id_smime_aa_signingCertificateV2, true), (NID_id_smime_aa_signingCertificate, false)] {
            guard CMS_signed_get_attr_by_NID(signerInfo, nid, -1) >= 0 else { continue }
            guard let raw = CMS_signed_get0_data_by_OBJ(signerInfo, OBJ_nid2obj(nid), -3, V_ASN1_SEQUENCE),
                let firstOnly = firstCertificateIDOnly(raw.assumingMemoryBound(to: ASN1_STRING.self))
            else {
                return failure(.malformed, "the signing-certificate attribute is damaged")
            }
            firstOnly.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                if isV2 {
                    v2 = d2i_ESS_SIGNING_CERT_V2(nil, &cursor, buffer.count)
                } else {
                    v1 = d2i_ESS_SIGNING_CERT(nil, &cursor, buffer.count)
                }
            }
            if (isV2 ? v2 : v1) == nil { return failure(.malformed, "the signing-certificate attribute is damaged") }
        }
        guard v1 != nil || v2 != nil else { return nil }
        let matches = (try? withX509Stack([signer]) { OSSL_ESS_check_signing_certs(v1, v2, $0, 1) == 1 }) ?? false
        guard matches else {
            return failure(
                .certificateSwapped,
                "the certificate in the signature is not the one the signer signed (ESS signing-certificate "
                    + "mismatch): it was swapped"
            )
        }
        return nil
    }

    /// The DER of a SigningCertificate(V2) value reduced to its first ESSCertID(v2), re-encoded by
    /// OpenSSL's generic ASN.1 codec: `SEQUENCE { certs SEQUENCE OF ESSCertID, policies OPTIONAL }`.
    private static func firstCertificateIDOnly(_ value: UnsafeMutablePointer<ASN1_STRING>) -> [UInt8]? {
        var cursor = UnsafePointer(value.pointee.data)
        guard let outer = d2i_ASN1_SEQUENCE_ANY(nil, &cursor, Int(value.pointee.length)) else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_sk_ASN1_TYPE_pop_free(outer) }
        guard COpenSSLShims_sk_ASN1_TYPE_num(outer) >= 1, let certs = COpenSSLShims_sk_ASN1_TYPE_value(outer, 0),
            certs.pointee.type == V_ASN1_SEQUENCE, let certsString = certs.pointee.value.sequence
        else { return nil }
        var inner = UnsafePointer(certsString.pointee.data)
        guard let identifiers = d2i_ASN1_SEQUENCE_ANY(nil, &inner, Int(certsString.pointee.length)) else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_sk_ASN1_TYPE_pop_free(identifiers) }
        guard COpenSSLShims_sk_ASN1_TYPE_num(identifiers) >= 1 else { return nil }
        while COpenSSLShims_sk_ASN1_TYPE_num(identifiers) > 1 {
            ASN1_TYPE_free(COpenSSLShims_sk_ASN1_TYPE_pop(identifiers))
        }
        while COpenSSLShims_sk_ASN1_TYPE_num(outer) > 1 { ASN1_TYPE_free(COpenSSLShims_sk_ASN1_TYPE_pop(outer)) }
        guard let reduced = encode({ i2d_ASN1_SEQUENCE_ANY(identifiers, &$0) }),
            ASN1_STRING_set(certsString, reduced, Int32(reduced.count)) == 1
        else { return nil }
        return encode { i2d_ASN1_SEQUENCE_ANY(outer, &$0) }
    }

    private static func encode(_ body: (inout UnsafeMutablePointer<UInt8>?) -> Int32) -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        let length = body(&output)
        guard length > 0, let output else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    private static func validityReason(
        _ certificate: Certificate,
        at date: Date,
        proven: Bool,
        claimed: Date?
    ) -> String {
        let when = proven ? "at the time its signature timestamp proves (\(date))" : "at the validation time \(date)"
        if date < certificate.notValidBefore {
            return
                "the signer certificate '\(certificate.subject)' was not yet valid \(when); it is valid from "
                + "\(certificate.notValidBefore)"
        }
        var reason =
            "the signer certificate '\(certificate.subject)' had expired \(when); it was valid until "
            + "\(certificate.notValidAfter)"
        if let claimed, certificate.isValid(at: claimed), !proven {
            reason +=
                ". The signature claims to be made on \(claimed), but a claimed signing time proves nothing: only a "
                + "trusted signature timestamp does"
        }
        return reason
    }

    private static func verifyChain(
        signer: Certificate,
        untrusted: [Certificate],
        anchors: [Certificate],
        at date: Date,
        proven: Bool
    ) -> ChainOutcome {
        guard let store = X509_STORE_new() else {
            return .failure(failure(.untrustedSigner, "could not create a certificate store"))
        }
        defer { X509_STORE_free(store) }
        for anchor in anchors { _ = X509_STORE_add_cert(store, anchor.handle.pointer) }
        ERR_clear_error()
        guard let context = X509_STORE_CTX_new() else {
            return .failure(failure(.untrustedSigner, "could not create a verification context"))
        }
        defer { X509_STORE_CTX_free(context) }
        let outcome: ChainOutcome? = try? withX509Stack(untrusted) { stack in
            guard X509_STORE_CTX_init(context, store, signer.handle.pointer, stack) == 1 else {
                return .failure(failure(.untrustedSigner, "could not start the chain verification"))
            }
            let parameters = X509_STORE_CTX_get0_param(context)
            X509_VERIFY_PARAM_set_time(parameters, time_t(date.timeIntervalSince1970))
            X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
            // Key usage and extended key usage of the signer are judged by the policy, not here.
            _ = X509_STORE_CTX_set_purpose(context, X509_PURPOSE_ANY)
            if X509_verify_cert(context) == 1 {
                guard let chain = X509_STORE_CTX_get1_chain(context) else { return .success([signer]) }
                defer { COpenSSLShims_sk_X509_pop_free(chain) }
                return .success((try? certificates(fromX509Stack: chain)) ?? [signer])
            }
            let code = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let text = String(cString: X509_verify_cert_error_string(Int(code)))
            let subject =
                X509_STORE_CTX_get_current_cert(context).flatMap {
                    try? Certificate(handle: X509Handle(copying: $0)).subject
                } ?? "?"
            let what = depth == 0 ? "the signer certificate" : "the issuing certificate '\(subject)'"
            let when = proven ? "the time its signature timestamp proves (\(date))" : "the validation time \(date)"
            switch code {
            case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
                return .failure(
                    VerificationFailure(
                        .signerExpired,
                        "\(what) was not valid at \(when) (\(text))",
                        openSSLErrors: OpenSSLErrorQueue.drain()
                    )
                )
            default:
                return .failure(
                    VerificationFailure(
                        .untrustedSigner,
                        "the signer's chain does not lead to a trusted certificate: \(what): \(text)",
                        openSSLErrors: OpenSSLErrorQueue.drain()
                    )
                )
            }
        }
        return outcome ?? .failure(failure(.untrustedSigner, "could not build the chain"))
    }
}
