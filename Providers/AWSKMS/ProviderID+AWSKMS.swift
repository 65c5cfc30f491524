public import CertificateProviders

extension ProviderID {
    /// An AWS KMS asymmetric signing key (`aws-kms`; the key stays in KMS, CMS built locally),
    /// declared by this provider.
    public static let awsKMS: ProviderID = "aws-kms"
}
