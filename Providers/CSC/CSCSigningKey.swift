public import CertificateProviders
import RemoteProviderSupport

/// The key of a CSC credential: it stays on the service, which signs hashes after an authorization.
///
/// Every signing call is one `credentials/authorize` (with the PIN and OTP the credential asks for)
/// and one `signatures/signHash`. When the service asks the user to approve the authorization itself
/// (it answers HTTP 202 with a handle, as a CSC service does for a credential whose authorization it
/// completes on the user's device), the key asks `credentials/authorizeCheck` until the SAD comes,
/// for at most ``CSCAsynchronousMode/approvalTimeout``; no parameter turns this on, the service's
/// answer does. As a ``CertificateProviders/BatchSigningKey`` it signs N digests
/// with one authorization of `numSignatures` = N (for SCAL 2 the authorization carries all N hashes)
/// and one `signHash` with N hashes, in chunks of at most the credential's `multisign`.
///
/// Each returned value is checked against the credential's certificate before it is returned: a value
/// that does not verify over its digest fails the whole call with `.invalidServerSignature`, so it
/// never reaches a CMS container.
public struct CSCSigningKey: BatchSigningKey {
    /// The credential's ID on the service.
    public let credentialID: String
    /// The credential as `credentials/info` described it.
    public let credential: CSCCredential
    /// The credential's certificate (the leaf), against which every signature is checked.
    public let certificate: Certificate
    /// The certificate's key algorithm.
    public let publicKeyAlgorithm: PublicKeyAlgorithm
    /// The certificate's key size in bits.
    public let keySize: Int
    /// The certificate's SubjectPublicKeyInfo (DER).
    public let publicKeyDERRepresentation: [UInt8]
    /// How the key waits for a person, or nil to sign synchronously (see ``ApprovalSigningKey``).
    public let asynchronous: CSCAsynchronousMode?
    /// How long a synchronous signature waits, in seconds, for an authorization the service
    /// completes with the user (`credentials/authorizeCheck`); asynchronous signing waits
    /// ``CSCAsynchronousMode/approvalTimeout``.
    public let authorizationTimeout: Int
    let client: CSCClient
    private let pin: Secret?
    private let otp: Secret?

    /// Describes the key of a credential.
    /// - Parameters:
    ///   - credential: the credential (its certificate must be present).
    ///   - certificate: the credential's certificate.
    ///   - client: the client that reaches the service.
    ///   - pin: the PIN, when the credential asks for one.
    ///   - otp: the one-time password, when the credential asks for one.
    ///   - asynchronous: how to wait for a person's approval (default nil: synchronous `signHash`).
    ///   - authorizationTimeout: how long a synchronous signature waits for an authorization the user
    ///     approves, in seconds (default 300).
    public init(
        credential: CSCCredential,
        certificate: Certificate,
        client: CSCClient,
        pin: Secret?,
        otp: Secret?,
        asynchronous: CSCAsynchronousMode? = nil,
        authorizationTimeout: Int = 300
    ) {
        self.asynchronous = asynchronous
        self.authorizationTimeout = authorizationTimeout
        credentialID = credential.id
        self.credential = credential
        self.certificate = certificate
        self.client = client
        self.pin = pin
        self.otp = otp
        publicKeyAlgorithm = certificate.publicKeyAlgorithm
        keySize = certificate.publicKeySize
        publicKeyDERRepresentation = certificate.publicKeyDERRepresentation
    }

    /// The credential's `multisign`: how many signatures one authorization may make.
    public var maximumBatchSize: Int { max(1, credential.multisign) }

    /// Signs digests with one authorization and one `signHash` call; with ``asynchronous`` set, starts
    /// an asynchronous operation and waits for its approval (``CSCAsynchronousMode/approvalTimeout``).
    /// - Throws: `.invalidParameter` for a digest of the wrong length, an empty batch or one over
    ///   ``maximumBatchSize``; `.passwordRequired` when the credential asks for a PIN or OTP that was
    ///   not given; `.unsupportedAlgorithm` when the key offers no algorithm for `scheme` and
    ///   `digestAlgorithm`; `.invalidServerSignature` when a returned value does not verify; the
    ///   client's errors (`.wrongPassword`, `.authorizationExpired`, `.authenticationFailed`, …); when
    ///   asynchronous or when the authorization waits for the user, `.approvalDeclined`,
    ///   `.approvalExpired` and `.timeout`, naming the operation or the authorization's handle.
    public func signatures(
        forDigests digests: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [[UInt8]] {
        if let asynchronous {
            let operation = try await requestSignatures(
                forDigests: digests,
                digestAlgorithm: digestAlgorithm,
                scheme: scheme
            )
            return try await waitForSignatures(
                operation,
                timeout: .seconds(asynchronous.approvalTimeout),
                pollInterval: .seconds(asynchronous.pollInterval)
            )
        }
        let (started, signAlgorithm) = try await authorize(digests, digestAlgorithm: digestAlgorithm, scheme: scheme)
        let authorization = try await client.waitForAuthorization(
            started,
            timeout: .seconds(authorizationTimeout),
            pollInterval: .seconds(CSCAsynchronousMode().pollInterval)
        )
        return try await signHash(
            digests,
            sad: authorization.sad,
            digestAlgorithm: digestAlgorithm,
            scheme: scheme,
            signAlgorithm: signAlgorithm
        )
    }

    /// One synchronous `signatures/signHash` of `digests`, its values checked against the certificate.
    func signHash(
        _ digests: [[UInt8]],
        sad: Secret,
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme,
        signAlgorithm: String
    ) async throws -> [[UInt8]] {
        let signatures = try await client.signHash(
            credentialID: credentialID,
            sad: sad,
            hashes: digests,
            hashAlgorithm: digestAlgorithm,
            signAlgorithm: signAlgorithm
        )
        try certificate.verifyServerSignatures(
            signatures,
            forDigests: digests,
            digestAlgorithm: digestAlgorithm,
            scheme: scheme,
            service: "CSC credential \(credentialID): signatures/signHash"
        )
        return signatures
    }

    /// Checks a batch and authorizes it (`credentials/authorize`): the SAD, or the handle of an
    /// authorization the service completes with the user, and the `signAlgo` to use.
    func authorize(
        _ digests: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> (started: CSCClient.AuthorizationResult, signAlgorithm: String) {
        guard !digests.isEmpty else { throw CertificateProviderError.invalidParameter("CSC: there is nothing to sign") }
        guard digests.count <= maximumBatchSize else {
            throw CertificateProviderError.invalidParameter(
                "CSC credential \(credentialID) signs at most \(maximumBatchSize) hashes per authorization, not "
                    + "\(digests.count)"
            )
        }
        for digest in digests where digest.count != digestAlgorithm.outputByteCount {
            throw CertificateProviderError.invalidParameter(
                "CSC: a \(digestAlgorithm) digest has \(digestAlgorithm.outputByteCount) bytes, not \(digest.count)"
            )
        }
        if credential.needsPIN, pin == nil {
            throw CertificateProviderError(
                .passwordRequired,
                "CSC credential \(credentialID) asks for a PIN: set parameter 'pin'"
            )
        }
        if credential.needsOTP, otp == nil {
            throw CertificateProviderError(
                .passwordRequired,
                "CSC credential \(credentialID) asks for a one-time password: set parameter 'otp'"
            )
        }
        let signAlgorithm = try CSCAlgorithms.signAlgorithm(
            keyAlgorithms: credential.keyAlgorithms,
            publicKeyAlgorithm: publicKeyAlgorithm,
            digest: digestAlgorithm,
            scheme: scheme
        )
        let boundToHashes = credential.scal == 2
        let started = try await client.startAuthorization(
            credentialID: credentialID,
            numSignatures: digests.count,
            hashes: boundToHashes ? digests : nil,
            hashAlgorithm: boundToHashes ? digestAlgorithm : nil,
            pin: credential.needsPIN ? pin : nil,
            otp: credential.needsOTP ? otp : nil
        )
        return (started, signAlgorithm)
    }
}
