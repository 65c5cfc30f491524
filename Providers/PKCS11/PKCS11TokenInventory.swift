internal import CPKCS11
public import CertificateProviders

/// What a PKCS#11 module offers: its slots with tokens, each token's details and flags, and the
/// certificates with keys on it, each with the `pkcs11:` URI to sign with (`certsign tokens`).
public struct PKCS11TokenInventory: Sendable {
    /// One token in a slot.
    public struct Token: Sendable {
        /// The slot ID.
        public let slotID: UInt
        /// The slot's description.
        public let slotDescription: String
        /// The token label.
        public let label: String
        /// The token manufacturer.
        public let manufacturer: String
        /// The token model.
        public let model: String
        /// The token serial number.
        public let serialNumber: String
        /// The token's flags by name (`login required`, `user PIN count low`, `protected authentication path`, …).
        public let flags: [String]
        /// The certificates on the token that have a key with the same CKA_ID.
        public let keys: [KeyEntry]
        /// The URI of the token itself.
        public var uri: String {
            var uri = PKCS11URI()
            uri.token = label
            uri.manufacturer = manufacturer
            uri.serial = serialNumber
            return uri.description
        }
    }

    /// A certificate and its key on a token.
    public struct KeyEntry: Sendable {
        /// The label (CKA_LABEL) of the key, or of the certificate when the key is not visible before login.
        public let label: String
        /// The CKA_ID shared by key and certificate.
        public let id: [UInt8]
        /// The certificate.
        public let certificate: Certificate
        /// Whether a private key object was seen (many tokens show private keys only after login).
        public let privateKeyVisible: Bool
        /// The URI to sign with: `pkcs11:token=…;serial=…;object=…;id=…`.
        public let uri: String
    }

    /// The initialised tokens present, in slot order.
    public let tokens: [Token]

    /// Lists the tokens of a module without logging in (certificates and public keys are public objects).
    /// - Parameter modulePath: the module; nil for p11-kit's proxy (every configured module).
    /// - Throws: `.moduleNotLoadable` naming the path, `.tokenFailure` naming the `CKR_*` value.
    public init(modulePath: String? = nil) throws {
        let path = modulePath ?? PKCS11Module.defaultPath
        let module = try PKCS11Module.load(path)
        do {
            // Uninitialised tokens (SoftHSM's free slot, blank cards) hold nothing to sign with.
            tokens = try module.slotsWithTokens().filter { $0.token.flags & CK_FLAGS(CKF_TOKEN_INITIALIZED) != 0 }.map {
                slot in
                Token(
                    slotID: UInt(slot.id),
                    slotDescription: slot.description,
                    label: slot.token.label,
                    manufacturer: slot.token.manufacturer,
                    model: slot.token.model,
                    serialNumber: slot.token.serialNumber,
                    flags: Self.flagNames(slot.token.flags),
                    keys: (try? Self.keys(module: module, slot: slot)) ?? []
                )
            }
        } catch let failure as PKCS11Failure {
            throw failure.providerError("listing the tokens of the PKCS#11 module \(path)")
        }
    }

    private static func keys(module: PKCS11Module, slot: PKCS11Module.Slot) throws -> [KeyEntry] {
        var session: CK_SESSION_HANDLE = 0
        try module.call("C_OpenSession") {
            $0.C_OpenSession?(slot.id, CK_FLAGS(CKF_SERIAL_SESSION), nil, nil, &session)
        }
        defer { _ = module.rv { $0.C_CloseSession?(session) } }
        var entries: [KeyEntry] = []
        for handle in try module.findObjects(session: session, objectClass: CK_OBJECT_CLASS(CKO_CERTIFICATE)) {
            guard let id = try module.attribute(session: session, object: handle, CK_ATTRIBUTE_TYPE(CKA_ID)),
                !id.isEmpty,
                let der = try module.attribute(session: session, object: handle, CK_ATTRIBUTE_TYPE(CKA_VALUE)),
                let certificate = try? Certificate(derEncoded: der)
            else { continue }
            let privateKeys = try module.findObjects(
                session: session,
                objectClass: CK_OBJECT_CLASS(CKO_PRIVATE_KEY),
                id: id
            )
            let publicKeys = try module.findObjects(
                session: session,
                objectClass: CK_OBJECT_CLASS(CKO_PUBLIC_KEY),
                id: id
            )
            guard !privateKeys.isEmpty || !publicKeys.isEmpty else { continue }  // a CA certificate, not a signer
            let keyLabel =
                try (privateKeys.first ?? publicKeys.first).map { try module.label(session: session, object: $0) } ?? ""
            let label = keyLabel.isEmpty ? try module.label(session: session, object: handle) : keyLabel
            var uri = PKCS11URI()
            uri.token = slot.token.label
            uri.serial = slot.token.serialNumber
            if !label.isEmpty { uri.object = label }
            uri.id = id
            entries.append(
                KeyEntry(
                    label: label,
                    id: id,
                    certificate: certificate,
                    privateKeyVisible: !privateKeys.isEmpty,
                    uri: uri.description
                )
            )
        }
        return entries
    }

    static func flagNames(_ flags: CK_FLAGS) -> [String] {
        let names: [(CK_FLAGS, String)] = [
            (CK_FLAGS(CKF_TOKEN_INITIALIZED), "token initialized"), (CK_FLAGS(CKF_LOGIN_REQUIRED), "login required"),
            (CK_FLAGS(CKF_USER_PIN_INITIALIZED), "user PIN initialized"),
            (CK_FLAGS(CKF_PROTECTED_AUTHENTICATION_PATH), "protected authentication path"),
            (CK_FLAGS(CKF_WRITE_PROTECTED), "write protected"), (CK_FLAGS(CKF_RNG), "rng"),
            (CK_FLAGS(CKF_USER_PIN_COUNT_LOW), "user PIN count low"),
            (CK_FLAGS(CKF_USER_PIN_FINAL_TRY), "user PIN final try"),
            (CK_FLAGS(CKF_USER_PIN_LOCKED), "user PIN locked"),
            (CK_FLAGS(CKF_USER_PIN_TO_BE_CHANGED), "user PIN to be changed"),
            (CK_FLAGS(CKF_SO_PIN_LOCKED), "SO PIN locked"),
        ]
        return names.filter { flags & $0.0 != 0 }.map(\.1)
    }
}
