import CertificateProviders
internal import Durability
import Foundation
import SignatureJournal

/// Making one signature (or one batch key operation's signatures) and its output file, by the
/// identity's ``SigningStrategy``; the journal is not touched here.
extension SigningCoordinator {
    /// Signs a chunk of documents with one batch operation of the key; writes every output file
    /// only once all signatures are made; does not touch the journal.
    func produceBatch(
        _ documents: [Document],
        outputs: [URL?],
        id: ProviderID,
        resolved: ResolvedIdentity,
        key: any BatchSigningKey,
        options: SigningOptions
    ) async throws -> [SigningResult] {
        let signingTime = options.signingTime ?? Date()
        let algorithm = try CMSSigner.resolve(options.digestAlgorithm, for: resolved.identity)
        var digested: [DigestedDocument] = []
        for document in documents {
            digested.append(try await digest(of: document, algorithm: algorithm, options: options, progress: nil))
        }
        try Task.checkCancellation()
        let signatures = try await SignedDataSigner.signBatch(
            digested.map {
                SignedDataSigner.Request(
                    digest: $0.digest,
                    attachedContent: options.isDetached ? nil : $0.content,
                    format: options.format,
                    digestAlgorithm: algorithm,
                    signingTime: signingTime
                )
            },
            identity: resolved.identity,
            key: key
        )
        try Task.checkCancellation()
        var results: [SigningResult] = []
        do {
            for index in documents.indices {
                let upgraded = try await options.upgrade(signatures[index], of: documents[index].name)
                results.append(
                    try Self.finish(
                        signature: upgraded?.signature ?? signatures[index],
                        upgraded: upgraded,
                        signer: resolved.identity.certificate,
                        fingerprint: resolved.fingerprint,
                        documentName: documents[index].name,
                        digested: digested[index],
                        algorithm: algorithm,
                        id: id,
                        options: options,
                        signingTime: signingTime,
                        output: outputs[index]
                    )
                )
            }
        } catch {
            for result in results {
                if let output = result.outputURL { try? FileManager.default.removeItem(at: output) }
            }
            throw error
        }
        return results
    }

    /// The document's digest with `algorithm` and its size, with its content when the signature
    /// embeds it.
    nonisolated func digest(
        of document: Document,
        algorithm: DigestAlgorithm,
        options: SigningOptions,
        progress: SigningProgress?
    ) async throws -> DigestedDocument {
        switch document.source {
        case .bytes(let bytes):
            let digested = DigestedDocument(bytes: bytes, algorithm: algorithm)
            progress?(digested.size, digested.size)
            return digested
        case .file(let url) where options.isDetached:
            let result = try await FileDigest.compute(
                url: url,
                algorithm: algorithm,
                chunkSize: options.chunkSize,
                progress: progress
            )
            return DigestedDocument(digest: result.digest, size: result.size, content: nil)
        case .file(let url):
            let bytes = try await FileDigest.read(
                url: url,
                limit: CMSSigner.attachedFileSizeLimit,
                chunkSize: options.chunkSize,
                progress: progress
            )
            return DigestedDocument(bytes: bytes, algorithm: algorithm)
        }
    }

    /// Makes one signature and writes its output file; does not touch the journal.
    func produce(
        document: Document,
        id: ProviderID,
        resolved: ResolvedIdentity,
        options: SigningOptions,
        output: URL?,
        progress: SigningProgress?
    ) async throws -> SigningResult {
        let identity = resolved.identity
        let signingTime = options.signingTime ?? Date()
        let algorithm = try CMSSigner.resolve(options.digestAlgorithm, for: identity)
        let digested = try await digest(of: document, algorithm: algorithm, options: options, progress: progress)
        try Task.checkCancellation()
        let request = SignedDataSigner.Request(
            digest: digested.digest,
            attachedContent: options.isDetached ? nil : digested.content,
            format: options.format,
            digestAlgorithm: algorithm,
            signingTime: signingTime
        )
        let signature: [UInt8]
        switch resolved.strategy {
        case .serverDocument(let server):
            signature = try await signOnServer(
                server,
                document: document,
                digested: digested,
                algorithm: algorithm,
                options: options,
                expectedSigner: identity.certificate,
                provider: id
            )
        case .localKey(let local):
            // Local keys sign synchronously on this actor (no executor hop per signature), through
            // the identity's cached prepared SignedData.
            signature = try SignedDataSigner.signLocallyWithTemplate(
                request,
                signingTime: signingTime,
                identity: identity,
                key: local
            )
        case .externalKey, .batchKey:
            signature = try await CMSSigner.sign(request, identity: identity)
        }
        try Task.checkCancellation()
        let upgraded = try await options.upgrade(signature, of: document.name)
        return try Self.finish(
            signature: upgraded?.signature ?? signature,
            upgraded: upgraded,
            signer: identity.certificate,
            fingerprint: resolved.fingerprint,
            documentName: document.name,
            digested: digested,
            algorithm: algorithm,
            id: id,
            options: options,
            signingTime: signingTime,
            output: output
        )
    }

    /// Sends the document (or, for a detached signature of a file, its digest) to a server that
    /// builds the signature, and checks what it returns.
    private func signOnServer(
        _ server: any DocumentSigning,
        document: Document,
        digested: DigestedDocument,
        algorithm: DigestAlgorithm,
        options: SigningOptions,
        expectedSigner: Certificate,
        provider id: ProviderID
    ) async throws -> [UInt8] {
        let content = digested.content
        let payload: DocumentSigningRequest.Payload =
            content.map { .content($0) } ?? .digest(digested.digest, algorithm)
        var request = DocumentSigningRequest(
            payload: payload,
            format: options.format,
            isDetached: options.isDetached,
            digestAlgorithm: algorithm
        )
        if content == nil, case .file(let url) = document.source { request.contentFile = url }
        let signature = try await server.signDocument(request)
        try Self.checkServerSignature(
            signature,
            request: request,
            expectedSigner: expectedSigner,
            document: document,
            content: content,
            provider: id
        )
        return signature
    }

    /// Writes a made signature to its output file (when given and `writing`; else the caller makes
    /// that file durable) and builds its result.
    static func finish(
        signature: [UInt8],
        upgraded: UpgradedSignature? = nil,
        signer: Certificate,
        fingerprint: String,
        documentName: String,
        digested: DigestedDocument,
        algorithm: DigestAlgorithm,
        id: ProviderID,
        options: SigningOptions,
        signingTime: Date,
        output: URL?,
        writing: Bool = true
    ) throws -> SigningResult {
        let storage: SignatureRecord.Storage
        if let output {
            // Signatures are public artifacts: 0644 (less the umask), written atomically.
            if writing { try FileSystem.writeAtomically(output.path, outputBytes(signature, options), mode: 0o644) }
            storage = .file(output)
        } else {
            storage = .inline(signature)
        }
        let record = SignatureRecord(
            createdAt: signingTime,
            providerID: id,
            signerSubject: signer.subject,
            signerFingerprint: fingerprint,
            documentName: documentName,
            documentSize: digested.size,
            documentDigest: digested.digest,
            digestAlgorithm: algorithm,
            format: options.levelUpgrade?.format ?? options.format,
            isDetached: options.isDetached,
            storage: storage
        )
        var result = SigningResult(record: record, signature: signature, outputURL: output, signerCertificate: signer)
        result.addedTimestamps = upgraded?.addedTimestamps ?? []
        return result
    }

    /// What a signature file holds: the DER, or its PEM form when the options ask for it.
    static func outputBytes(_ signature: [UInt8], _ options: SigningOptions) -> [UInt8] {
        options.writesPEM ? SignaturePEM.armor(signature) : signature
    }

    /// The cached ESS signing-certificate-v2 of a provider's identity.
    func signingCertificateAttribute(for id: ProviderID, algorithm: DigestAlgorithm) throws -> [UInt8]? {
        guard let resolved = identities[id] else { return nil }
        if let cached = resolved.signingCertificateAttributes[algorithm] { return cached }
        let attribute = try SignedDataBuilder.signingCertificateV2(
            for: resolved.identity.certificate,
            digestAlgorithm: algorithm
        )
        identities[id]?.signingCertificateAttributes[algorithm] = attribute
        return attribute
    }

    /// Checks a server-made signature before anything is written or recorded: it verifies over the
    /// document (without trust anchors: the server's chain is the caller's business), it has one
    /// signer and that signer is the provider's selected certificate, and its format, digest and
    /// detached-ness are the ones asked for.
    /// - Throws: `.serverRejected` when it does not verify; `.serverSignatureMismatch` when it is
    ///   not what was asked for.
    private static func checkServerSignature(
        _ signature: [UInt8],
        request: DocumentSigningRequest,
        expectedSigner: Certificate,
        document: Document,
        content: [UInt8]?,
        provider: ProviderID
    ) throws {
        // The selected certificate's fitness and key size are the caller's choice, as for local
        // keys; what is judged here is whether the server did what it was asked.
        let policy = ValidationPolicy(algorithms: .permissive, requiresSigningKeyUsage: false)
        let result: VerificationResult
        if let content {
            result = CMSVerifier.verify(signature: signature, content: content, trustAnchors: [], policy: policy)
        } else if case .file(let url) = document.source {
            result = try CMSVerifier.verify(signature: signature, contentFileAt: url, trustAnchors: [], policy: policy)
        } else {
            result = CMSVerifier.verify(signature: signature, content: nil, trustAnchors: [], policy: policy)
        }
        try VerificationResult.checkServerSignature(
            result,
            expectedSigner: expectedSigner,
            request: request,
            returned: "provider '\(provider)' returned a signature",
            document: "'\(document.name)'",
            consequence: "nothing was written or recorded"
        )
    }
}
