public import CertificateProviders
import RemoteProviderSupport

/// An AWS KMS asymmetric key with `KeyUsage` `SIGN_VERIFY`: it stays in KMS, which signs each
/// message or digest with one `Sign` request.
///
/// What is sent (``AWSKMSMessageType``): with `auto` (the default) a message of at most 4096 bytes
/// (the DER signed attributes of a CMS signature are a few hundred) goes as `MessageType=RAW` and
/// KMS hashes it; with `digest`, or when only a digest is at hand
/// (``signature(forDigest:digestAlgorithm:scheme:)``), the digest goes as `MessageType=DIGEST`.
///
/// As a ``CertificateProviders/BatchSigningKey`` it signs N messages with N `Sign` requests, at most
/// ``concurrentRequests`` in flight at once (KMS has no batch action).
///
/// Every returned signature is checked here before it is returned: against the certificate when
/// the identity has one (the provider checked beforehand that it carries this key), else against
/// the key's own public key from `GetPublicKey`. One that does not verify fails the whole call with
/// `.cryptoFailure`, so it never reaches a CMS container.
public struct AWSKMSSigningKey: BatchSigningKey {
    /// What `GetPublicKey` said about the key (its ARN, usage, public key).
    public let key: AWSKMSKeyDescription
    /// The certificate issued for the key, or nil for a key without one yet (a certificate request).
    public let certificate: Certificate?
    /// How messages are sent.
    public let messageType: AWSKMSMessageType
    /// The most `Sign` requests in flight at once in a batch.
    public let concurrentRequests: Int
    /// The scheme used by default: ECDSA, or RSA PKCS#1 v1.5 / PSS as the `scheme` parameter says.
    public let defaultScheme: SignatureScheme
    private let client: AWSKMSClient

    /// Describes a key.
    package init(
        key: AWSKMSKeyDescription,
        certificate: Certificate?,
        client: AWSKMSClient,
        messageType: AWSKMSMessageType,
        scheme: SignatureScheme,
        concurrentRequests: Int
    ) {
        self.key = key
        self.certificate = certificate
        self.client = client
        self.messageType = messageType
        defaultScheme = scheme
        self.concurrentRequests = max(1, concurrentRequests)
    }

    /// The key's algorithm, from its public key.
    public var publicKeyAlgorithm: PublicKeyAlgorithm { key.publicKeyAlgorithm }
    /// The key size in bits.
    public var keySize: Int { key.keySize }
    /// The key's DER SubjectPublicKeyInfo (from `GetPublicKey`, as OpenSSL encodes it).
    public var publicKeyDERRepresentation: [UInt8] { key.publicKeyDERRepresentation }
    /// The most messages one batch call takes (the caller splits larger batches).
    public var maximumBatchSize: Int { 256 }

    /// Signs precomputed digests with `MessageType=DIGEST`, ``concurrentRequests`` at a time.
    /// - Throws: `.invalidParameter` for a digest of the wrong length, or when ``messageType`` is
    ///   `raw` (a digest cannot be sent as the message); as ``signatures(forMessages:digestAlgorithm:scheme:)``.
    public func signatures(
        forDigests digests: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [[UInt8]] {
        guard messageType != .raw else {
            throw CertificateProviderError.invalidParameter(
                "AWS KMS key \(key.keyID): messageType=raw needs the message, and only its digest was given; "
                    + "use messageType=auto or digest"
            )
        }
        for digest in digests { try digestAlgorithm.checkLength(of: digest) }
        return try await sign(digests.map { ($0, $0, false) }, digestAlgorithm: digestAlgorithm, scheme: scheme)
    }

    /// Signs messages, each as `RAW` when ``messageType`` and its size allow, else as the `DIGEST` of
    /// it, ``concurrentRequests`` at a time.
    /// - Throws: `.invalidParameter` when ``messageType`` is `raw` and a message is over 4096 bytes;
    ///   `.unsupportedAlgorithm` for a digest or scheme KMS does not sign with this key (KMS lists
    ///   the key's algorithms: a P-384 key signs only with SHA-384);
    ///   `.cryptoFailure` when a returned value does not verify; the client's errors
    ///   (`.authenticationFailed`, `.serverRejected`, `.network`, `.timeout`, …).
    public func signatures(
        forMessages messages: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [[UInt8]] {
        let items = try messages.map { message -> (sent: [UInt8], digest: [UInt8], raw: Bool) in
            let fits = message.count <= AWSKMSMessageType.rawMessageLimit
            if messageType == .raw, !fits {
                throw CertificateProviderError.invalidParameter(
                    "AWS KMS signs at most \(AWSKMSMessageType.rawMessageLimit) bytes with messageType=raw, not "
                        + "\(message.count); use messageType=auto"
                )
            }
            let digest = digestAlgorithm.hash(message)
            return messageType != .digest && fits ? (message, digest, true) : (digest, digest, false)
        }
        return try await sign(items, digestAlgorithm: digestAlgorithm, scheme: scheme)
    }

    /// Sends one `Sign` per item, at most ``concurrentRequests`` at once, and checks each answer.
    private func sign(
        _ items: [(sent: [UInt8], digest: [UInt8], raw: Bool)],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [[UInt8]] {
        guard !items.isEmpty else {
            throw CertificateProviderError.invalidParameter("AWS KMS: there is nothing to sign")
        }
        let algorithm = try AWSKMSSigningAlgorithm.name(
            for: key.publicKeyAlgorithm,
            digest: digestAlgorithm,
            scheme: scheme
        )
        let offered = key.signingAlgorithms
        guard offered.isEmpty || offered.contains(algorithm) else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "AWS KMS key \(key.keyID) signs with \(offered.joined(separator: ", ")), not \(algorithm): choose the "
                    + "digest its algorithm names (certsign sign --digest sha256|sha384|sha512)"
            )
        }
        let client = self.client
        let keyID = key.keyID
        var results = [[UInt8]?](repeating: nil, count: items.count)
        try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            var next = 0
            func start() {
                let index = next
                let item = items[index]
                next += 1
                group.addTask {
                    let signature = try await client.sign(
                        keyID: keyID,
                        message: item.sent,
                        messageType: item.raw ? "RAW" : "DIGEST",
                        signingAlgorithm: algorithm
                    )
                    return (index, signature)
                }
            }
            while next < min(concurrentRequests, items.count) { start() }
            while let (index, signature) = try await group.next() {
                try check(
                    signature,
                    digest: items[index].digest,
                    index: index,
                    of: items.count,
                    digestAlgorithm,
                    scheme
                )
                results[index] = signature
                if next < items.count { start() }
            }
        }
        return results.compactMap { $0 }
    }

    /// - Throws: `.invalidServerSignature` when `signature` does not verify over `digest` with the
    ///   certificate, or with the key's public key when no certificate is given.
    private func check(
        _ signature: [UInt8],
        digest: [UInt8],
        index: Int,
        of count: Int,
        _ digestAlgorithm: DigestAlgorithm,
        _ scheme: SignatureScheme
    ) throws {
        try ServerSignatureValues.verify(
            [signature],
            count: 1,
            service: "AWS KMS key \(key.keyID): signature \(index + 1) of \(count) returned by Sign",
            against: certificate.map { "the certificate '\($0.subject)'" } ?? "the key's public key",
            digestAlgorithm: digestAlgorithm,
            hint: "a KMS stand-in that hashes a DIGEST again signs the wrong value: use messageType=auto"
        ) { _ in
            certificate?.isValidSignature(
                signature,
                forDigest: digest,
                digestAlgorithm: digestAlgorithm,
                scheme: scheme
            )
                ?? key.isValidSignature(signature, forDigest: digest, digestAlgorithm: digestAlgorithm, scheme: scheme)
        }
    }
}
