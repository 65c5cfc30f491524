public import CertificateProviders

extension CertificateProviderError.Code {
    /// The signing service returned a signature value that does not verify with the credential's
    /// certificate, or with the key the service reports (a wrong key, a wrong hash, a damaged
    /// value). Nothing was written: report it to the service's operator; retrying will not help.
    public static let invalidServerSignature = Self("invalidServerSignature")
}

extension Certificate {
    /// Checks the signature values a remote signing service returned for `digests`, in order,
    /// before any of them goes into a signature: each must be this certificate's key's signature of
    /// the digest at the same index (``Certificate/isValidSignature(_:forDigest:digestAlgorithm:scheme:)``).
    ///
    /// - Parameters:
    ///   - signatures: the values the service returned.
    ///   - digests: the digests that were sent, in the same order.
    ///   - digestAlgorithm: the algorithm of `digests`.
    ///   - scheme: the signature scheme that was asked for.
    ///   - service: names the service and the call in the error (`CSC credential 7: signatures/signHash`).
    ///   - hint: what to do about it, appended to the reason when given.
    /// - Throws: `.invalidServerSignature` naming the first value that does not verify (or a count
    ///   that differs from the digests'), the service and the certificate's subject.
    public func verifyServerSignatures(
        _ signatures: [[UInt8]],
        forDigests digests: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme,
        service: String,
        hint: String? = nil
    ) throws {
        try ServerSignatureValues.verify(
            signatures,
            count: digests.count,
            service: service,
            against: "the certificate '\(subject)'",
            digestAlgorithm: digestAlgorithm,
            hint: hint
        ) { index in
            isValidSignature(
                signatures[index],
                forDigest: digests[index],
                digestAlgorithm: digestAlgorithm,
                scheme: scheme
            )
        }
    }
}

/// The one check of signature values a remote service returned, whatever they are checked against
/// (a certificate, or the public key a key-management service reports).
public enum ServerSignatureValues {
    /// Throws unless there are `count` values and `isValid` holds for each index.
    /// - Parameters:
    ///   - against: what the values are checked with (`the certificate 'CN=…'`), for the reason.
    ///   - isValid: whether the value at an index verifies over the digest at that index.
    /// - Throws: `.invalidServerSignature`.
    public static func verify(
        _ signatures: [[UInt8]],
        count: Int,
        service: String,
        against: String,
        digestAlgorithm: DigestAlgorithm,
        hint: String?,
        isValid: (Int) -> Bool
    ) throws {
        let advice = hint.map { " (\($0))" } ?? ""
        guard signatures.count == count else {
            throw CertificateProviderError(
                .invalidServerSignature,
                "\(service) returned \(signatures.count) signature(s) for \(count) digest(s)\(advice); nothing was "
                    + "signed"
            )
        }
        guard let index = signatures.indices.first(where: { !isValid($0) }) else { return }
        throw CertificateProviderError(
            .invalidServerSignature,
            "\(service): signature \(index + 1) of \(count) does not verify with \(against) over its "
                + "\(digestAlgorithm) digest\(advice); nothing was signed"
        )
    }
}
