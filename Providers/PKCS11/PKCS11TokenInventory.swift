internal import CPKCS11
public import CertificateProviders

/// What a PKCS#11 module offers: its slots with tokens, each token's details and flags, and the
/// certificates with keys on it, each with the `pkcs11:` URI to sign with (`certsign tokens`).
///
/// Without a PIN nothing is logged in to, and a token that needs a login shows only its public
/// objects: a private key without a public-key object (one imported with `pkcs11-tool
/// --write-object`, as most PKCS#12 imports do) stays hidden, so its certificate is not listed
/// (``Token/privateKeysHidden``). With a PIN, the one token that needs a login (or the one `token`
/// names) is logged in to for the listing, through the same login rules as the provider, and
/// logged out afterwards.
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
        /// Whether the listing was made logged in (a PIN was given for this token).
        public let loggedIn: Bool
        /// Whether private keys may be missing from ``keys``: the token needs a login and none was
        /// made, so private keys without a public-key object are not visible.
        public let privateKeysHidden: Bool
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
        /// Whether the token asks for the PIN before every signature with this key
        /// (`CKA_ALWAYS_AUTHENTICATE`; known only when the private key is visible).
        public let alwaysAuthenticate: Bool
        /// The URI to sign with: `pkcs11:token=…;serial=…;object=…;id=…`.
        public let uri: String
    }

    /// The initialised tokens present, in slot order.
    public let tokens: [Token]

    /// Lists the tokens of a module, logging in to one when a PIN is given.
    /// - Parameters:
    ///   - modulePath: the module; nil for p11-kit's proxy (every configured module).
    ///   - token: lists only the tokens with these token attributes (label, serial, …); with a PIN,
    ///     names the token the PIN is for. Nil lists every token.
    ///   - pin: the user PIN of the token to log in to: the one token that needs a login, or the one
    ///     `token` names. Nil logs in nowhere (certificates and public keys are public objects).
    /// - Throws: `.moduleNotLoadable` naming the path, `.tokenFailure` naming the `CKR_*` value;
    ///   with a PIN: `.tokenNotFound` (no token matches `token`), `.invalidParameter` (several tokens
    ///   need a login and `token` names none of them), and the login errors of the provider
    ///   (`.wrongPassword`, `.pinLocked`, …).
    public init(modulePath: String? = nil, token: PKCS11URI? = nil, pin: Secret? = nil) throws {
        let path = modulePath ?? PKCS11Module.defaultPath
        let module = try PKCS11Module.load(path)
        do {
            // Uninitialised tokens (SoftHSM's free slot, blank cards) hold nothing to sign with.
            let slots = try module.slotsWithTokens().filter { slot in
                slot.token.flags & CK_FLAGS(CKF_TOKEN_INITIALIZED) != 0
                    && (token.map { PKCS11TokenConnection.matches($0, slot) } ?? true)
            }
            let loginSlot = try pin.map { _ in try Self.slotToLogIn(slots, token: token, module: path) } ?? nil
            tokens = try slots.map { slot in
                let needsLogin = slot.token.flags & CK_FLAGS(CKF_LOGIN_REQUIRED) != 0
                var keys: [KeyEntry]
                if let loginSlot, slot.id == loginSlot, let pin {
                    keys = try Self.loggedInKeys(module: module, slot: slot, pin: pin)
                } else {
                    keys = (try? Self.publicKeys(module: module, slot: slot)) ?? []
                }
                return Token(
                    slotID: UInt(slot.id),
                    slotDescription: slot.description,
                    label: slot.token.label,
                    manufacturer: slot.token.manufacturer,
                    model: slot.token.model,
                    serialNumber: slot.token.serialNumber,
                    flags: Self.flagNames(slot.token.flags),
                    keys: keys,
                    loggedIn: slot.id == loginSlot,
                    privateKeysHidden: needsLogin && slot.id != loginSlot
                )
            }
        } catch let failure as PKCS11Failure {
            throw failure.providerError("listing the tokens of the PKCS#11 module \(path)")
        }
    }

    /// The slot whose token the PIN is for: the one that needs a login among `slots`.
    private static func slotToLogIn(
        _ slots: [PKCS11Module.Slot],
        token: PKCS11URI?,
        module path: String
    ) throws -> CK_SLOT_ID? {
        guard !slots.isEmpty else {
            throw CertificateProviderError(
                .tokenNotFound,
                "no initialised token \(token.map { "matching \($0.tokenDescription) " } ?? "")is present in the "
                    + "PKCS#11 module \(path), so the PIN is for none"
            )
        }
        let needing = slots.filter { $0.token.flags & CK_FLAGS(CKF_LOGIN_REQUIRED) != 0 }
        guard needing.count <= 1 else {
            let names = needing.map { "'\($0.token.label)' (serial \($0.token.serialNumber))" }.joined(separator: ", ")
            throw CertificateProviderError.invalidParameter(
                "\(needing.count) tokens of the PKCS#11 module \(path) need a login (\(names)); say which one the PIN "
                    + "is for by its label or pkcs11: URI"
            )
        }
        return needing.first?.id
    }

    /// The keys of the token in `slot`, logged in with `pin` (as a provider logs in) and logged out after.
    private static func loggedInKeys(module: PKCS11Module, slot: PKCS11Module.Slot, pin: Secret) throws -> [KeyEntry] {
        var filter = PKCS11URI()
        filter.token = slot.token.label
        filter.serial = slot.token.serialNumber
        filter.slotID = UInt(slot.id)
        let connection = try PKCS11TokenConnection(module: module, tokenFilter: filter, pin: pin)
        defer { connection.close() }
        return try connection.withSession { session, _ in try keys(module: module, slot: slot, session: session) }
    }

    /// The keys of the token in `slot` that show without a login.
    private static func publicKeys(module: PKCS11Module, slot: PKCS11Module.Slot) throws -> [KeyEntry] {
        var session: CK_SESSION_HANDLE = 0
        try module.call("C_OpenSession") {
            $0.C_OpenSession?(slot.id, CK_FLAGS(CKF_SERIAL_SESSION), nil, nil, &session)
        }
        defer { _ = module.rv { $0.C_CloseSession?(session) } }
        return try keys(module: module, slot: slot, session: session)
    }

    /// Every certificate with a private or public key of the same CKA_ID that `session` can see.
    private static func keys(
        module: PKCS11Module,
        slot: PKCS11Module.Slot,
        session: CK_SESSION_HANDLE
    ) throws -> [KeyEntry] {
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
            let alwaysAuthenticate = try privateKeys.first.map {
                try module.boolAttribute(session: session, object: $0, CK_ATTRIBUTE_TYPE(CKA_ALWAYS_AUTHENTICATE))
            }
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
                    alwaysAuthenticate: alwaysAuthenticate ?? false,
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
