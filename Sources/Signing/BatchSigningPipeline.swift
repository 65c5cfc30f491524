internal import COpenSSL
import CertificateProviders
import Foundation
import Glibc

/// The local-key pipeline of ``SigningCoordinator/signEach(_:outputs:provider:parameters:options:progress:)``:
/// read → hash → sign → write (temporary file, `fsync`, rename) for one group of documents, on as
/// many workers as the machine has cores, so one document's I/O overlaps another's signature.
///
/// Nothing here syncs a directory or touches the journal: the coordinator does both once per group,
/// after every file of the group is renamed into place.
enum BatchSigningPipeline {
    /// What every worker shares: the signer and how to sign.
    struct Signer: Sendable {
        let providerID: ProviderID
        let identity: SigningIdentity
        let key: LocalSigningKey
        let fingerprint: String
        let options: SigningOptions
        let digestAlgorithm: DigestAlgorithm
        let signingTime: Date
        /// The DER ESS signing-certificate-v2 value, encoded once per identity (CAdES-BES only).
        let signingCertificateAttribute: [UInt8]?
    }

    /// The number of workers: one per core, at most 8.
    static var workerCount: Int { min(8, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Signs `documents[range]` on `workers` concurrent workers; one result per document, in order.
    /// A document that fails (unreadable, unwritable output) fails alone.
    static func run(
        _ documents: [Document],
        outputs: [URL?],
        range: Range<Int>,
        signer: Signer,
        workers: Int = workerCount
    ) async -> [Result<SigningResult, CertificateProviderError>] {
        let workers = max(1, min(workers, range.count))
        return await withTaskGroup(of: [(Int, Result<SigningResult, CertificateProviderError>)].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var buffer = ReadBuffer()
                    // One prepared SignedData per worker; keys it does not take sign the usual way.
                    let template =
                        SignedDataTemplate.supports(signer.key)
                        ? try? SignedDataTemplate(
                            identity: signer.identity,
                            key: signer.key,
                            format: signer.options.format,
                            detached: signer.options.isDetached,
                            digestAlgorithm: signer.digestAlgorithm,
                            signingCertificateAttribute: signer.signingCertificateAttribute
                        ) : nil
                    var made: [(Int, Result<SigningResult, CertificateProviderError>)] = []
                    for index in stride(from: range.lowerBound + worker, to: range.upperBound, by: workers) {
                        if Task.isCancelled {
                            made.append(
                                (
                                    index,
                                    .failure(
                                        CertificateProviderError(
                                            .cancelled,
                                            "signing '\(documents[index].name)' was cancelled"
                                        )
                                    )
                                )
                            )
                            continue
                        }
                        do {
                            made.append(
                                (
                                    index,
                                    .success(
                                        try sign(
                                            documents[index],
                                            output: outputs[index],
                                            signer: signer,
                                            template: template,
                                            &buffer
                                        )
                                    )
                                )
                            )
                        } catch let error as CertificateProviderError {
                            made.append((index, .failure(error)))
                        } catch {
                            made.append(
                                (
                                    index,
                                    .failure(
                                        CertificateProviderError(.cryptoFailure, "\(documents[index].name): \(error)")
                                    )
                                )
                            )
                        }
                    }
                    return made
                }
            }
            var results = [Result<SigningResult, CertificateProviderError>?](repeating: nil, count: range.count)
            for await made in group {
                for (index, result) in made { results[index - range.lowerBound] = result }
            }
            return results.map { $0 ?? .failure(CertificateProviderError(.cancelled, "not signed")) }
        }
    }

    /// One document: read and hash it, sign it with OpenSSL, write its file without syncing the
    /// directory.
    static func sign(
        _ document: Document,
        output: URL?,
        signer: Signer,
        template: SignedDataTemplate?,
        _ buffer: inout ReadBuffer
    ) throws -> SigningResult {
        let algorithm = signer.digestAlgorithm
        let detached = signer.options.isDetached
        let digest: [UInt8]
        let size: Int64
        var content: [UInt8]?
        switch document.source {
        case .bytes(let bytes):
            digest = algorithm.hash(bytes)
            size = Int64(bytes.count)
            content = bytes
        case .file(let url):
            let read = try buffer.read(
                url,
                algorithm: algorithm,
                keepingContentUpTo: detached ? nil : CMSSigner.attachedFileSizeLimit
            )
            digest = read.digest
            size = read.size
            content = read.content
        }
        let signature =
            try template?.sign(digest: digest, signingTime: signer.signingTime, attachedContent: content)
            ?? CMSSigner.signLocally(
                digest: digest,
                attachedContent: detached ? nil : content,
                identity: signer.identity,
                key: signer.key,
                format: signer.options.format,
                digestAlgorithm: algorithm,
                signingTime: signer.signingTime,
                signingCertificateAttribute: signer.signingCertificateAttribute
            )
        let storage: SignatureRecord.Storage
        if let output {
            // Public artifacts: 0644 (less the umask); the directory is synced once per group.
            try FileSystem.writeAtomically(output.path, signature, mode: 0o644, syncingDirectory: false)
            storage = .file(output)
        } else {
            storage = .inline(signature)
        }
        let record = SignatureRecord(
            id: recordID(),
            createdAt: signer.signingTime,
            providerID: signer.providerID,
            signerSubject: signer.identity.certificate.subject,
            signerFingerprint: signer.fingerprint,
            documentName: document.name,
            documentSize: size,
            documentDigest: digest,
            digestAlgorithm: algorithm,
            format: signer.options.format,
            isDetached: detached,
            storage: storage
        )
        return SigningResult(
            record: record,
            signature: signature,
            outputURL: output,
            signerCertificate: signer.identity.certificate
        )
    }

    /// A new record ID (``SignatureRecord/newID()``).
    static func recordID() -> String { SignatureRecord.newID() }

    /// A worker's read buffer, allocated once and reused for every document (no allocation, and
    /// no `mmap`/`munmap`, per document).
    struct ReadBuffer: ~Copyable {
        private let storage: UnsafeMutableRawBufferPointer

        init(byteCount: Int = 256 * 1024) {
            storage = UnsafeMutableRawBufferPointer.allocate(byteCount: byteCount, alignment: 4096)
        }

        deinit { storage.deallocate() }

        /// Reads a regular file once: its digest, size and, up to `limit` bytes, its content.
        /// - Throws: `.fileSystem`; `.invalidParameter` when the content is over `limit`.
        func read(
            _ url: URL,
            algorithm: DigestAlgorithm,
            keepingContentUpTo limit: Int64?
        ) throws -> (digest: [UInt8], size: Int64, content: [UInt8]?) {
            let path = url.path
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw FileDigest.fileError("cannot open", url) }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw FileDigest.fileError("cannot read", url) }
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                throw CertificateProviderError(.fileSystem, "'\(path)' is not a regular file")
            }
            if let limit, Int64(info.st_size) > limit {
                throw CertificateProviderError.invalidParameter(
                    "'\(url.lastPathComponent)' has \(info.st_size) bytes; attached signatures are limited to "
                        + "\(limit) bytes, use a detached signature"
                )
            }
            var hasher = DigestAlgorithm.Hasher(algorithm)
            var content: [UInt8]? = limit == nil ? nil : []
            content?.reserveCapacity(Int(info.st_size))
            var done: Int64 = 0
            while true {
                let count = Glibc.read(descriptor, storage.baseAddress, storage.count)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw FileDigest.fileError("cannot read", url)
                }
                if count == 0 { break }
                let chunk = UnsafeRawBufferPointer(rebasing: storage[0..<count])
                hasher.update(chunk)
                done += Int64(count)
                if let limit, done > limit {
                    throw CertificateProviderError.invalidParameter(
                        "'\(url.lastPathComponent)' grew over \(limit) bytes while it was read; attached signatures "
                            + "are limited to \(limit) bytes"
                    )
                }
                content?.append(contentsOf: chunk)
                // A file read in one call (the common small document): no second read to see its end.
                if count < storage.count && Int64(done) == Int64(info.st_size) { break }
            }
            return (hasher.finalize(), done, content)
        }
    }
}
