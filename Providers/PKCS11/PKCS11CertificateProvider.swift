internal import CPKCS11
public import CertificateProviders
import Foundation
import Synchronization

extension ProviderParameters.Key {
    /// Renamed ``PKCS11CertificateProvider/ParameterKey/module`` (the `module` key).
    @available(*, deprecated, renamed: "PKCS11CertificateProvider.ParameterKey.module")
    public static var pkcs11Module: Self { PKCS11CertificateProvider.ParameterKey.module }
    /// Renamed ``PKCS11CertificateProvider/ParameterKey/uri`` (the `uri` key).
    @available(*, deprecated, renamed: "PKCS11CertificateProvider.ParameterKey.uri")
    public static var pkcs11URI: Self { PKCS11CertificateProvider.ParameterKey.uri }
    /// Renamed ``PKCS11CertificateProvider/ParameterKey/pin`` (the `pin` key).
    @available(*, deprecated, renamed: "PKCS11CertificateProvider.ParameterKey.pin")
    public static var pkcs11PIN: Self { PKCS11CertificateProvider.ParameterKey.pin }
    /// Renamed ``PKCS11CertificateProvider/ParameterKey/scheme`` (the `scheme` key).
    @available(*, deprecated, renamed: "PKCS11CertificateProvider.ParameterKey.scheme")
    public static var pkcs11Scheme: Self { PKCS11CertificateProvider.ParameterKey.scheme }
}

/// The `pkcs11` provider: signs with a private key on a PKCS#11 token (smart card, USB token, HSM;
/// SoftHSM2 in tests), found by an RFC 7512 `pkcs11:` URI together with its certificate.
///
/// Parameters (keys are static members of ``ParameterKey``): ``schema`` declares them
/// (key, type, default, secret or not, meaning); `certsign providers --params pkcs11` prints them.
///
/// - ``initialize(options:)`` loads the module (once per process), finds the token, checks the PIN
///   flags and logs in once (a wrong PIN is `.wrongPassword` and is never retried; a locked PIN is
///   `.pinLocked` without a login attempt), finds the private key, the certificate with the same
///   CKA_ID (checking that its public key is the key's) and the chain among the token's other
///   certificates, and returns an identity whose key signs on the token.
/// - ``storedCertificate()`` returns that identity while its sessions are open, nil otherwise.
/// - ``deleteStoredCertificate()`` logs out and forgets the identity and the PIN; it never deletes
///   anything on the token.
///
/// Errors name what was looked for: the URI's token attributes (`.tokenNotFound`), its object or id
/// (`.noPrivateKey`, `.certificateNotFound`), the module path (`.moduleNotLoadable`); every failed
/// PKCS#11 call names its `CKR_*` value.
public final class PKCS11CertificateProvider: CertificateProvider {
    /// The parameter keys this provider reads (``schema`` declares them); the raw values are the
    /// `--param` words.
    public enum ParameterKey: ProviderParameterKeys {
        /// The provider whose schema declares the keys (``ProviderParameterKeys/all`` comes from it).
        public typealias Provider = PKCS11CertificateProvider

        /// The module to load (string path; default `p11-kit-proxy.so`, which loads every
        /// module p11-kit is configured with). A `module-path` in the URI's query wins.
        public static let module: ProviderParameters.Key = "module"
        /// The RFC 7512 URI of the key (string), e.g. `pkcs11:token=test;object=rsakey`.
        public static let uri: ProviderParameters.Key = "uri"
        /// The user PIN (secret). Absent: the token's protected authentication path
        /// (PIN pad) is used when it has one. Never kept in ``PKCS11CertificateProvider/parameters``.
        public static let pin: ProviderParameters.Key = "pin"
        /// The scheme an RSA key signs CMS with (string): `rsa-pkcs1v15` (default) or
        /// `rsa-pss` (RSASSA-PSS, RFC 4056, through `CKM_RSA_PKCS_PSS`). EC keys always use `ecdsa`.
        public static let scheme: ProviderParameters.Key = "scheme"
    }

    /// Every key this provider accepts; renamed ``ParameterKey/all``.
    @available(*, deprecated, renamed: "ParameterKey.all")
    public static var acceptedKeys: Set<ProviderParameters.Key> { ParameterKey.all }

    /// The provider's parameters, each declared once (validation, redaction and help come from here).
    public static let schema = ProviderParameterSchema(
        provider: .pkcs11,
        [
            .init(ParameterKey.uri, .string, "the RFC 7512 URI of the key, e.g. pkcs11:token=test;object=rsakey"),
            .init(ParameterKey.module, .path, default: PKCS11Module.defaultPath, "the PKCS#11 module to load"),
            .init(ParameterKey.pin, .secret, "the user PIN (when not given: the PIN pad); never kept"),
            .init(
                ParameterKey.scheme,
                .oneOf([SignatureScheme.rsaPKCS1v15, .rsaPSS, .ecdsa].map(\.description)),
                default: SignatureScheme.rsaPKCS1v15.description,
                "the scheme an RSA key signs with"
            ),
        ],
        rules: [
            { parameters in
                guard let text = try parameters.string(ParameterKey.uri) else { return }
                do { _ = try PKCS11URI(text) } catch let error as CertificateProviderError
                    where error.code == .invalidParameter
                {
                    // The URI parser's reason, prefixed like every schema message with the key it is about.
                    throw CertificateProviderError.invalidParameter("parameter 'uri': \(error.reason)")
                }
            }
        ]
    )

    /// One line saying what the provider is (`certsign providers`).
    public static let summary = "keys on smart cards, USB tokens and HSMs through PKCS#11 (RFC 7512 URIs)"

    private struct State {
        var parameters: ProviderParameters
        var identity: SigningIdentity?
        var connection: PKCS11TokenConnection?
        /// A PIN given to init or setParameters, for the next initialize only (never in `parameters`).
        var pendingPIN: Secret?
    }
    private let state: Mutex<State>

    /// Creates a provider.
    /// - Parameter parameters: initial parameters (validated as by ``setParameters(_:)``).
    /// - Throws: `.invalidParameter` naming a rejected key.
    public init(parameters: ProviderParameters = ProviderParameters()) throws {
        _ = try Self.schema.validate(parameters)
        var kept = parameters
        kept[ParameterKey.pin] = nil
        state = Mutex(State(parameters: kept, pendingPIN: try parameters.secret(ParameterKey.pin)))
    }

    /// The current parameters (`module`, `uri`; never the PIN).
    public var parameters: ProviderParameters { state.withLock { $0.parameters } }

    /// Replaces the parameters after checking every key and value (a PIN given here is used by the
    /// next ``initialize(options:)`` only).
    /// - Throws: `.invalidParameter` naming the key; the previous parameters stay in force.
    public func setParameters(_ parameters: ProviderParameters) throws {
        _ = try Self.schema.validate(parameters)
        var kept = parameters
        kept[ParameterKey.pin] = nil
        let pin = try parameters.secret(ParameterKey.pin)
        state.withLock {
            $0.parameters = kept
            $0.pendingPIN = pin
        }
    }

    /// Logs in to the token the `uri` names and returns the identity of the key it names.
    /// - Throws: `.invalidParameter` (no or bad `uri`, a PIN in the URI, several matching keys),
    ///   `.moduleNotLoadable`, `.tokenNotFound`, `.pinLocked`, `.wrongPassword`, `.passwordRequired`,
    ///   `.noPrivateKey`, `.certificateNotFound`, `.keyCertificateMismatch`, `.unsupportedAlgorithm`,
    ///   `.tokenFailure` (with the CKR name).
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        let token = try openToken(options)
        let identity = try token.run { session, epoch in
            try Self.findIdentity(
                uri: token.uri,
                scheme: token.scheme,
                connection: token.connection,
                session: session,
                epoch: epoch
            )
        }
        let (merged, connection) = (token.parameters, token.connection)
        var kept = merged
        kept[ParameterKey.pin] = nil
        let previous = state.withLock { state -> PKCS11TokenConnection? in
            let previous = state.connection
            state.parameters = kept
            state.identity = identity
            state.connection = connection
            state.pendingPIN = nil
            return previous
        }
        if let previous, previous !== connection { previous.close() }
        return identity
    }

    /// A token opened (module loaded, token found, logged in) for the URI of the parameters.
    struct OpenedToken {
        /// The stored parameters with the options over them.
        let parameters: ProviderParameters
        let uri: PKCS11URI
        let modulePath: String
        let scheme: SignatureScheme?
        let connection: PKCS11TokenConnection

        /// Runs `body` in a session of the token; a PKCS#11 failure names the token and the module.
        func run<R>(_ body: (CK_SESSION_HANDLE, UInt64) throws -> R) throws -> R {
            do {
                return try connection.withSession(body)
            } catch let failure as PKCS11Failure {
                throw failure.providerError("opening \(uri.tokenDescription) in the PKCS#11 module \(modulePath)")
            }
        }
    }

    /// Loads the module and opens the token the `uri` parameter (with `options` over the stored
    /// parameters) names, logged in with the PIN.
    /// - Throws: `.invalidParameter` without a `uri`; the module's and token's errors.
    func openToken(_ options: ProviderParameters) throws -> OpenedToken {
        _ = try Self.schema.validate(options)
        let (stored, pendingPIN) = state.withLock { ($0.parameters, $0.pendingPIN) }
        let merged = stored.merging(options)
        guard let uriText = try merged.string(ParameterKey.uri) else {
            throw CertificateProviderError.invalidParameter(
                "parameter 'uri' (a pkcs11: URI such as pkcs11:token=test;object=rsakey) is required to initialize "
                    + "the pkcs11 provider"
            )
        }
        let uri = try PKCS11URI(uriText)
        let modulePath = try uri.modulePath ?? merged.string(ParameterKey.module) ?? PKCS11Module.defaultPath
        let pin = try merged.secret(ParameterKey.pin) ?? pendingPIN
        let scheme = try merged.string(ParameterKey.scheme).map(SignatureScheme.init)
        let module = try PKCS11Module.load(modulePath)
        do {
            let connection = try PKCS11TokenConnection(module: module, tokenFilter: uri, pin: pin)
            return OpenedToken(
                parameters: merged,
                uri: uri,
                modulePath: modulePath,
                scheme: scheme,
                connection: connection
            )
        } catch let failure as PKCS11Failure {
            throw failure.providerError("opening \(uri.tokenDescription) in the PKCS#11 module \(modulePath)")
        }
    }

    /// The identity of the last ``initialize(options:)`` while its sessions are open; nil after
    /// ``deleteStoredCertificate()`` or before any initialize. Never prompts.
    public func storedCertificate() throws -> SigningIdentity? {
        state.withLock { $0.identity }
    }

    /// Logs out of the token, closes the sessions and forgets the identity and the PIN. Objects on the
    /// token are never deleted. Succeeds when nothing is open.
    public func deleteStoredCertificate() throws {
        let connection = state.withLock { state -> PKCS11TokenConnection? in
            defer {
                state.connection = nil
                state.identity = nil
            }
            return state.connection
        }
        connection?.close()
    }

    // MARK: Finding the key and its certificate

    private static func findIdentity(
        uri: PKCS11URI,
        scheme: SignatureScheme?,
        connection: PKCS11TokenConnection,
        session: CK_SESSION_HANDLE,
        epoch: UInt64
    ) throws -> SigningIdentity {
        let module = connection.module
        let token = try module.tokenInfo(slot: connection.currentSlot)
        let place = "on token '\(token.label)' (serial \(token.serialNumber))"
        let key = try findPrivateKey(uri: uri, place: place, session: session, module: module)
        let label = try module.label(session: session, object: key)
        let id = try module.attribute(session: session, object: key, CK_ATTRIBUTE_TYPE(CKA_ID)) ?? []
        let keyName = "the private key '\(label)'\(id.isEmpty ? "" : " (id \(Self.hex(id)))")"
        let keyType = try module.ulongAttribute(session: session, object: key, CK_ATTRIBUTE_TYPE(CKA_KEY_TYPE))
        guard keyType == CK_ULONG(CKK_RSA) || keyType == CK_ULONG(CKK_EC) else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "\(keyName) \(place) is neither RSA nor EC (CKA_KEY_TYPE \(keyType.map { String($0) } ?? "unknown"))"
            )
        }
        let certificate = try findCertificate(
            of: key,
            keyType: keyType,
            label: label,
            id: id,
            described: "\(keyName) \(place)",
            session: session,
            module: module
        )
        let signingKey = try Self.signingKey(
            key,
            publicKey: (
                certificate.publicKeyAlgorithm, certificate.publicKeySize, certificate.publicKeyDERRepresentation
            ),
            keyName: keyName,
            label: label,
            id: id,
            scheme: scheme,
            connection: connection,
            epoch: epoch,
            session: session
        )
        let chain = try chainCertificates(for: certificate, session: session, module: module)
        return SigningIdentity(certificate: certificate, chain: chain, key: signingKey)
    }

    /// The token's private key `key` as a signing key with `publicKey`: its scheme (`scheme`, else the
    /// key's default) checked against the key, and whether the token asks for the PIN per signature.
    /// - Throws: `.unsupportedAlgorithm` naming `keyName` for a scheme the key cannot sign with; the
    ///   token's errors reading `CKA_ALWAYS_AUTHENTICATE`.
    static func signingKey(
        _ key: CK_OBJECT_HANDLE,
        publicKey: (algorithm: PublicKeyAlgorithm, keySize: Int, der: [UInt8]),
        keyName: String,
        label: String,
        id: [UInt8],
        scheme: SignatureScheme?,
        connection: PKCS11TokenConnection,
        epoch: UInt64,
        session: CK_SESSION_HANDLE
    ) throws -> PKCS11SigningKey {
        let defaultScheme = scheme ?? SignatureScheme.default(for: publicKey.algorithm)
        guard
            defaultScheme == SignatureScheme.default(for: publicKey.algorithm)
                || (publicKey.algorithm.isRSA && defaultScheme == .rsaPSS)
        else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "\(keyName) is a \(publicKey.algorithm) key and cannot sign with scheme '\(defaultScheme)'"
            )
        }
        return PKCS11SigningKey(
            connection: connection,
            publicKey: publicKey,
            label: label,
            id: id,
            handle: key,
            epoch: epoch,
            alwaysAuthenticate: try connection.module.boolAttribute(
                session: session,
                object: key,
                CK_ATTRIBUTE_TYPE(CKA_ALWAYS_AUTHENTICATE)
            ),
            defaultScheme: defaultScheme
        )
    }

    /// The one private key the URI names (by label and ID, or through the certificate it labels).
    /// - Throws: `.invalidParameter` for a URI type that names no key or several matching keys;
    ///   `.noPrivateKey` when none matches.
    static func findPrivateKey(
        uri: PKCS11URI,
        place: String,
        session: CK_SESSION_HANDLE,
        module: PKCS11Module
    ) throws -> CK_OBJECT_HANDLE {
        if let type = uri.type, type != "private", type != "cert" {
            throw CertificateProviderError.invalidParameter(
                "the pkcs11: URI's type=\(type) names no signing key; use type=private or leave type out"
            )
        }
        var keys = try module.findObjects(
            session: session,
            objectClass: CK_OBJECT_CLASS(CKO_PRIVATE_KEY),
            label: uri.object,
            id: uri.id
        )
        if keys.isEmpty, uri.type == "cert" || uri.object != nil {
            // A URI naming the certificate's label (type=cert): take the key with that certificate's ID.
            let certificates = try module.findObjects(
                session: session,
                objectClass: CK_OBJECT_CLASS(CKO_CERTIFICATE),
                label: uri.object,
                id: uri.id
            )
            for certificate in certificates {
                if let id = try module.attribute(session: session, object: certificate, CK_ATTRIBUTE_TYPE(CKA_ID)),
                    !id.isEmpty
                {
                    keys += try module.findObjects(
                        session: session,
                        objectClass: CK_OBJECT_CLASS(CKO_PRIVATE_KEY),
                        id: id
                    )
                }
            }
        }
        guard !keys.isEmpty else {
            throw CertificateProviderError(
                .noPrivateKey,
                "no private key matching \(uri.objectDescription) is \(place)"
            )
        }
        guard keys.count == 1 else {
            let labels = try keys.map { try module.label(session: session, object: $0) }
            throw CertificateProviderError.invalidParameter(
                "\(keys.count) private keys match \(uri.objectDescription) \(place) "
                    + "(\(labels.joined(separator: ", "))); name one with object= or id= in the pkcs11: URI"
            )
        }
        return keys[0]
    }

    /// The certificate of `key`: among those with its ID (or, without an ID, its label), the one whose
    /// public key is the key's.
    /// - Throws: `.certificateNotFound` when the token holds none; `.keyCertificateMismatch` when none
    ///   is the key's.
    private static func findCertificate(
        of key: CK_OBJECT_HANDLE,
        keyType: CK_ULONG?,
        label: String,
        id: [UInt8],
        described keyName: String,
        session: CK_SESSION_HANDLE,
        module: PKCS11Module
    ) throws -> Certificate {
        let certificateHandles =
            id.isEmpty
            ? try module.findObjects(session: session, objectClass: CK_OBJECT_CLASS(CKO_CERTIFICATE), label: label)
            : try module.findObjects(session: session, objectClass: CK_OBJECT_CLASS(CKO_CERTIFICATE), id: id)
        let candidates = try certificateHandles.compactMap { handle -> Certificate? in
            guard let der = try module.attribute(session: session, object: handle, CK_ATTRIBUTE_TYPE(CKA_VALUE)) else {
                return nil
            }
            return try? Certificate(derEncoded: der)
        }
        guard !candidates.isEmpty else {
            throw CertificateProviderError(
                .certificateNotFound,
                "\(keyName) has no certificate with the same \(id.isEmpty ? "CKA_LABEL" : "CKA_ID"); write "
                    + "one to the token, e.g. pkcs11-tool --write-object cert.der --type cert --id "
                    + "\(Self.hex(id, separator: ""))"
            )
        }
        guard
            let certificate = try candidates.first(where: {
                try isKey(key, of: $0, keyType: keyType, id: id, session: session, module: module)
            })
        else {
            throw CertificateProviderError(
                .keyCertificateMismatch,
                "\(keyName) is not the key of the certificate '\(candidates[0].subject)' that has its CKA_ID"
            )
        }
        return certificate
    }

    /// Whether the private key `key` is the one of `certificate`: RSA by its modulus; EC by the point
    /// of the public key object with the same ID, or (when the token has none) by the curve.
    private static func isKey(
        _ key: CK_OBJECT_HANDLE,
        of certificate: Certificate,
        keyType: CK_ULONG?,
        id: [UInt8],
        session: CK_SESSION_HANDLE,
        module: PKCS11Module
    ) throws -> Bool {
        if keyType == CK_ULONG(CKK_RSA) {
            guard let modulus = try module.attribute(session: session, object: key, CK_ATTRIBUTE_TYPE(CKA_MODULUS))
            else {
                return certificate.publicKeyAlgorithm.isRSA
            }
            return Array(modulus.drop { $0 == 0 }) == PKCS11Encoding.rsaModulus(of: certificate)
        }
        guard certificate.publicKeyAlgorithm.isEC else { return false }
        if !id.isEmpty,
            let publicKey = try module.findObjects(
                session: session,
                objectClass: CK_OBJECT_CLASS(CKO_PUBLIC_KEY),
                id: id
            ).first,
            let point = try module.attribute(session: session, object: publicKey, CK_ATTRIBUTE_TYPE(CKA_EC_POINT))
        {
            return PKCS11Encoding.unwrapOctetString(point) == PKCS11Encoding.ecPoint(of: certificate)
        }
        let parameters = try module.attribute(session: session, object: key, CK_ATTRIBUTE_TYPE(CKA_EC_PARAMS))
        return parameters == nil || parameters == PKCS11Encoding.ecParameters(of: certificate)
    }

    /// The issuers of `leaf` among the token's certificates, leaf's issuer first.
    private static func chainCertificates(
        for leaf: Certificate,
        session: CK_SESSION_HANDLE,
        module: PKCS11Module
    ) throws -> [Certificate] {
        let all = try module.findObjects(session: session, objectClass: CK_OBJECT_CLASS(CKO_CERTIFICATE)).compactMap {
            handle -> Certificate? in
            guard let der = try module.attribute(session: session, object: handle, CK_ATTRIBUTE_TYPE(CKA_VALUE)) else {
                return nil
            }
            return try? Certificate(derEncoded: der)
        }
        var chain: [Certificate] = []
        var current = leaf
        while !current.isSelfIssued, chain.count < 8,
            let issuer = all.first(where: {
                $0.subject == current.issuer && $0 != current && !chain.contains($0) && $0 != leaf
            })
        {
            chain.append(issuer)
            current = issuer
        }
        return chain
    }

    static func hex(_ bytes: [UInt8], separator: String = "") -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: separator)
    }

    // MARK: Parameters

    // MARK: Diagnostics (tests and benchmarks in this package)

    /// Login and session counters of the open identity's token connection.
    package var connectionDiagnostics:
        (logins: Int, failedLogins: Int, contextLogins: Int, reopens: Int, sessionsOpened: Int)?
    {
        guard let counters = state.withLock({ $0.connection })?.diagnostics else { return nil }
        return (
            counters.logins, counters.failedLogins, counters.contextLogins, counters.reopens, counters.sessionsOpened
        )
    }

    /// Closes every session of the application on the identity's token from outside the pool
    /// (`C_CloseAllSessions`), as a token pulled out and put back does; the next signature re-opens.
    package func closeAllSessionsBehindThePool() throws {
        guard let connection = state.withLock({ $0.connection }) else { return }
        let slot = connection.currentSlot
        try connection.module.call("C_CloseAllSessions") { $0.C_CloseAllSessions?(slot) }
    }
}
