internal import COpenSSL
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// A CMS SignedData prepared once per identity (and per batch worker) and reused for every
/// signature of a batch: OpenSSL builds the structure once (certificates, digest and signature
/// algorithm identifiers, issuer and serial, contentType and, for CAdES-BES, the ESS
/// signing-certificate-v2 attribute); per document only the messageDigest and signingTime
/// attributes (and embedded content) are replaced, OpenSSL encodes the signed attributes, the key
/// signs them and OpenSSL encodes the whole ContentInfo.
///
/// It is the external-key path of ``SignedDataBuilder`` (the signature over the DER signed
/// attributes put into the SignerInfo) with an OpenSSL key, so every result has the shape that
/// `openssl cms -verify` and the interop tests already accept. Only RSA PKCS#1 v1.5 and ECDSA keys
/// use it; other keys sign through ``SignedDataBuilder/prepare(digest:attachedContent:certificate:chain:localKey:format:digestAlgorithm:signingTime:signingCertificateAttribute:scheme:)``.
///
/// The key signs through one OpenSSL signing context made once per template (`EVP_PKEY_sign_init`
/// and the digest and padding settings are not repeated per signature, as `openssl speed` does).
/// The template does not keep the `LocalSigningKey` object alive, only OpenSSL's reference to the
/// key inside that context (see ``SignedDataTemplateCache``).
///
/// Not thread-safe: one template per worker (the OpenSSL structure is mutated per signature).
package final class SignedDataTemplate {
    private let pending: SignedDataBuilder.Pending
    private let context: SigningContext
    private let detached: Bool

    /// Whether a key can sign through a template (RSA with PKCS#1 v1.5, or EC).
    package static func supports(_ key: LocalSigningKey) -> Bool {
        (key.publicKeyAlgorithm.isRSA && key.defaultScheme == .rsaPKCS1v15) || key.publicKeyAlgorithm.isEC
    }

    /// Builds the template.
    /// - Throws: `.keyCertificateMismatch` when the key is not the certificate's;
    ///   `.unsupportedAlgorithm` for a key ``supports(_:)`` refuses; OpenSSL failures as `.cryptoFailure`.
    package init(
        identity: SigningIdentity,
        key: LocalSigningKey,
        format: SignatureFormat,
        detached: Bool,
        digestAlgorithm: DigestAlgorithm,
        signingCertificateAttribute: [UInt8]?
    ) throws {
        guard Self.supports(key) else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "a \(key.publicKeyAlgorithm) key does not sign through a prepared SignedData"
            )
        }
        guard key.matches(identity.certificate) else {
            throw CertificateProviderError(
                .keyCertificateMismatch,
                "the signing key does not belong to the certificate '\(identity.certificate.subject)'"
            )
        }
        let prepared = try SignedDataBuilder.prepare(
            digest: [UInt8](repeating: 0, count: digestAlgorithm.outputByteCount),
            attachedContent: detached ? nil : [],
            certificate: identity.certificate,
            chain: identity.chain,
            localKey: nil,
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: Date(timeIntervalSince1970: 0),
            signingCertificateAttribute: signingCertificateAttribute,
            scheme: key.defaultScheme
        )
        guard case .pending(let pending) = prepared else {
            throw CertificateProviderError(.cryptoFailure, "OpenSSL finished a SignedData that should wait for its key")
        }
        self.pending = pending
        self.context = try SigningContext(key: key, digestAlgorithm: digestAlgorithm)
        self.detached = detached
    }

    /// Makes one signature: the template with this document's digest, signing time and (attached)
    /// content; the key signs the signed attributes.
    ///
    /// A detached signature whose signing time OpenSSL encodes as a UTCTime (1950–2049) takes the
    /// encoded form (``EncodedForm``): the DER OpenSSL made for this template, with the digest, the
    /// time and the signature written over their fixed-length places. Anything else goes through
    /// OpenSSL's structure: its attributes are replaced, and OpenSSL encodes them and the whole
    /// ContentInfo.
    /// - Returns: the DER ContentInfo.
    /// - Throws: `.invalidParameter` for a digest of the wrong length; `.cryptoFailure`.
    package func sign(digest: [UInt8], signingTime: Date, attachedContent: [UInt8]?) throws -> [UInt8] {
        let algorithm = pending.digestAlgorithm
        try algorithm.checkLength(of: digest)
        if detached, let time = encodedTime(signingTime), let encoded = encodedForm(), time.type == encoded.timeType {
            var attributes = encoded.attributes
            attributes.write(digest, at: encoded.attributeDigest)
            attributes.write(time.bytes, at: encoded.attributeTime)
            let signature = try context.sign(digest: algorithm.hash(attributes))
            if let shape = try encoded.shapes[signature.count] ?? addShape(signatureLength: signature.count) {
                var der = shape.der
                der.write(digest, at: shape.digest)
                der.write(time.bytes, at: shape.time)
                der.write(signature, at: shape.signature)
                return der
            }
            // No checked shape for this length: OpenSSL's structure, with this signature.
            try set(digest: digest, signingTime: signingTime)
            try set(signature: signature)
            return try pending.cms.derBytes()
        }
        try set(digest: digest, signingTime: signingTime)
        if !detached {
            try SignedDataBuilder.embed(attachedContent ?? [], in: pending.cms)
        }
        // An idle template does not hold the last document's content.
        defer { if !detached { try? SignedDataBuilder.embed([], in: pending.cms) } }
        let attributes = try SignedDataBuilder.signedAttributesDER(pending.signerInfo)
        let signature = try context.sign(digest: algorithm.hash(attributes))
        try set(signature: signature)
        return try pending.cms.derBytes()
    }

    // MARK: The OpenSSL structure

    /// Replaces the signed attributes that change per document (contentType is removed and added
    /// again by ``SignedDataBuilder/addAttributes(_:digest:signingTime:)``).
    private func set(digest: [UInt8], signingTime: Date) throws {
        OpenSSLErrorQueue.clear()
        let signerInfo = pending.signerInfo
        for nid in [NID_pkcs9_signingTime, NID_pkcs9_messageDigest, NID_pkcs9_contentType] {
            let index = CMS_signed_get_attr_by_NID(signerInfo, nid, -1)
            if index >= 0, let removed = CMS_signed_delete_attr(signerInfo, index) { X509_ATTRIBUTE_free(removed) }
        }
        try SignedDataBuilder.addAttributes(signerInfo, digest: digest, signingTime: signingTime)
    }

    /// Puts a signature into the SignerInfo.
    private func set(signature: [UInt8]) throws {
        guard let slot = CMS_SignerInfo_get0_signature(pending.signerInfo),
            ASN1_STRING_set(slot, signature, Int32(signature.count)) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not store the signature in the CMS structure")
        }
    }

    // MARK: The encoded form

    /// The DER OpenSSL encoded for this template and where the per-document values lie in it; made
    /// on the first detached signature.
    private var encoded: EncodedForm?
    /// How many encoded ContentInfos (signature lengths) the template holds (for tests).
    package var encodedShapeCount: Int { encoded?.shapes.count ?? 0 }
    /// Set when the encoded form failed its check: this template signs through OpenSSL's structure.
    private var encodedFormRefused = false

    /// The encoded form, made on first use; nil when it failed its check.
    private func encodedForm() -> EncodedForm? {
        if let encoded { return encoded }
        guard !encodedFormRefused else { return nil }
        do {
            encoded = try EncodedForm(template: self)
        } catch {
            encodedFormRefused = true
        }
        return encoded
    }

    /// Makes and keeps the encoded ContentInfo for signatures of one length; nil (and the encoded
    /// form is given up) when it fails its check.
    /// - Throws: `.cryptoFailure` when OpenSSL fails to encode.
    private func addShape(signatureLength: Int) throws -> EncodedForm.Shape? {
        guard var form = encoded else { return nil }
        encoded = nil
        do {
            let shape = try form.shape(signatureLength: signatureLength, template: self)
            encoded = form
            return shape
        } catch let error as CertificateProviderError where error.code == .cryptoFailure {
            encodedFormRefused = true
            return nil
        }
    }
    /// The last signing time's encoding (a batch signs with one time).
    private var lastTime: (seconds: Int64, type: Int32, bytes: [UInt8])?

    /// How OpenSSL encodes a signing time (`ASN1_TIME_set`, as ``SignedDataBuilder`` adds it): its
    /// ASN.1 type and content bytes; nil for a GeneralizedTime (before 1950, from 2050), which the
    /// encoded form does not take.
    private func encodedTime(_ date: Date) -> (type: Int32, bytes: [UInt8])? {
        let seconds = ASN1Time.seconds(date)
        if let lastTime, lastTime.seconds == seconds { return (lastTime.type, lastTime.bytes) }
        guard let time = try? ASN1TimeHandle(date), time.type == V_ASN1_UTCTIME else { return nil }
        let bytes = time.contentBytes
        lastTime = (seconds, time.type, bytes)
        return (time.type, bytes)
    }

    /// The signed attributes and the whole ContentInfo, each encoded by OpenSSL, with the offsets
    /// of the three values that change per document: the messageDigest, the signingTime and the
    /// signature. Per document these are written over the same number of bytes, so no tag, length
    /// or order OpenSSL encoded changes:
    /// - the digest has its algorithm's length, the UTCTime 13 characters, and a signature of a
    ///   given length has its own encoded ContentInfo (ECDSA signatures vary by a byte or two);
    /// - DER orders the SET OF signed attributes by their encodings, and the four attributes differ
    ///   in length or OID before any value byte, so their order does not depend on the values.
    ///
    /// The offsets are not searched for blindly: OpenSSL encodes the template twice, with two sets
    /// of values that differ in every byte, and each value must lie at exactly one offset where
    /// the first encoding holds the first value and the second the second, and the two encodings
    /// must differ nowhere else. A template that fails this check signs through OpenSSL's
    /// structure instead (``SignedDataTemplate/sign(digest:signingTime:attachedContent:)`` never
    /// uses an unchecked form).
    package struct EncodedForm {
        /// The DER SET OF signed attributes (as hashed and signed).
        package let attributes: [UInt8]
        package let attributeDigest: Int
        package let attributeTime: Int
        /// The ASN.1 type of the signing time the offsets were found with.
        package let timeType: Int32
        /// One encoded ContentInfo per signature length.
        private(set) var shapes: [Int: Shape] = [:]

        /// An encoded ContentInfo and the offsets of its digest, time and signature.
        package struct Shape {
            package let der: [UInt8]
            package let digest: Int
            package let time: Int
            package let signature: Int
        }

        /// Two UTCTimes whose encodings differ in every digit: 2000-01-01 01:01:01 and
        /// 2011-12-12 12:12:12.
        private static let probeDates = (
            Date(timeIntervalSince1970: 946_688_461), Date(timeIntervalSince1970: 1_323_691_932)
        )

        /// Encodes the signed attributes twice and finds the digest and time in them.
        /// - Throws: `.cryptoFailure` when OpenSSL fails or the two encodings do not differ only at
        ///   one place for each value.
        package init(template: SignedDataTemplate) throws {
            let length = template.pending.digestAlgorithm.outputByteCount
            let digests = Self.probeValues(length)
            let times = try Self.probeTimes(template)
            let encodings = try Self.encodeBoth(template, digests: digests) {
                try SignedDataBuilder.signedAttributesDER(template.pending.signerInfo)
            }
            let offsets = try Self.locate([digests, times.bytes], in: encodings)
            attributes = encodings[0]
            attributeDigest = offsets[0]
            attributeTime = offsets[1]
            timeType = times.type
        }

        /// The encoded ContentInfo for signatures of `signatureLength` bytes, made on first use.
        /// - Throws: `.cryptoFailure` as ``init(template:)``.
        package mutating func shape(signatureLength: Int, template: SignedDataTemplate) throws -> Shape {
            if let shape = shapes[signatureLength] { return shape }
            let digests = Self.probeValues(template.pending.digestAlgorithm.outputByteCount)
            let signatures = Self.probeValues(signatureLength)
            let times = try Self.probeTimes(template)
            let encodings = try Self.encodeBoth(template, digests: digests, signatures: signatures) {
                try template.pending.cms.derBytes()
            }
            let offsets = try Self.locate([digests, times.bytes, signatures], in: encodings)
            let shape = Shape(der: encodings[0], digest: offsets[0], time: offsets[1], signature: offsets[2])
            shapes[signatureLength] = shape
            return shape
        }

        /// Sets the template to the first probe values (digest, time and, when given, signature),
        /// encodes it, then the same with the second ones.
        private static func encodeBoth(
            _ template: SignedDataTemplate,
            digests: [[UInt8]],
            signatures: [[UInt8]]? = nil,
            _ encode: () throws -> [UInt8]
        ) throws -> [[UInt8]] {
            try (0..<2).map { variant in
                try template.set(
                    digest: digests[variant],
                    signingTime: variant == 0 ? probeDates.0 : probeDates.1
                )
                if let signatures { try template.set(signature: signatures[variant]) }
                return try encode()
            }
        }

        /// A random value and its complement: two values of `length` bytes that differ in every byte.
        private static func probeValues(_ length: Int) -> [[UInt8]] {
            var value = [UInt8](repeating: 0, count: length)
            if RAND_bytes(&value, Int32(length)) != 1 {
                for index in value.indices { value[index] = UInt8(truncatingIfNeeded: index &* 151 &+ 89) }
            }
            return [value, value.map { ~$0 }]
        }

        /// The two probe times as OpenSSL encodes them.
        private static func probeTimes(
            _ template: SignedDataTemplate
        ) throws -> (type: Int32, bytes: [[UInt8]]) {
            guard let first = template.encodedTime(probeDates.0), let second = template.encodedTime(probeDates.1),
                first.type == second.type, first.bytes.count == second.bytes.count
            else {
                throw CertificateProviderError(.cryptoFailure, "OpenSSL did not encode the probe times as UTCTime")
            }
            return (first.type, [first.bytes, second.bytes])
        }

        /// The one offset of each value pair: where the first encoding holds the first value and
        /// the second encoding the second. The encodings must have one length and differ only there.
        /// - Throws: `.cryptoFailure` otherwise.
        package static func locate(_ values: [[[UInt8]]], in encodings: [[UInt8]]) throws -> [Int] {
            let (first, second) = (encodings[0], encodings[1])
            func refuse(_ reason: String) -> CertificateProviderError {
                CertificateProviderError(.cryptoFailure, "the prepared SignedData cannot be reused as DER: \(reason)")
            }
            guard first.count == second.count else { throw refuse("its length depends on the values") }
            var offsets: [Int] = []
            var covered = [Bool](repeating: false, count: first.count)
            for pair in values {
                let length = pair[0].count
                guard length > 0, first.count >= length else { throw refuse("a value is longer than the encoding") }
                let found = (0...(first.count - length)).filter { start in
                    first[start..<(start + length)].elementsEqual(pair[0])
                        && second[start..<(start + length)].elementsEqual(pair[1])
                }
                guard found.count == 1 else { throw refuse("a value was found \(found.count) times") }
                offsets.append(found[0])
                for index in found[0]..<(found[0] + length) { covered[index] = true }
            }
            for index in first.indices where first[index] != second[index] && !covered[index] {
                throw refuse("byte \(index) changes with the values but belongs to none of them")
            }
            return offsets
        }
    }
}

extension [UInt8] {
    /// Writes `bytes` over `self[offset..<offset + bytes.count]` (a copy of the bytes: the length
    /// and every other byte stay; `replaceSubrange` took its generic path and cost as much as a
    /// SHA-256 of the document).
    fileprivate mutating func write(_ bytes: [UInt8], at offset: Int) {
        precondition(offset >= 0 && offset + bytes.count <= count, "a value written inside the encoding")
        guard !bytes.isEmpty else { return }
        withUnsafeMutableBytes { target in
            bytes.withUnsafeBytes { source in
                (target.baseAddress! + offset).copyMemory(from: source.baseAddress!, byteCount: source.count)
            }
        }
    }
}

/// An `EVP_PKEY_CTX` initialised once for signing digests with a key's default scheme (RSA PKCS#1
/// v1.5 or ECDSA) and one digest algorithm, then used for every signature; freed in `deinit`.
///
/// Not thread-safe: owned by one ``SignedDataTemplate``.
package final class SigningContext {
    private let pointer: OpaquePointer
    private let digestLength: Int

    /// Makes and initialises the context; it holds its own reference to the key's `EVP_PKEY`.
    /// - Throws: `.unsupportedAlgorithm` when OpenSSL refuses the digest or padding for the key.
    package init(key: LocalSigningKey, digestAlgorithm: DigestAlgorithm) throws {
        let md = try digestAlgorithm.evpMD()
        OpenSSLErrorQueue.clear()
        guard let context = EVP_PKEY_CTX_new(key.handle.pointer, nil) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not create a signing context")
        }
        guard EVP_PKEY_sign_init(context) == 1, EVP_PKEY_CTX_set_signature_md(context, md) == 1,
            !key.publicKeyAlgorithm.isRSA || EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        else {
            EVP_PKEY_CTX_free(context)
            throw OpenSSLErrorQueue.error(
                .unsupportedAlgorithm,
                "the \(key.publicKeyAlgorithm) key cannot sign \(digestAlgorithm) digests"
            )
        }
        pointer = context
        digestLength = digestAlgorithm.outputByteCount
    }

    deinit { EVP_PKEY_CTX_free(pointer) }

    /// Signs a digest of the context's algorithm.
    /// - Throws: `.cryptoFailure` when OpenSSL fails.
    package func sign(digest: [UInt8]) throws -> [UInt8] {
        precondition(digest.count == digestLength, "a digest of the template's algorithm")
        var length = 0
        guard EVP_PKEY_sign(pointer, nil, &length, digest, digest.count) == 1 else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not size the signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(pointer, &signature, &length, digest, digest.count) == 1 else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "signing failed")
        }
        if length < signature.count { signature.removeLast(signature.count - length) }
        return signature
    }
}
