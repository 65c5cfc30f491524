/// What a provider hands out: a certificate, the chain that issued it, and the key that signs.
///
/// The key is `any SigningKey`: a local OpenSSL key or a handle that asks a server to sign. Either
/// way the private key never leaves its provider.
public struct SigningIdentity: Sendable {
    /// The signer's (leaf) certificate.
    public var certificate: Certificate
    /// The issuing chain, ordered leaf's issuer first, root last; may be empty.
    public var chain: [Certificate]
    /// The key matching ``certificate``.
    public var key: any SigningKey

    /// Creates an identity.
    public init(certificate: Certificate, chain: [Certificate] = [], key: any SigningKey) {
        self.certificate = certificate
        self.chain = chain
        self.key = key
    }
}

extension SigningIdentity: CustomStringConvertible {
    /// The subject, the chain length and the key algorithm; never key material.
    public var description: String {
        "SigningIdentity(subject: \(certificate.subject), chain: \(chain.count), key: \(key.publicKeyAlgorithm))"
    }
}
