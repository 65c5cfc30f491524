internal import CPKCS11
public import CertificateProviders
import Synchronization

/// A private key on a PKCS#11 token: it signs on the token and never leaves it.
///
/// The digest is computed here and the token signs it with a raw mechanism, so every token that
/// has `CKM_RSA_PKCS`, `CKM_RSA_PKCS_PSS` or `CKM_ECDSA` works (SoftHSM 2.6 has no
/// `CKM_ECDSA_SHA256`, many cards have no hash-and-sign mechanisms at all):
/// - RSA PKCS#1 v1.5: `CKM_RSA_PKCS` over the DER DigestInfo (built by OpenSSL);
/// - RSA-PSS: `CKM_RSA_PKCS_PSS` with MGF1 of the same digest and a salt as long as the digest;
/// - ECDSA (P-256, P-384, P-521): `CKM_ECDSA`, whose raw r‖s is DER-encoded by OpenSSL.
///
/// Each call takes a session of its own from the identity's pool, so concurrent calls are safe.
/// A key with `CKA_ALWAYS_AUTHENTICATE` gets a context-specific login with the same PIN before each
/// signature.
public final class PKCS11SigningKey: SigningKey, @unchecked Sendable {
    // Safe to share: the stored properties are immutable; the cached object handle is behind a Mutex
    // and the connection locks its own state.
    /// The key's algorithm, from its certificate, or from the token's key objects for a key that has
    /// none yet (RSA, or EC with its curve).
    public let publicKeyAlgorithm: PublicKeyAlgorithm
    /// The key size in bits (from the certificate, or the key objects).
    public let keySize: Int
    /// The certificate's SubjectPublicKeyInfo (checked against the token's key when it was found), or
    /// the one OpenSSL makes from the key objects' attributes for a key without a certificate.
    public let publicKeyDERRepresentation: [UInt8]
    /// The key's label (CKA_LABEL) on the token.
    public let label: String
    /// The key's ID (CKA_ID) on the token.
    public let id: [UInt8]
    /// Whether the token asks for the PIN before every signature (`CKA_ALWAYS_AUTHENTICATE`).
    public let requiresLoginPerSignature: Bool
    /// The scheme CMS signers use with this key: the provider's `scheme` parameter, else PKCS#1 v1.5
    /// for RSA and ECDSA for EC.
    public let defaultScheme: SignatureScheme

    let connection: PKCS11TokenConnection
    private let cachedHandle: Mutex<(epoch: UInt64, handle: CK_OBJECT_HANDLE)>

    /// A key whose public half is `publicKey` (its certificate's, or the token's key objects' for a key
    /// without a certificate yet).
    init(
        connection: PKCS11TokenConnection,
        publicKey: (algorithm: PublicKeyAlgorithm, keySize: Int, der: [UInt8]),
        label: String,
        id: [UInt8],
        handle: CK_OBJECT_HANDLE,
        epoch: UInt64,
        alwaysAuthenticate: Bool,
        defaultScheme: SignatureScheme
    ) {
        self.connection = connection
        publicKeyAlgorithm = publicKey.algorithm
        keySize = publicKey.keySize
        publicKeyDERRepresentation = publicKey.der
        self.label = label
        self.id = id
        requiresLoginPerSignature = alwaysAuthenticate
        self.defaultScheme = defaultScheme
        cachedHandle = Mutex((epoch, handle))
    }

    /// Signs a precomputed digest, its length checked, without suspending (the token call blocks the
    /// calling thread).
    /// - Throws: `.unsupportedAlgorithm` for a
    ///   scheme that does not fit the key or a mechanism the token lacks; `.wrongPassword`,
    ///   `.pinLocked`, `.tokenNotFound` and the other PKCS#11 codes, each naming its `CKR_*` value.
    package func signChecked(
        _ digest: [UInt8],
        _ digestAlgorithm: DigestAlgorithm,
        _ scheme: SignatureScheme
    ) throws -> [UInt8] {
        let fits =
            publicKeyAlgorithm.isRSA
            ? (scheme == .rsaPKCS1v15 || scheme == .rsaPSS) : (publicKeyAlgorithm.isEC && scheme == .ecdsa)
        guard fits else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "a \(publicKeyAlgorithm) key cannot sign with \(scheme)"
            )
        }
        let input = scheme == .rsaPKCS1v15 ? try PKCS11Encoding.digestInfo(digest, algorithm: digestAlgorithm) : digest
        do {
            let raw = try connection.withSession { session, epoch in
                try sign(input, session: session, epoch: epoch, scheme: scheme, digestAlgorithm: digestAlgorithm)
            }
            return scheme == .ecdsa ? try PKCS11Encoding.ecdsaSignatureDER(raw: raw) : raw
        } catch let failure as PKCS11Failure {
            throw failure.providerError(
                "signing with the key '\(label)' on token '\(connection.tokenFilter.tokenDescription)'"
            )
        }
    }

    private func sign(
        _ input: [UInt8],
        session: CK_SESSION_HANDLE,
        epoch: UInt64,
        scheme: SignatureScheme,
        digestAlgorithm: DigestAlgorithm
    ) throws -> [UInt8] {
        let module = connection.module
        let handle = try keyHandle(session: session, epoch: epoch)
        var pssParameters = CK_RSA_PKCS_PSS_PARAMS(
            hashAlg: Self.hashMechanism(digestAlgorithm),
            mgf: Self.mgf(digestAlgorithm),
            sLen: CK_ULONG(digestAlgorithm.outputByteCount)
        )
        try withUnsafeMutablePointer(to: &pssParameters) { parameters in
            var mechanism = CK_MECHANISM()
            switch scheme {
            case .rsaPSS:
                mechanism.mechanism = CK_MECHANISM_TYPE(CKM_RSA_PKCS_PSS)
                mechanism.pParameter = UnsafeMutableRawPointer(parameters)
                mechanism.ulParameterLen = CK_ULONG(MemoryLayout<CK_RSA_PKCS_PSS_PARAMS>.size)
            case .ecdsa: mechanism.mechanism = CK_MECHANISM_TYPE(CKM_ECDSA)
            default: mechanism.mechanism = CK_MECHANISM_TYPE(CKM_RSA_PKCS)
            }
            try module.call("C_SignInit") { $0.C_SignInit?(session, &mechanism, handle) }
        }
        if requiresLoginPerSignature {
            do {
                try connection.contextSpecificLogin(session: session, keyLabel: label)
            } catch {
                // End the initialised operation so the session can be used again.
                var length: CK_ULONG = 0
                var data = input
                _ = module.rv { $0.C_Sign?(session, &data, CK_ULONG(data.count), nil, &length) }
                var scratch = [UInt8](repeating: 0, count: max(Int(length), 1))
                _ = module.rv { $0.C_Sign?(session, &data, CK_ULONG(data.count), &scratch, &length) }
                throw error
            }
        }
        var data = input
        var length: CK_ULONG = 0
        try module.call("C_Sign") { $0.C_Sign?(session, &data, CK_ULONG(data.count), nil, &length) }
        var signature = [UInt8](repeating: 0, count: Int(length))
        try module.call("C_Sign") { $0.C_Sign?(session, &data, CK_ULONG(data.count), &signature, &length) }
        return Array(signature.prefix(Int(length)))
    }

    /// The key's object handle in the current epoch (handles may change when the token comes back).
    private func keyHandle(session: CK_SESSION_HANDLE, epoch: UInt64) throws -> CK_OBJECT_HANDLE {
        let cached = cachedHandle.withLock { $0 }
        if cached.epoch == epoch { return cached.handle }
        let handles = try connection.module.findObjects(
            session: session,
            objectClass: CK_OBJECT_CLASS(CKO_PRIVATE_KEY),
            label: id.isEmpty ? label : nil,
            id: id.isEmpty ? nil : id
        )
        guard let handle = handles.first else {
            throw CertificateProviderError(
                .noPrivateKey,
                "the key '\(label)' is no longer on token '\(connection.tokenFilter.tokenDescription)'"
            )
        }
        cachedHandle.withLock { $0 = (epoch, handle) }
        return handle
    }

    static func hashMechanism(_ digest: DigestAlgorithm) -> CK_MECHANISM_TYPE {
        switch digest {
        case .sha384: return CK_MECHANISM_TYPE(CKM_SHA384)
        case .sha512: return CK_MECHANISM_TYPE(CKM_SHA512)
        default: return CK_MECHANISM_TYPE(CKM_SHA256)
        }
    }

    static func mgf(_ digest: DigestAlgorithm) -> CK_RSA_PKCS_MGF_TYPE {
        switch digest {
        case .sha384: return CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA384)
        case .sha512: return CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA512)
        default: return CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA256)
        }
    }
}

extension PKCS11SigningKey: SynchronousSigningKey {}
