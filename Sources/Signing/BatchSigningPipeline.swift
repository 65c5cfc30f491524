internal import COpenSSL
import CertificateProviders
internal import Durability
import Foundation
import Glibc
import SignatureJournal

/// The local-key pipeline of ``SigningCoordinator/signEach(_:outputs:provider:parameters:options:progress:)``:
/// read → hash → sign → write for one group of documents, on as many workers as the machine has
/// cores, so one document's I/O overlaps another's signature.
///
/// How a signature file is written depends on how many files of the group go to its file system
/// (``syncPlan(_:range:)``):
/// - at least ``minimumFilesPerFileSystemSync``: the worker writes a hidden temporary file without
///   `fsync` and leaves it there; after the group, ``makeDurable(_:temporaries:)`` flushes each such
///   file system with one `syncfs(2)` and then renames every temporary file into place;
/// - fewer: the worker writes the temporary file, `fsync`s it and renames it at once (a `syncfs` for
///   a handful of files would cost more than their `fsync`s, and would flush other programs' data).
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
        /// The prepared SignedData of this batch's workers, kept from one group to the next.
        let templates = SignedDataTemplatePool()

        /// A new prepared SignedData for one worker, or nil for keys that do not sign that way.
        func makeTemplate() -> SignedDataTemplate? {
            guard SignedDataTemplate.supports(key) else { return nil }
            return try? SignedDataTemplate(
                identity: identity,
                key: key,
                format: options.format,
                detached: options.isDetached,
                digestAlgorithm: digestAlgorithm,
                signingCertificateAttribute: signingCertificateAttribute
            )
        }
    }

    /// The number of workers: one per core, at most 8.
    static var workerCount: Int { min(8, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

    /// The fewest files of one group on one file system for which the group is made durable with one
    /// `syncfs(2)` instead of an `fsync` per file.
    static let minimumFilesPerFileSystemSync = 8

    /// What one group's pipeline made: one result per document, in order, and for each document
    /// whose file is still a temporary (deferred sync) the temporary's path.
    struct Group {
        var results: [Result<SigningResult, CertificateProviderError>]
        var temporaries: [String?]
    }

    /// For each document of `range` (in order): whether its output is written without `fsync` and
    /// made durable with the group (one `syncfs` for its file system). True for the outputs of file
    /// systems (by `st_dev` of the output's directory, examined once per directory) that receive at
    /// least ``minimumFilesPerFileSystemSync`` files of the group.
    static func syncPlan(_ outputs: [URL?], range: Range<Int>) -> [Bool] {
        var directories: [String] = []
        directories.reserveCapacity(range.count)
        var perDirectory: [String: Int] = [:]
        for index in range {
            guard let output = outputs[index] else {
                directories.append("")
                continue
            }
            let directory = output.deletingLastPathComponent().path
            directories.append(directory)
            perDirectory[directory, default: 0] += 1
        }
        var deviceOf: [String: UInt64] = [:]
        var perDevice: [UInt64: Int] = [:]
        for (directory, count) in perDirectory {
            guard let device = FileSystem.device(of: directory) else { continue }
            deviceOf[directory] = device
            perDevice[device, default: 0] += count
        }
        return directories.map { directory in
            guard let device = deviceOf[directory] else { return false }
            return perDevice[device, default: 0] >= minimumFilesPerFileSystemSync
        }
    }

    /// Makes the deferred files of a group durable and gives them their final names: one
    /// `syncfs(2)` per file system (on the directory of its first file), then every temporary file
    /// renamed over its output. When a file system cannot be synced, every deferred document on it
    /// fails with that `.fileSystem` error (it names the directory) and its temporary file is removed;
    /// a rename that fails fails its document alone. Nothing is renamed before its file system is
    /// synced, so a final name never appears for bytes that are not on the device.
    ///
    /// Directories are not synced here (the coordinator syncs each once, after this).
    static func makeDurable(
        _ results: inout [Result<SigningResult, CertificateProviderError>],
        temporaries: [String?]
    ) {
        var firstDirectory: [UInt64: String] = [:]
        var deviceOfDirectory: [String: UInt64?] = [:]
        var devices: [UInt64?] = Array(repeating: nil, count: results.count)
        for index in results.indices {
            guard temporaries[index] != nil, case .success(let result) = results[index],
                let output = result.outputURL
            else { continue }
            let directory = output.deletingLastPathComponent().path
            let device: UInt64?
            if let known = deviceOfDirectory[directory] {
                device = known
            } else {
                device = FileSystem.device(of: directory)
                deviceOfDirectory[directory] = device
            }
            devices[index] = device
            if let device, firstDirectory[device] == nil { firstDirectory[device] = directory }
        }
        var failures: [UInt64: CertificateProviderError] = [:]
        for (device, directory) in firstDirectory {
            do { try FileSystem.syncFileSystem(of: directory) } catch let error as CertificateProviderError {
                failures[device] = error
            } catch {
                failures[device] = CertificateProviderError(.fileSystem, "syncing '\(directory)': \(error)")
            }
        }
        for index in results.indices {
            guard let temporary = temporaries[index] else { continue }
            guard case .success(let result) = results[index], let output = result.outputURL else {
                unlink(temporary)
                continue
            }
            guard let device = devices[index] else {
                unlink(temporary)
                results[index] = .failure(
                    FileSystem.failure("examining the directory", output.deletingLastPathComponent().path)
                )
                continue
            }
            if let error = failures[device] {
                unlink(temporary)
                results[index] = .failure(error)
                continue
            }
            do { try FileSystem.renameIntoPlace(temporary, output.path) } catch let error as CertificateProviderError {
                results[index] = .failure(error)
            } catch {
                results[index] = .failure(CertificateProviderError(.fileSystem, "\(output.path): \(error)"))
            }
        }
    }

    /// Removes what a group left for documents that will not be acknowledged: the temporary file
    /// when the sync was deferred (the final name was never touched, so an older signature there
    /// stays), else the output file.
    static func discard(_ result: SigningResult, temporary: String?) {
        if let temporary {
            unlink(temporary)
        } else if let output = result.outputURL {
            try? FileManager.default.removeItem(at: output)
        }
    }

    /// Signs `documents[range]` on `workers` concurrent workers; one result per document, in order.
    /// A document that fails (unreadable, unwritable output) fails alone. Where `deferringSync` (one
    /// flag per document of `range`, see ``syncPlan(_:range:)``) is true, the signature is left in
    /// a temporary file for ``makeDurable(_:temporaries:)``.
    static func run(
        _ documents: [Document],
        outputs: [URL?],
        range: Range<Int>,
        signer: Signer,
        deferringSync: [Bool]? = nil,
        workers: Int = workerCount
    ) async -> Group {
        let workers = max(1, min(workers, range.count))
        return await withTaskGroup(of: [Made].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    await work(
                        stride(from: range.lowerBound + worker, to: range.upperBound, by: workers),
                        documents,
                        outputs: outputs,
                        range: range,
                        signer: signer,
                        deferringSync: deferringSync
                    )
                }
            }
            var results = [Result<SigningResult, CertificateProviderError>?](repeating: nil, count: range.count)
            var temporaries = [String?](repeating: nil, count: range.count)
            for await made in group {
                for (index, result, temporary) in made {
                    results[index - range.lowerBound] = result
                    temporaries[index - range.lowerBound] = temporary
                }
            }
            return Group(
                results: results.map { $0 ?? .failure(CertificateProviderError(.cancelled, "not signed")) },
                temporaries: temporaries
            )
        }
    }

    /// What a worker made for one document: its index, its result and its temporary file.
    typealias Made = (Int, Result<SigningResult, CertificateProviderError>, String?)

    /// One worker of ``run(_:outputs:range:signer:deferringSync:workers:)``: signs the documents at
    /// `indexes`, one after the other, with one prepared SignedData (kept for the batch's next group
    /// unless it met an OpenSSL failure).
    private static func work(
        _ indexes: StrideTo<Int>,
        _ documents: [Document],
        outputs: [URL?],
        range: Range<Int>,
        signer: Signer,
        deferringSync: [Bool]?
    ) async -> [Made] {
        var buffer = ReadBuffer()
        // Keys the template does not take sign the usual way.
        let template = signer.templates.take() ?? signer.makeTemplate()
        var made: [Made] = []
        var templateFailed = false
        for (count, index) in indexes.enumerated() {
            // The cooperative pool has a thread per core and never preempts: without a yield, the
            // workers would hold every thread until their share is signed, and the previous group's
            // commit (journal, syncfs) could not run beside them.
            if count % 8 == 7 { await Task.yield() }
            if Task.isCancelled {
                let error = CertificateProviderError(.cancelled, "signing '\(documents[index].name)' was cancelled")
                made.append((index, .failure(error), nil))
                continue
            }
            do {
                let (result, temporary) = try sign(
                    documents[index],
                    output: outputs[index],
                    signer: signer,
                    template: template,
                    deferringSync: deferringSync?[index - range.lowerBound] ?? false,
                    &buffer
                )
                made.append((index, .success(result), temporary))
            } catch let error as CertificateProviderError {
                made.append((index, .failure(error), nil))
                templateFailed = templateFailed || error.code == .cryptoFailure
            } catch {
                let failure = CertificateProviderError(.cryptoFailure, "\(documents[index].name): \(error)")
                made.append((index, .failure(failure), nil))
                templateFailed = true
            }
        }
        if let template, !templateFailed { signer.templates.put(template) }
        return made
    }

    /// One document: read and hash it, sign it with OpenSSL, write its file without syncing the
    /// directory. With `deferringSync` the signature is written to a temporary file without `fsync`
    /// and not renamed; its path is returned beside the result.
    static func sign(
        _ document: Document,
        output: URL?,
        signer: Signer,
        template: SignedDataTemplate?,
        deferringSync: Bool,
        _ buffer: inout ReadBuffer
    ) throws -> (SigningResult, String?) {
        let algorithm = signer.digestAlgorithm
        let detached = signer.options.isDetached
        let digested: DigestedDocument
        switch document.source {
        case .bytes(let bytes):
            digested = DigestedDocument(bytes: bytes, algorithm: algorithm)
        case .file(let url):
            let read = try buffer.read(
                url,
                algorithm: algorithm,
                keepingContentUpTo: detached ? nil : CMSSigner.attachedFileSizeLimit
            )
            digested = DigestedDocument(digest: read.digest, size: read.size, content: read.content)
        }
        let (digest, size, content) = (digested.digest, digested.size, digested.content)
        let signature =
            try template?.sign(digest: digest, signingTime: signer.signingTime, attachedContent: content)
            ?? SignedDataSigner.signLocally(
                SignedDataSigner.Request(
                    digest: digest,
                    attachedContent: detached ? nil : content,
                    format: signer.options.format,
                    digestAlgorithm: algorithm,
                    signingTime: signer.signingTime
                ),
                signingTime: signer.signingTime,
                identity: signer.identity,
                key: signer.key,
                signingCertificateAttribute: signer.signingCertificateAttribute
            )
        let storage: SignatureRecord.Storage
        var temporary: String?
        if let output {
            // Public artifacts: 0644 (less the umask); the directory is synced once per group.
            let bytes = signer.options.writesPEM ? SignaturePEM.armor(signature) : signature
            if deferringSync {
                temporary = try FileSystem.writeTemporary(for: output.path, bytes, mode: 0o644)
            } else {
                try FileSystem.writeAtomically(output.path, bytes, mode: 0o644, syncingDirectory: false)
            }
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
        let result = SigningResult(
            record: record,
            signature: signature,
            outputURL: output,
            signerCertificate: signer.identity.certificate
        )
        return (result, temporary)
    }

    /// A new record ID (`SignatureRecord.newID()`).
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
