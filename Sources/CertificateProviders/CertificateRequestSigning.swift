/// A provider whose key can sign before a certificate exists for it: what a certificate request
/// (PKCS#10, `certsign csr`) needs.
///
/// A key in a key-management service (Vault / OpenBao transit, a cloud KMS) has no certificate
/// until a CA issues one from a request that key signed; a PKCS#12 file or a PKCS#11 token hands out
/// the key of the identity it holds, to ask for a new certificate for the same key.
///
/// Contract: the key's ``SigningKey/publicKeyDERRepresentation`` is the public key the service or
/// file reports (it goes into the request as is); its signing calls follow ``SigningKey``. Nothing
/// is stored and no certificate is asked for. Parameters are validated as
/// ``CertificateProvider/initialize(options:)`` validates them, with the same messages.
public protocol CertificateRequestSigning: CertificateProvider {
    /// The key the merged parameters name, without its certificate.
    /// - Parameter options: parameters merged over ``CertificateProvider/parameters`` for this call.
    /// - Throws: `.invalidParameter` for missing or wrong parameters; the errors reaching the key
    ///   throws (`.authenticationFailed`, `.network`, `.wrongPassword`, …); `.unsupportedOperation`
    ///   for a key that cannot sign.
    func certificateRequestKey(options: ProviderParameters) async throws -> any SigningKey
}
