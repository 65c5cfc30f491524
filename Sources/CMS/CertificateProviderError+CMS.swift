public import CertificateProviders

extension CertificateProviderError.Code {
    /// An RFC 3161 timestamp is not valid: its signature, imprint, nonce, time-stamping
    /// certificate (critical timeStamping EKU) or chain to the TSA trust anchors failed a check.
    public static let timestampInvalid = Self(CMSCodeName.timestampInvalid)

    /// A signature value given to complete a pending signature does not verify with its certificate
    /// over its data to sign: made with another key, over other bytes, or with another scheme.
    /// Nothing was written; make the value again from the pending signature's `digestToSign`.
    public static let signatureValueInvalid = Self(CMSCodeName.signatureValueInvalid)

    /// What is being completed is not what was prepared: the pending signature was edited (its
    /// signed attributes no longer follow from its fields), or the content given is not the
    /// prepared document. Nothing was written; prepare again.
    public static let pendingSignatureMismatch = Self(CMSCodeName.pendingSignatureMismatch)
}

/// The names of the codes this module adds: each case's name is the code's raw value.
package enum CMSCodeName: String {
    case timestampInvalid
    case signatureValueInvalid
    case pendingSignatureMismatch
}
