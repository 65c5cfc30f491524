/// The most a CMS SignedData (a signature, or a timestamp token inside one) may carry before it is
/// read any further: a signature over the limits is refused with
/// `VerificationFailure.Code.limitExceeded` (module `Validation`; a timestamp token with `.malformedInput`) before its
/// certificates are copied, its chains built or its revocation data read.
///
/// Real signatures stay far below them: a CAdES-BES carries its chain (a handful of certificates), a
/// B-LT or B-LTA signature the chains and revocation data of its signer and timestamps (dozens). The
/// limits only stop a file made to exhaust the verifier: a SignedData with a hundred thousand
/// certificates is a few megabytes, and building chains over them takes minutes.
public enum SignedDataLimits {
    /// The most certificates `SignedData.certificates` may hold: 5,000.
    public static let maximumCertificates = 5_000
    /// The most CRLs `SignedData.crls` may hold: 1,000.
    public static let maximumCRLs = 1_000
    /// The most SignerInfos a SignedData may hold: 100.
    public static let maximumSigners = 100
    /// The most signed attributes, and separately the most unsigned attributes, one SignerInfo may
    /// hold: 200.
    public static let maximumAttributesPerSigner = 200
}
