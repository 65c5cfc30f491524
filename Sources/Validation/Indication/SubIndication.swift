/// Why a validation ended ``Indication/indeterminate`` or ``Indication/failed``: the sub-indications
/// of ETSI EN 319 102-1 §5.1.3 (Table 5), by their standard names. An open set, like
/// ``VerificationFailure/Code``: a later edition's names fit without a new release.
///
/// The package's own ``VerificationFailure/Code`` stays the detail under a sub-indication; the
/// article "Indications" of this module lists which code maps to which sub-indication.
public struct SubIndication: Hashable, Sendable, CustomStringConvertible {
    /// The standard's name (`HASH_FAILURE`, `NO_CERTIFICATE_CHAIN_FOUND`, …).
    public let rawValue: String
    /// Creates a sub-indication.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The standard's name.
    public var description: String { rawValue }

    // TOTAL-FAILED

    /// FAILED: the signature is not conformant to its format to the point that it cannot be
    /// processed (not a SignedData, a broken ByteRange), or, for a PDF, changes after it that its
    /// modification policy does not allow.
    public static let formatFailure = SubIndication("FORMAT_FAILURE")
    /// FAILED: the hash of the signed data does not match the signed one: the content was changed.
    public static let hashFailure = SubIndication("HASH_FAILURE")
    /// FAILED: the signature value does not verify with the signer's public key.
    public static let sigCryptoFailure = SubIndication("SIG_CRYPTO_FAILURE")
    /// FAILED: the signing certificate was revoked, and a proof of existence shows the signature was
    /// made after the revocation.
    public static let revoked = SubIndication("REVOKED")

    // INDETERMINATE (NOT_YET_VALID is FAILED when a proof of existence dates the signature before
    // the certificate's notBefore, INDETERMINATE otherwise)

    /// The signature's attributes do not meet the validation constraints (a limit of this verifier).
    public static let sigConstraintsFailure = SubIndication("SIG_CONSTRAINTS_FAILURE")
    /// The chain does not meet the constraints on its certificates (key usage, time-stamping use).
    public static let chainConstraintsFailure = SubIndication("CHAIN_CONSTRAINTS_FAILURE")
    /// The chain could not be validated for another reason (a CA certificate out of its validity,
    /// a CA of a time-stamping authority revoked).
    public static let certificateChainGeneralFailure = SubIndication("CERTIFICATE_CHAIN_GENERAL_FAILURE")
    /// An algorithm or key size is below the required level with no time at which it was not.
    public static let cryptoConstraintsFailure = SubIndication("CRYPTO_CONSTRAINTS_FAILURE")
    /// The signing certificate had expired at the best-signature-time a proof of existence gives.
    public static let expired = SubIndication("EXPIRED")
    /// The signing certificate was not yet valid at the time it was checked at.
    public static let notYetValid = SubIndication("NOT_YET_VALID")
    /// A timestamp's time lies in the wrong order (a signature timestamp after an archive one).
    public static let timestampOrderFailure = SubIndication("TIMESTAMP_ORDER_FAILURE")
    /// The signing certificate cannot be identified (missing, or not the one the signed
    /// signing-certificate attribute names).
    public static let noSigningCertificateFound = SubIndication("NO_SIGNING_CERTIFICATE_FOUND")
    /// No chain could be built from the signer to a trust anchor (or none was checked).
    public static let noCertificateChainFound = SubIndication("NO_CERTIFICATE_CHAIN_FOUND")
    /// The signing certificate was revoked and no proof of existence dates the signature before.
    public static let revokedNoPOE = SubIndication("REVOKED_NO_POE")
    /// A CA certificate of the chain was revoked and no proof of existence dates the signature before.
    public static let revokedCANoPOE = SubIndication("REVOKED_CA_NO_POE")
    /// The signing certificate is out of its validity at the validation time and no proof of
    /// existence dates the signature inside it.
    public static let outOfBoundsNoPOE = SubIndication("OUT_OF_BOUNDS_NO_POE")
    /// As ``outOfBoundsNoPOE``, but revocation data shows the certificate was not revoked.
    public static let outOfBoundsNotRevoked = SubIndication("OUT_OF_BOUNDS_NOT_REVOKED")
    /// An algorithm is no longer reliable and no proof of existence dates the signature before.
    public static let cryptoConstraintsFailureNoPOE = SubIndication("CRYPTO_CONSTRAINTS_FAILURE_NO_POE")
    /// A proof of existence is missing for an object the validation needs.
    public static let noPOE = SubIndication("NO_POE")
    /// Revocation status could not be had yet: validating later may decide it.
    public static let tryLater = SubIndication("TRY_LATER")
    /// The signed data cannot be obtained (a detached signature without its document).
    public static let signedDataNotFound = SubIndication("SIGNED_DATA_NOT_FOUND")
}
