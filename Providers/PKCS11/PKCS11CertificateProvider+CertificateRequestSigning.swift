internal import CPKCS11
public import CertificateProviders

/// A token's key signs a certificate request for a new certificate of the same key.
extension PKCS11CertificateProvider: CertificateRequestSigning {
    /// The key ``initialize(options:)`` finds on the token (the `uri`, with the PIN). A key that has
    /// no certificate on the token yet (a key just generated, the usual case for a request) is taken
    /// with the public half its key objects hold: RSA from `CKA_MODULUS` and `CKA_PUBLIC_EXPONENT`,
    /// EC from the public key object's `CKA_EC_POINT` and `CKA_EC_PARAMS`.
    /// - Throws: as ``initialize(options:)``, except `.certificateNotFound`; `.noPrivateKey` when
    ///   an EC key has no public key object with its CKA_ID (its point is only there).
    public func certificateRequestKey(options: ProviderParameters) async throws -> any SigningKey {
        do {
            return try await initialize(options: options).key
        } catch let error as CertificateProviderError where error.code == .certificateNotFound {
            return try keyWithoutCertificate(options)
        }
    }

    private func keyWithoutCertificate(_ options: ProviderParameters) throws -> any SigningKey {
        let token = try openToken(options)
        return try token.run { session, epoch in
            let module = token.connection.module
            let info = try module.tokenInfo(slot: token.connection.currentSlot)
            let place = "on token '\(info.label)' (serial \(info.serialNumber))"
            let key = try Self.findPrivateKey(uri: token.uri, place: place, session: session, module: module)
            let label = try module.label(session: session, object: key)
            let id = try module.attribute(session: session, object: key, CK_ATTRIBUTE_TYPE(CKA_ID)) ?? []
            let keyName = "the private key '\(label)'\(id.isEmpty ? "" : " (id \(Self.hex(id)))") \(place)"
            let publicKey = try Self.publicKey(
                of: key,
                label: label,
                id: id,
                keyName: keyName,
                session: session,
                module: module
            )
            return try Self.signingKey(
                key,
                publicKey: (publicKey.algorithm, publicKey.keySize, publicKey.derRepresentation),
                keyName: keyName,
                label: label,
                id: id,
                scheme: token.scheme,
                connection: token.connection,
                epoch: epoch,
                session: session
            )
        }
    }

    /// The public half of `key` from the token: the public key object with its CKA_ID (or, without an
    /// ID, its label), else for RSA the private key's own modulus and exponent.
    private static func publicKey(
        of key: CK_OBJECT_HANDLE,
        label: String,
        id: [UInt8],
        keyName: String,
        session: CK_SESSION_HANDLE,
        module: PKCS11Module
    ) throws -> PKCS11Encoding.PublicKey {
        let publicObject =
            try id.isEmpty
            ? module.findObjects(session: session, objectClass: CK_OBJECT_CLASS(CKO_PUBLIC_KEY), label: label).first
            : module.findObjects(session: session, objectClass: CK_OBJECT_CLASS(CKO_PUBLIC_KEY), id: id).first
        func attribute(_ type: UInt) throws -> [UInt8]? {
            if let publicObject,
                let value = try module.attribute(session: session, object: publicObject, CK_ATTRIBUTE_TYPE(type))
            {
                return value
            }
            return try module.attribute(session: session, object: key, CK_ATTRIBUTE_TYPE(type))
        }
        let keyType = try module.ulongAttribute(session: session, object: key, CK_ATTRIBUTE_TYPE(CKA_KEY_TYPE))
        switch keyType {
        case CK_ULONG(CKK_RSA)?:
            guard let modulus = try attribute(CKA_MODULUS), let exponent = try attribute(CKA_PUBLIC_EXPONENT) else {
                throw CertificateProviderError(.noPrivateKey, "\(keyName) shows no RSA modulus and public exponent")
            }
            return try PKCS11Encoding.rsaPublicKey(modulus: modulus, exponent: exponent)
        case CK_ULONG(CKK_EC)?:
            guard let parameters = try attribute(CKA_EC_PARAMS), let point = try attribute(CKA_EC_POINT) else {
                throw CertificateProviderError(
                    .noPrivateKey,
                    "\(keyName) has no public key object with its CKA_ID, which holds the EC point a certificate "
                        + "request needs; write the public key to the token with the same id"
                )
            }
            return try PKCS11Encoding.ecPublicKey(
                parameters: parameters,
                point: PKCS11Encoding.unwrapOctetString(point)
            )
        default:
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "\(keyName) is neither RSA nor EC (CKA_KEY_TYPE \(keyType.map { String($0) } ?? "unknown"))"
            )
        }
    }
}
