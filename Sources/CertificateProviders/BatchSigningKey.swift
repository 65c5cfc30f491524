/// A ``SigningKey`` that signs many digests in one operation, for keys whose every signing call
/// is expensive on its own: a remote service that authorizes each use (one PIN or OTP entry, one
/// round trip) signs N digests with one authorization instead of N.
///
/// The signing coordinator's batch form (`SigningCoordinator.sign(documents:…)`) uses this
/// capability when the identity's key conforms: it prepares every document's signed attributes,
/// asks the key for all the signatures at once (in chunks of at most ``maximumBatchSize``), then
/// finishes each container. Keys that do not conform are asked one digest at a time.
///
/// Contract: the result has one signature per digest, in the same order, each as
/// ``SigningKey/signature(forDigest:digestAlgorithm:scheme:)`` would return it. The batch fails as a
/// whole: when any signature cannot be made (or does not verify), the call throws and returns none.
public protocol BatchSigningKey: SigningKey {
    /// The most digests one call accepts (at least 1); larger batches are split by the caller.
    var maximumBatchSize: Int { get }

    /// Signs precomputed digests, all with the same algorithm and scheme, as one operation.
    /// - Parameters:
    ///   - digests: the digests, each `digestAlgorithm.outputByteCount` bytes.
    ///   - digestAlgorithm: the algorithm the digests were made with.
    ///   - scheme: the signature scheme.
    /// - Returns: one signature per digest, in order.
    /// - Throws: `.invalidParameter` when a digest length does not match `digestAlgorithm` or the
    ///   batch is larger than ``maximumBatchSize``; whatever a single signature would throw.
    func signatures(
        forDigests digests: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [[UInt8]]

    /// Signs messages (the DER signed attributes of CMS signatures), each hashed with
    /// `digestAlgorithm`, as one operation: for services that take the message and hash it
    /// themselves (AWS KMS `MessageType=RAW`). The default hashes each message here and calls
    /// ``signatures(forDigests:digestAlgorithm:scheme:)``.
    /// - Returns: one signature per message, in order.
    /// - Throws: as ``signatures(forDigests:digestAlgorithm:scheme:)``.
    func signatures(
        forMessages messages: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [[UInt8]]
}

extension BatchSigningKey {
    /// Signs one digest as a batch of one.
    public func signature(
        forDigest digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [UInt8] {
        try await signatures(forDigests: [digest], digestAlgorithm: digestAlgorithm, scheme: scheme)[0]
    }

    /// Signs one message as a batch of one (``signatures(forMessages:digestAlgorithm:scheme:)``).
    public func signature(
        for data: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [UInt8] {
        try await signatures(forMessages: [data], digestAlgorithm: digestAlgorithm, scheme: scheme)[0]
    }

    /// Hashes each message with `digestAlgorithm` and calls
    /// ``signatures(forDigests:digestAlgorithm:scheme:)``.
    public func signatures(
        forMessages messages: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [[UInt8]] {
        try await signatures(
            forDigests: messages.map { digestAlgorithm.hash($0) },
            digestAlgorithm: digestAlgorithm,
            scheme: scheme
        )
    }
}
