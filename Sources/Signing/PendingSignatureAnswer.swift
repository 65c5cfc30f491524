import CertificateProviders
import Foundation

/// What completes a pending signature: the bare signature value its key made over the prepared data
/// to sign, or a whole CMS signature a signer elsewhere made over the same document (`openssl cms
/// -sign`, pyHanko's signer over the PDF's ByteRange digest, a service that returns finished CAdES).
///
/// Either is checked before anything is written: a value must verify with the prepared
/// certificate over the prepared data to sign; a CMS must verify, have one signer whose certificate
/// is the prepared one, and its messageDigest must be the prepared digest (the document's, or the
/// PDF's ByteRange's) with the prepared digest algorithm. A CMS keeps its own signed attributes (its
/// signing time, its ESS attribute), so its ``PendingSignature/dataToSign`` is not used.
public struct PendingSignatureAnswer: Sendable, Equatable {
    private enum Kind: Sendable, Equatable {
        case signatureValue
        case cms
    }

    private let kind: Kind
    /// The value, or the CMS (DER, BER or PEM).
    public let bytes: [UInt8]

    private init(_ kind: Kind, _ bytes: [UInt8]) {
        self.kind = kind
        self.bytes = bytes
    }

    /// The key's signature of the pending signature's data to sign (for RSA, ECDSA and GOST keys:
    /// of its digest, as `openssl pkeyutl -sign` makes it over `PendingSignature.digestToSign`).
    public static func signatureValue(_ bytes: [UInt8]) -> Self { Self(.signatureValue, bytes) }

    /// A CMS SignedData (DER, BER or PEM) made elsewhere over the prepared document by the prepared
    /// certificate's key: detached for a detached pending signature, embedding the document for an
    /// attached one; CAdES (an ESS signing-certificate attribute) when the pending signature is.
    public static func cms(_ bytes: [UInt8]) -> Self { Self(.cms, bytes) }

    /// Whether it is a whole CMS signature rather than a bare value.
    public var isCMS: Bool { kind == .cms }

    /// The DER ContentInfo that completes `pending`, checked as the type's documentation says.
    /// - Parameter attachedContent: the document, for an attached pending signature; nil for a
    ///   detached one.
    /// - Throws: `.signatureValueInvalid` when it does not verify; `.pendingSignatureMismatch` for
    ///   an edited pending signature, another document, another signer, format or digest;
    ///   `.malformedInput` for bytes that are not CMS; `.invalidParameter` for content missing or
    ///   not wanted.
    package func signature(for pending: PendingSignature, attachedContent: [UInt8]?) throws -> [UInt8] {
        switch kind {
        case .signatureValue:
            return try CMSSigner.complete(pending, signatureValue: bytes, attachedContent: attachedContent)
        case .cms:
            return try Self.checked(bytes, for: pending, attachedContent: attachedContent)
        }
    }

    /// Checks a CMS made elsewhere against `pending` and returns its DER.
    private static func checked(
        _ bytes: [UInt8],
        for pending: PendingSignature,
        attachedContent: [UInt8]?
    ) throws -> [UInt8] {
        try CMSSigner.checkUnaltered(pending, attachedContent: attachedContent)
        let subject = "the CMS given for pending signature \(pending.id)"
        let der = try derEncoded(bytes, subject: subject)
        // The certificate's fitness was the caller's choice when it prepared; what is judged here is
        // whether this CMS is the prepared signature.
        let policy = ValidationPolicy(algorithms: .permissive, requiresSigningKeyUsage: false)
        let result =
            attachedContent.map { CMSVerifier.verify(signature: der, content: $0, trustAnchors: [], policy: policy) }
            ?? CMSVerifier.verify(
                signature: der,
                contentDigest: pending.contentDigest,
                trustAnchors: [],
                policy: policy
            )
        let document = pending.documentName.map { "'\($0)'" } ?? "the prepared document"
        guard result.isValid, let signer = result.signerCertificate else {
            let failure = result.failure
            if failure?.code == .malformed {
                throw CertificateProviderError.malformedInput(
                    "\(subject) is not a CMS signature (\(failure?.reason ?? "unreadable")); nothing was written"
                )
            }
            if failure?.code == .contentChanged {
                throw CertificateProviderError(
                    .pendingSignatureMismatch,
                    "\(subject) signs another document: its messageDigest is not the \(pending.digestAlgorithm.displayName) "
                        + "digest of \(document) that was prepared; nothing was written"
                )
            }
            throw CertificateProviderError(
                .signatureValueInvalid,
                "\(subject) does not verify: \(failure?.reason ?? "it names no signer"); nothing was written"
            )
        }
        let wantsCAdES = pending.pdf != nil || pending.format == .cadesBES
        let request = DocumentSigningRequest(
            payload: .digest(pending.contentDigest, pending.digestAlgorithm),
            format: wantsCAdES ? .cadesBES : (result.format ?? pending.format),
            isDetached: pending.detached,
            digestAlgorithm: pending.digestAlgorithm
        )
        var mismatches = VerificationResult.serverSignatureMismatches(
            result,
            signer: signer,
            expectedSigner: pending.certificate,
            request: request
        )
        if wantsCAdES, result.format == .cms {
            mismatches.append(
                "(a CAdES signature carries an ESS signing-certificate-v2 attribute: openssl cms -sign -cades)"
            )
        }
        guard mismatches.isEmpty else {
            throw CertificateProviderError(
                .pendingSignatureMismatch,
                "\(subject) is not the prepared signature of \(document) by '\(pending.certificate.subject)': "
                    + "\(mismatches.joined(separator: "; ")); nothing was written"
            )
        }
        return der
    }

    /// `bytes` as DER: PEM (`-----BEGIN CMS-----`, `-----BEGIN PKCS7-----`) is decoded.
    /// - Throws: `.malformedInput` for empty bytes or PEM that holds no CMS.
    private static func derEncoded(_ bytes: [UInt8], subject: String) throws -> [UInt8] {
        guard !bytes.isEmpty else {
            throw CertificateProviderError.malformedInput("\(subject) is empty; nothing was written")
        }
        guard bytes.starts(with: Array("-----BEGIN".utf8)) else { return bytes }
        guard let der = (try? CMSContentInfoHandle.derFromPEM(bytes)) ?? nil, !der.isEmpty else {
            throw CertificateProviderError.malformedInput("\(subject) is PEM that holds no CMS; nothing was written")
        }
        return der
    }
}
