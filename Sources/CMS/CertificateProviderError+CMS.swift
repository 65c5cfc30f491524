public import CertificateProviders

extension CertificateProviderError.Code {
    /// An RFC 3161 timestamp is not valid: its signature, imprint, nonce, time-stamping
    /// certificate (critical timeStamping EKU) or chain to the TSA trust anchors failed a check.
    public static let timestampInvalid = Self(CMSCodeName.timestampInvalid)
}

/// The names of the codes this module adds: each case's name is the code's raw value.
package enum CMSCodeName: String {
    case timestampInvalid
}
