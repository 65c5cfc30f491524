public import CertificateProviders
public import Foundation

extension CMSSigner {
    /// Prepares a CMS / CAdES signature whose value is made elsewhere (two-phase signing): the signed
    /// attributes are built and fixed now, and the result says what the key must sign.
    ///
    /// Nothing needs the private key: the certificate says whose signature it will be. Hand
    /// ``PendingSignature/digestToSign`` (or ``PendingSignature/dataToSign``) to the signer, then
    /// call ``complete(_:signatureValue:attachedContent:)`` with its answer, here or in another
    /// process (the pending signature is `Codable`).
    ///
    /// - Parameters:
    ///   - content: the document.
    ///   - certificate: the signer's certificate.
    ///   - chain: the certificates that go with it into the signature.
    ///   - format: `.cadesBES` (default) or `.cms`.
    ///   - detached: whether the content is left out (default true); an attached signature takes
    ///     the content again on completion, so the pending signature stays small.
    ///   - digestAlgorithm: nil (default) takes the digest that fits the key, as
    ///     ``sign(content:identity:format:detached:digestAlgorithm:signingTime:)`` does.
    ///   - scheme: how the key signs: nil (default) takes the key's (RSA PKCS#1 v1.5, ECDSA, GOST);
    ///     `.rsaPSS` for an RSA key that signs PSS.
    ///   - signingTime: the signing-time attribute (whole seconds).
    ///   - documentName: the document's name, kept for people.
    /// - Returns: the pending signature.
    /// - Throws: `.unsupportedAlgorithm` for a digest or format the key cannot have;
    ///   `.invalidParameter` for a scheme that does not fit the key.
    public static func prepare(
        content: [UInt8],
        certificate: Certificate,
        chain: [Certificate] = [],
        format: SignatureFormat = .cadesBES,
        detached: Bool = true,
        digestAlgorithm: DigestAlgorithm? = nil,
        scheme: SignatureScheme? = nil,
        signingTime: Date = Date(),
        documentName: String? = nil
    ) throws -> PendingSignature {
        let digestAlgorithm = try resolve(digestAlgorithm, forKey: certificate.publicKeyAlgorithm)
        return try prepare(
            digest: digestAlgorithm.hash(content),
            certificate: certificate,
            chain: chain,
            format: format,
            detached: detached,
            attachedContent: detached ? nil : content,
            digestAlgorithm: digestAlgorithm,
            scheme: scheme,
            signingTime: signingTime,
            documentName: documentName,
            documentSize: Int64(content.count),
            pdf: nil
        )
    }

    /// Prepares a detached signature from the content's precomputed digest (see
    /// ``prepare(content:certificate:chain:format:detached:digestAlgorithm:scheme:signingTime:documentName:)``).
    /// - Parameters:
    ///   - digest: the content's digest, made with `digestAlgorithm`.
    ///   - certificate: the signer's certificate.
    ///   - chain: the certificates that go with it into the signature.
    ///   - format: `.cadesBES` (default) or `.cms`.
    ///   - digestAlgorithm: the algorithm `digest` was made with.
    ///   - scheme: how the key signs (nil: the key's; `.rsaPSS` for an RSA key that signs PSS).
    ///   - signingTime: the signing-time attribute (whole seconds).
    ///   - documentName: the document's name, kept for people.
    /// - Returns: the pending signature.
    /// - Throws: `.invalidParameter` when the digest's length does not fit the algorithm; as the
    ///   content variant.
    public static func prepare(
        digest: [UInt8],
        certificate: Certificate,
        chain: [Certificate] = [],
        format: SignatureFormat = .cadesBES,
        digestAlgorithm: DigestAlgorithm = .sha256,
        scheme: SignatureScheme? = nil,
        signingTime: Date = Date(),
        documentName: String? = nil
    ) throws -> PendingSignature {
        try prepare(
            digest: digest,
            certificate: certificate,
            chain: chain,
            format: format,
            detached: true,
            attachedContent: nil,
            digestAlgorithm: try resolve(digestAlgorithm, forKey: certificate.publicKeyAlgorithm),
            scheme: scheme,
            signingTime: signingTime,
            documentName: documentName,
            documentSize: nil,
            pdf: nil
        )
    }

    /// Prepares the CAdES signature of a PDF's ByteRange digest for PAdES (PDFSigning's
    /// `PDFSigner.prepare`): ESS signing-certificate-v2, content type and message digest, no
    /// signing-time attribute (`signingTime` is the PDF's `/M`), and `pdf` carried along.
    package static func preparePDF(
        digest: [UInt8],
        certificate: Certificate,
        chain: [Certificate],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme?,
        signingTime: Date,
        documentName: String,
        pdf: PendingSignature.PDFUpdate
    ) throws -> PendingSignature {
        try prepare(
            digest: digest,
            certificate: certificate,
            chain: chain,
            format: SignatureFormat("pades"),
            detached: true,
            attachedContent: nil,
            digestAlgorithm: try resolve(digestAlgorithm, forKey: certificate.publicKeyAlgorithm),
            scheme: scheme,
            signingTime: signingTime,
            documentName: documentName,
            documentSize: pdf.originalSize,
            pdf: pdf
        )
    }

    /// Finishes a pending signature with the value its key made; returns the DER ContentInfo.
    ///
    /// Before anything is returned, the signed attributes are built again from the pending
    /// signature's fields and must be its ``PendingSignature/dataToSign`` (an edited pending
    /// signature is refused), and the value must verify with its certificate over them.
    ///
    /// - Parameters:
    ///   - pending: what ``prepare(content:certificate:chain:format:detached:digestAlgorithm:scheme:signingTime:documentName:)`` made.
    ///   - signatureValue: the key's signature of ``PendingSignature/dataToSign`` (for RSA and
    ///     ECDSA keys: of its digest, as `openssl pkeyutl -sign` makes it over
    ///     ``PendingSignature/digestToSign``).
    ///   - attachedContent: the document, for an attached signature (its digest must be the
    ///     prepared one); nil for a detached one.
    /// - Throws: `.signatureValueInvalid` when the value does not verify;
    ///   `.pendingSignatureMismatch` for an edited pending signature or other content;
    ///   `.invalidParameter` when an attached signature gets no content, or a detached one gets some.
    public static func complete(
        _ pending: PendingSignature,
        signatureValue: [UInt8],
        attachedContent: [UInt8]? = nil
    ) throws -> [UInt8] {
        try checkContent(attachedContent, of: pending)
        let prepared = try rebuild(pending, attachedContent: attachedContent)
        guard SignedDataBuilder.verifies(signatureValue, prepared) else {
            throw CertificateProviderError(
                .signatureValueInvalid,
                "the signature value (\(signatureValue.count) bytes) does not verify with the key of "
                    + "'\(pending.certificate.subject)' over the \(pending.digestAlgorithm.displayName) digest of "
                    + "pending signature \(pending.id) (\(pending.scheme)): it was made with another key, over "
                    + "other bytes or with another scheme; nothing was written"
            )
        }
        return try SignedDataBuilder.store(signatureValue, in: prepared)
    }

    /// Checks that a pending signature was not edited: its signed attributes, built again from its
    /// fields, are its ``PendingSignature/dataToSign``; and that `attachedContent` is what it needs
    /// (the prepared document for an attached one, nothing for a detached one).
    /// - Throws: `.pendingSignatureMismatch` for an edited pending signature or other content;
    ///   `.invalidParameter` for content missing or not wanted.
    package static func checkUnaltered(_ pending: PendingSignature, attachedContent: [UInt8]?) throws {
        try checkContent(attachedContent, of: pending)
        _ = try rebuild(pending, attachedContent: attachedContent)
    }

    /// The SignedData the pending signature's fields make, waiting for its value.
    /// - Throws: `.pendingSignatureMismatch` when its signed attributes are not the pending
    ///   signature's data to sign (an edited pending signature).
    private static func rebuild(
        _ pending: PendingSignature,
        attachedContent: [UInt8]?
    ) throws -> SignedDataBuilder.Pending {
        // A PAdES signature is a CAdES one whose claimed time is the PDF's /M, not an attribute.
        let rebuilt = try SignedDataBuilder.prepare(
            digest: pending.contentDigest,
            attachedContent: attachedContent,
            certificate: pending.certificate,
            chain: pending.chain,
            localKey: nil,
            format: pending.pdf == nil ? pending.format : .cadesBES,
            digestAlgorithm: pending.digestAlgorithm,
            signingTime: pending.pdf == nil ? pending.signingTime : nil,
            scheme: pending.scheme
        )
        guard case .pending(let prepared) = rebuilt, prepared.signedAttributes == pending.dataToSign else {
            throw CertificateProviderError(
                .pendingSignatureMismatch,
                "the pending signature \(pending.id) was altered: its data to sign does not follow from its "
                    + "certificate, digest and signing time; prepare the document again"
            )
        }
        return prepared
    }

    /// Builds the pending signature of `digest`.
    private static func prepare(
        digest: [UInt8],
        certificate: Certificate,
        chain: [Certificate],
        format: SignatureFormat,
        detached: Bool,
        attachedContent: [UInt8]?,
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme?,
        signingTime: Date,
        documentName: String?,
        documentSize: Int64?,
        pdf: PendingSignature.PDFUpdate?
    ) throws -> PendingSignature {
        let scheme = try checkScheme(scheme, for: certificate)
        let signingTime = Date(timeIntervalSince1970: signingTime.timeIntervalSince1970.rounded(.down))
        let prepared = try SignedDataBuilder.prepare(
            digest: digest,
            attachedContent: attachedContent,
            certificate: certificate,
            chain: chain,
            localKey: nil,
            format: pdf == nil ? format : .cadesBES,
            digestAlgorithm: digestAlgorithm,
            signingTime: pdf == nil ? signingTime : nil,
            scheme: scheme
        )
        guard case .pending(let pending) = prepared else {
            throw CertificateProviderError(.cryptoFailure, "OpenSSL signed a SignedData that was only to be prepared")
        }
        return PendingSignature(
            documentName: documentName,
            documentSize: documentSize,
            format: format,
            detached: detached,
            digestAlgorithm: digestAlgorithm,
            scheme: scheme,
            contentDigest: digest,
            signingTime: signingTime,
            certificate: certificate,
            chain: chain,
            dataToSign: pending.signedAttributes,
            pdf: pdf
        )
    }

    /// The scheme asked for, or the key's; refused when it does not fit the certificate's key.
    private static func checkScheme(_ scheme: SignatureScheme?, for certificate: Certificate) throws -> SignatureScheme
    {
        let algorithm = certificate.publicKeyAlgorithm
        let fitting = SignatureScheme.default(for: algorithm)
        guard let scheme, scheme != fitting else { return fitting }
        guard algorithm.isRSA, scheme == .rsaPSS else {
            throw CertificateProviderError.invalidParameter(
                "a \(algorithm) key signs with \(fitting), not \(scheme)"
                    + (algorithm.isRSA ? " (or \(SignatureScheme.rsaPSS))" : "")
            )
        }
        return scheme
    }

    /// Refuses content an attached pending signature did not prepare, and content for a detached one.
    private static func checkContent(_ content: [UInt8]?, of pending: PendingSignature) throws {
        switch (pending.detached, content) {
        case (true, nil):
            return
        case (true, .some):
            throw CertificateProviderError.invalidParameter(
                "pending signature \(pending.id) is detached: complete it without the content"
            )
        case (false, nil):
            throw CertificateProviderError.invalidParameter(
                "pending signature \(pending.id) embeds the document: give its content to complete it"
            )
        case (false, .some(let content)):
            guard pending.digestAlgorithm.hash(content) == pending.contentDigest else {
                throw CertificateProviderError(
                    .pendingSignatureMismatch,
                    "the content given is not the document pending signature \(pending.id) was prepared for "
                        + "(\(pending.documentName ?? "no name")): its digest differs; nothing was written"
                )
            }
        }
    }
}
