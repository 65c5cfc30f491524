public import CertificateProviders
public import Foundation

/// Two-phase signing through the coordinator: the document is read and prepared here, its value is
/// made elsewhere, and completing it adds the level, writes the file atomically and records it in
/// the journal as every other signature.
extension SigningCoordinator {
    /// The provider ID a completed two-phase signature is recorded under unless the caller names one.
    public static let externalSignerID: ProviderID = "external"

    /// Reads `document` and prepares its signature for a key that is not here (see
    /// `CMSSigner.prepare(content:certificate:chain:format:detached:digestAlgorithm:scheme:signingTime:documentName:)`):
    /// `options` give the format, detached or attached, the digest and the signing time; their level
    /// is added on completion. It does not wait for the coordinator (it reads and records nothing of
    /// its state), so many tasks may prepare documents at once.
    /// - Parameters:
    ///   - document: the document.
    ///   - certificate: the signer's certificate.
    ///   - chain: the certificates that go with it.
    ///   - scheme: how the key signs (nil: the key's; `.rsaPSS` for RSA-PSS).
    ///   - options: as for ``sign(document:provider:parameters:options:output:progress:)``.
    ///   - progress: called while the document is read.
    /// - Returns: the pending signature (nothing is written or recorded).
    /// - Throws: `.fileSystem` for a file that cannot be read; `.unsupportedAlgorithm`,
    ///   `.invalidParameter` as the `CMSSigner` variant.
    nonisolated public func prepare(
        document: Document,
        certificate: Certificate,
        chain: [Certificate] = [],
        scheme: SignatureScheme? = nil,
        options: SigningOptions = SigningOptions(),
        progress: SigningProgress? = nil
    ) async throws -> PendingSignature {
        let format = options.format
        let algorithm = try CMSSigner.resolve(options.digestAlgorithm, forKey: certificate.publicKeyAlgorithm)
        let digested = try await digest(of: document, algorithm: algorithm, options: options, progress: progress)
        let signingTime = options.signingTime ?? Date()
        let pending: PendingSignature
        if let content = digested.content, !options.isDetached {
            pending = try CMSSigner.prepare(
                content: content,
                certificate: certificate,
                chain: chain,
                format: format,
                detached: false,
                digestAlgorithm: algorithm,
                scheme: scheme,
                signingTime: signingTime
            )
        } else {
            pending = try CMSSigner.prepare(
                digest: digested.digest,
                certificate: certificate,
                chain: chain,
                format: format,
                digestAlgorithm: algorithm,
                scheme: scheme,
                signingTime: signingTime
            )
        }
        return pending.describing(documentName: document.name, size: digested.size)
    }

    /// Completes a pending signature with the value its key made; see
    /// ``complete(_:with:document:provider:options:output:)``.
    /// - Parameters:
    ///   - pending: what ``prepare(document:certificate:chain:scheme:options:progress:)`` made, here or
    ///     in another process.
    ///   - signatureValue: the key's signature of the pending signature's data to sign.
    ///   - document: the document again, for an attached signature; nil for a detached one.
    ///   - provider: the ID the journal records the signature under.
    ///   - options: the level upgrade (the other options were fixed when it was prepared).
    ///   - output: the file to write, or nil to keep the signature in the journal.
    /// - Returns: the result, as ``sign(document:provider:parameters:options:output:progress:)``'s.
    /// - Throws: as ``complete(_:with:document:provider:options:output:)``.
    public func complete(
        _ pending: PendingSignature,
        signatureValue: [UInt8],
        document: Document? = nil,
        provider: ProviderID = SigningCoordinator.externalSignerID,
        options: SigningOptions = SigningOptions(),
        output: URL? = nil
    ) async throws -> SigningResult {
        try await complete(
            pending,
            with: .signatureValue(signatureValue),
            document: document,
            provider: provider,
            options: options,
            output: output
        )
    }

    /// Completes a pending signature with its answer: the value its key made, or a CMS made
    /// elsewhere over the same document (see ``PendingSignatureAnswer``). The answer is checked
    /// first; then the level `options` ask for (B-T, B-LT, B-LTA) is added, the signature written
    /// atomically to `output` (when given) and recorded in the journal.
    /// - Parameters:
    ///   - pending: what ``prepare(document:certificate:chain:scheme:options:progress:)`` made, here or
    ///     in another process.
    ///   - answer: `.signatureValue(bytes)` or `.cms(bytes)`.
    ///   - document: the document again, for an attached signature (its digest must be the prepared
    ///     one); nil for a detached one.
    ///   - provider: the ID the journal records the signature under.
    ///   - options: the level upgrade (the other options were fixed when it was prepared).
    ///   - output: the file to write, or nil to keep the signature in the journal.
    /// - Returns: the result, as ``sign(document:provider:parameters:options:output:progress:)``'s.
    /// - Throws: `.signatureValueInvalid`, `.pendingSignatureMismatch`, `.malformedInput`,
    ///   `.invalidParameter` as ``PendingSignatureAnswer`` says; the level's errors; `.fileSystem`;
    ///   journal errors. Nothing is written or recorded when it throws.
    public func complete(
        _ pending: PendingSignature,
        with answer: PendingSignatureAnswer,
        document: Document? = nil,
        provider: ProviderID = SigningCoordinator.externalSignerID,
        options: SigningOptions = SigningOptions(),
        output: URL? = nil
    ) async throws -> SigningResult {
        let item = PendingCompletion(pending, with: answer, document: document, options: options, output: output)
        let result = try await completedSignature(item, provider: provider, writing: true)
        try await record([result])
        return result
    }

    /// Checks `item`'s value, adds its level and makes its result; writes the output atomically when
    /// `writing` (else the caller makes it durable). Records nothing.
    nonisolated func completedSignature(
        _ item: PendingCompletion,
        provider: ProviderID,
        writing: Bool
    ) async throws -> SigningResult {
        let pending = item.pending
        var content: [UInt8]?
        if let document = item.document, !pending.detached {
            var reading = item.options
            reading.isDetached = false
            content = try await digest(
                of: document,
                algorithm: pending.digestAlgorithm,
                options: reading,
                progress: nil
            )
            .content
        }
        let signature = try item.answer.signature(for: pending, attachedContent: content)
        let name = pending.documentName ?? item.document?.name ?? pending.id
        // Nonisolated: a batch completes its documents on one worker per core; only recording the
        // results goes through the actor.
        let upgraded =
            item.options.levelUpgrade == nil ? nil : try await item.options.upgrade(signature, of: name)
        var recorded = item.options
        recorded.format = pending.format
        recorded.isDetached = pending.detached
        return try Self.finish(
            signature: upgraded?.signature ?? signature,
            upgraded: upgraded,
            signer: pending.certificate,
            fingerprint: pending.certificate.sha256FingerprintHex,
            documentName: name,
            digested: DigestedDocument(
                digest: pending.contentDigest,
                size: pending.documentSize ?? 0,
                content: content
            ),
            algorithm: pending.digestAlgorithm,
            id: provider,
            options: recorded,
            signingTime: pending.signingTime,
            output: item.output,
            writing: writing
        )
    }
}
