internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation

/// The OpenSSL side of ``CMSVerifier``: one synchronous pass, so the error queue belongs to it.
enum SignedDataVerifier {
    enum Content {
        case none
        case bytes([UInt8])
        case file(URL)
    }

    /// What is known about the signature before a check fails.
    private struct Facts {
        var signer: Certificate?
        var signingTime: Date?
        var digestAlgorithm: DigestAlgorithm?
        var format: SignatureFormat?
        var isDetached = false
        var certificates: [Certificate] = []
        var chain: [Certificate] = []
        var chainChecked = false
        var embeddedContent: [UInt8]?

        func result(_ failure: VerificationFailure?) -> VerificationResult {
            let fallbackChain = signer.map { signer in [signer] + certificates.filter { $0 != signer } } ?? certificates
            return VerificationResult(failure: failure, signerCertificate: signer, signingTime: signingTime, digestAlgorithm: digestAlgorithm,
                                      format: format, isDetached: isDetached, chainChecked: chainChecked && failure == nil,
                                      chain: failure == nil && chainChecked ? chain : fallbackChain, embeddedContent: embeddedContent)
        }
    }

    static func verify(signature: [UInt8], content: Content, trustAnchors: [Certificate]) -> VerificationResult {
        GOSTEngine.load()
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        var facts = Facts()
        guard let cms = parse(signature) else {
            return facts.result(failure(.malformed, signature.isEmpty ? "the signature file is empty"
                                            : "the data is not a CMS signature (corrupt, truncated or another format)"))
        }
        guard OBJ_obj2nid(CMS_get0_type(cms.pointer)) == NID_pkcs7_signed, let signerInfo = cms.firstSignerInfo else {
            return facts.result(failure(.malformed, "the CMS structure is not SignedData with a signer"))
        }
        facts.isDetached = CMS_is_detached(cms.pointer) == 1
        facts.certificates = embeddedCertificates(cms)
        facts.signingTime = signingTime(signerInfo)
        let hasESS = CMS_signed_get_attr_by_NID(signerInfo, NID_id_smime_aa_signingCertificateV2, -1) >= 0
            || CMS_signed_get_attr_by_NID(signerInfo, NID_id_smime_aa_signingCertificate, -1) >= 0
        facts.format = hasESS ? .cadesBES : .cms
        if !facts.isDetached, let slot = CMS_get0_content(cms.pointer), let octets = slot.pointee {
            facts.embeddedContent = octets.pointee.data.map { Array(UnsafeBufferPointer(start: $0, count: Int(octets.pointee.length))) } ?? []
        }

        _ = CMS_set1_signers_certs(cms.pointer, nil, 0)
        ERR_clear_error()
        var signerX509: OpaquePointer?
        var digestAlgor: UnsafeMutablePointer<X509_ALGOR>?
        CMS_SignerInfo_get0_algs(signerInfo, nil, &signerX509, &digestAlgor, nil)
        facts.digestAlgorithm = digestAlgorithm(digestAlgor)
        var parsedSigner: Certificate?
        do {
            parsedSigner = try signerX509.map { try Certificate(handle: X509Handle(copying: $0)) }
            try facts.digestAlgorithm?.checkAvailable()
        } catch let error as CertificateProviderError where error.code == .unsupportedAlgorithm {
            // The signer's key or the digest needs an algorithm this OpenSSL lacks (GOST without
            // the gost engine): say what to install rather than "damaged" or "missing".
            return facts.result(VerificationFailure(.unsupportedAlgorithm, error.reason, openSSLErrors: error.openSSLErrors))
        } catch {
            parsedSigner = nil
        }
        guard let signer = parsedSigner else {
            return facts.result(failure(.signerCertificateMissing,
                                        "the signature does not contain the certificate of its signer (it was removed or replaced)"))
        }
        facts.signer = signer

        // Signature value and content digest (the chain is checked below, where errors are precise).
        if facts.isDetached, case .none = content {
            return facts.result(failure(.contentMissing, "the signature is detached: give the signed document to check it"))
        }
        let verified: Bool
        do {
            verified = try withContentBIO(content) { bio in
                CMS_verify(cms.pointer, nil, nil, bio, nil, UInt32(CMS_BINARY | CMS_NO_SIGNER_CERT_VERIFY)) == 1
            }
        } catch {
            return facts.result(failure(.contentMissing, "the signed document cannot be read"))
        }
        if !verified {
            let entries = OpenSSLErrorQueue.drainEntries()
            let texts = entries.map(\.text)
            let reasons = Set(entries.filter { $0.library == ERR_LIB_CMS }.map(\.reason))
            if reasons.contains(CMS_R_CONTENT_VERIFY_ERROR) {
                return facts.result(VerificationFailure(.contentChanged, "the document does not match the signature: it was changed after signing",
                                                        openSSLErrors: texts))
            }
            if reasons.contains(CMS_R_NO_CONTENT) {
                return facts.result(VerificationFailure(.contentMissing, "the signature is detached: give the signed document to check it", openSSLErrors: texts))
            }
            if reasons.contains(CMS_R_VERIFICATION_FAILURE) {
                return facts.result(VerificationFailure(.signatureInvalid, "the signature value does not verify with the signer's key: the signature was altered",
                                                        openSSLErrors: texts))
            }
            return facts.result(VerificationFailure(.malformed, "the signature cannot be checked: its structure is damaged", openSSLErrors: texts))
        }

        if let swapped = checkESS(signerInfo, signer: signer) { return facts.result(swapped) }

        let checkTime = facts.signingTime ?? Date()
        if !signer.isValid(at: checkTime) {
            return facts.result(VerificationFailure(.signerExpired, validityReason(signer, at: checkTime, signed: facts.signingTime != nil)))
        }

        guard !trustAnchors.isEmpty else { return facts.result(nil) }
        facts.chainChecked = true
        switch verifyChain(signer: signer, untrusted: facts.certificates, anchors: trustAnchors, at: checkTime) {
        case .success(let chain):
            facts.chain = chain
            return facts.result(nil)
        case .failure(let failure):
            return facts.result(failure)
        }
    }

    // MARK: Steps

    private enum ChainOutcome {
        case success([Certificate])
        case failure(VerificationFailure)
    }

    private static func failure(_ code: VerificationFailure.Code, _ reason: String) -> VerificationFailure {
        VerificationFailure(code, reason, openSSLErrors: OpenSSLErrorQueue.drain())
    }

    private static func parse(_ bytes: [UInt8]) -> CMSContentInfoHandle? {
        guard !bytes.isEmpty else { return nil }
        if bytes.starts(with: Array("-----BEGIN".utf8)) {
            let der: [UInt8]? = try? MemoryBIO.withReadBIO(bytes) { bio in
                var name: UnsafeMutablePointer<CChar>?
                var header: UnsafeMutablePointer<CChar>?
                var data: UnsafeMutablePointer<UInt8>?
                var length = 0
                guard PEM_read_bio(bio, &name, &header, &data, &length) == 1 else { return nil }
                defer {
                    COpenSSLShims_OPENSSL_free(name)
                    COpenSSLShims_OPENSSL_free(header)
                    COpenSSLShims_OPENSSL_free(data)
                }
                guard let name, ["CMS", "PKCS7"].contains(String(cString: name)), let data else { return nil }
                return Array(UnsafeBufferPointer(start: data, count: length))
            }
            guard let der = der ?? nil, der.first == 0x30 else { return nil }
            return parse(der)
        }
        return bytes.withUnsafeBufferPointer { buffer -> CMSContentInfoHandle? in
            var cursor = buffer.baseAddress
            guard let raw = d2i_CMS_ContentInfo(nil, &cursor, buffer.count) else { return nil }
            let handle = CMSContentInfoHandle(takingOwnershipOf: raw)
            // Trailing bytes after the structure mean the file is not what it claims.
            guard let cursor, let base = buffer.baseAddress, cursor - base == buffer.count else { return nil }
            return handle
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

    private static func embeddedCertificates(_ cms: CMSContentInfoHandle) -> [Certificate] {
        guard let stack = CMS_get1_certs(cms.pointer) else { ERR_clear_error(); return [] }
        defer { COpenSSLShims_sk_X509_pop_free(stack) }
        return (try? certificates(fromX509Stack: stack)) ?? []
    }

    private static func signingTime(_ signerInfo: OpaquePointer) -> Date? {
        let location = CMS_signed_get_attr_by_NID(signerInfo, NID_pkcs9_signingTime, -1)
        guard location >= 0, let attribute = CMS_signed_get_attr(signerInfo, location),
              let value = X509_ATTRIBUTE_get0_type(attribute, 0) else { return nil }
        let type = value.pointee.type
        guard type == V_ASN1_UTCTIME || type == V_ASN1_GENERALIZEDTIME, let time = value.pointee.value.utctime else { return nil }
        var components = tm()
        guard ASN1_TIME_to_tm(time, &components) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&components)))
    }

    private static func digestAlgorithm(_ algor: UnsafeMutablePointer<X509_ALGOR>?) -> DigestAlgorithm? {
        guard let algor else { return nil }
        var object: OpaquePointer?
        X509_ALGOR_get0(&object, nil, nil, algor)
        switch OBJ_obj2nid(object) {
        case NID_sha256: return .sha256
        case NID_sha384: return .sha384
        case NID_sha512: return .sha512
        case NID_id_GostR3411_2012_256: return .streebog256
        case NID_id_GostR3411_2012_512: return .streebog512
        default: return nil
        }
    }

    /// Checks ESS signing-certificate(-v2): the signer signed a hash of its own certificate, so a
    /// certificate swapped into the signature (same key or same issuer and serial) is detected.
    private static func checkESS(_ signerInfo: OpaquePointer, signer: Certificate) -> VerificationFailure? {
        var v1: OpaquePointer?
        var v2: OpaquePointer?
        defer {
            ESS_SIGNING_CERT_free(v1)
            ESS_SIGNING_CERT_V2_free(v2)
        }
        for (nid, isV2) in [(NID_id_smime_aa_signingCertificateV2, true), (NID_id_smime_aa_signingCertificate, false)] {
            guard CMS_signed_get_attr_by_NID(signerInfo, nid, -1) >= 0 else { continue }
            guard let raw = CMS_signed_get0_data_by_OBJ(signerInfo, OBJ_nid2obj(nid), -3, V_ASN1_SEQUENCE) else {
                return failure(.malformed, "the signing-certificate attribute is damaged")
            }
            let sequence = raw.assumingMemoryBound(to: ASN1_STRING.self)
            var cursor = UnsafePointer(sequence.pointee.data)
            let length = Int(sequence.pointee.length)
            if isV2 { v2 = d2i_ESS_SIGNING_CERT_V2(nil, &cursor, length) } else { v1 = d2i_ESS_SIGNING_CERT(nil, &cursor, length) }
            if (isV2 ? v2 : v1) == nil { return failure(.malformed, "the signing-certificate attribute is damaged") }
        }
        guard v1 != nil || v2 != nil else { return nil }
        let matches = (try? withX509Stack([signer]) { OSSL_ESS_check_signing_certs(v1, v2, $0, 1) == 1 }) ?? false
        guard matches else {
            return failure(.certificateSwapped,
                           "the certificate in the signature is not the one the signer signed (ESS signing-certificate mismatch): it was swapped")
        }
        return nil
    }

    private static func validityReason(_ certificate: Certificate, at date: Date, signed: Bool) -> String {
        let when = signed ? "at the signing time \(date)" : "now (the signature has no signing time)"
        if date < certificate.notValidBefore {
            return "the signer certificate '\(certificate.subject)' was not yet valid \(when); it is valid from \(certificate.notValidBefore)"
        }
        return "the signer certificate '\(certificate.subject)' had expired \(when); it was valid until \(certificate.notValidAfter)"
    }

    private static func verifyChain(signer: Certificate, untrusted: [Certificate], anchors: [Certificate], at date: Date) -> ChainOutcome {
        guard let store = X509_STORE_new() else { return .failure(failure(.untrustedSigner, "could not create a certificate store")) }
        defer { X509_STORE_free(store) }
        for anchor in anchors { _ = X509_STORE_add_cert(store, anchor.handle.pointer) }
        ERR_clear_error()
        guard let context = X509_STORE_CTX_new() else { return .failure(failure(.untrustedSigner, "could not create a verification context")) }
        defer { X509_STORE_CTX_free(context) }
        let outcome: ChainOutcome? = try? withX509Stack(untrusted) { stack in
            guard X509_STORE_CTX_init(context, store, signer.handle.pointer, stack) == 1 else {
                return .failure(failure(.untrustedSigner, "could not start the chain verification"))
            }
            let parameters = X509_STORE_CTX_get0_param(context)
            X509_VERIFY_PARAM_set_time(parameters, time_t(date.timeIntervalSince1970))
            X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
            _ = X509_STORE_CTX_set_purpose(context, X509_PURPOSE_ANY)
            if X509_verify_cert(context) == 1 {
                guard let chain = X509_STORE_CTX_get1_chain(context) else { return .success([signer]) }
                defer { COpenSSLShims_sk_X509_pop_free(chain) }
                return .success((try? certificates(fromX509Stack: chain)) ?? [signer])
            }
            let code = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let text = String(cString: X509_verify_cert_error_string(Int(code)))
            let subject = X509_STORE_CTX_get_current_cert(context).flatMap { try? Certificate(handle: X509Handle(copying: $0)).subject } ?? "?"
            let what = depth == 0 ? "the signer certificate" : "the issuing certificate '\(subject)'"
            switch code {
            case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
                return .failure(VerificationFailure(.signerExpired, "\(what) was not valid at \(date) (\(text))", openSSLErrors: OpenSSLErrorQueue.drain()))
            default:
                return .failure(VerificationFailure(.untrustedSigner,
                                                    "the signer's chain does not lead to a trusted certificate: \(what): \(text)",
                                                    openSSLErrors: OpenSSLErrorQueue.drain()))
            }
        }
        return outcome ?? .failure(failure(.untrustedSigner, "could not build the chain"))
    }
}
