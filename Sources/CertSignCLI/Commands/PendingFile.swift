import CertificateProviders
internal import Durability
import Foundation
import Signing

/// A `.pending` file of `certsign prepare`: the pending signature's JSON (what
/// `PendingSignature(jsonData:)` reads, so an app can complete it too) with what `certsign complete`
/// needs besides under one `certsign` key: the document and the level to reach.
struct PendingFile {
    /// The file name suffix `prepare` writes and `pending` lists.
    static let suffix = ".pending"

    /// What `complete` does besides putting the value in.
    struct Completion: Codable, Equatable {
        /// The document's absolute path.
        var document: String
        /// `b-b`, `b-t`, `b-lt` or `b-lta`.
        var level: String
        /// The TSA's URL (b-t and up).
        var tsa: String?
        /// `--tsa-ca` files (absolute paths).
        var tsaCA: [String] = []
        /// `--ca` files (absolute paths), for b-lt and b-lta.
        var ca: [String] = []
        /// The operation on the provider's service that waits for a person's approval (`sign
        /// --no-wait`); nil when the value comes from elsewhere (`prepare`).
        var remote: PendingRemoteSignature?
        /// Where the signature goes (absolute), when the command that started it said (`sign
        /// --no-wait --out FILE | --out-dir DIR`); nil: beside the document, or `complete --out-dir`.
        var output: String?
        /// `declined` or `expired` once `pending resume` heard so from the provider (the file stays,
        /// for the record, until `pending cancel` removes it); nil while the operation may still be
        /// approved.
        var outcome: String?
    }

    var pending: PendingSignature
    var completion: Completion

    /// Whether it is a PDF signature (PAdES) rather than a `.p7s` one.
    var isPAdES: Bool { pending.pdf != nil }

    /// The level `complete` reaches.
    var level: SignatureLevel { SignatureLevel(completion.level) ?? .bB }

    /// The JSON written to the file: the pending signature's, plus `certsign`, encoded in one pass
    /// (`prepare` writes thousands).
    func jsonData() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(Stored(file: self))) + [0x0A]
        } catch {
            throw CertificateProviderError(.cryptoFailure, "the pending file could not be encoded: \(error)")
        }
    }

    /// The file's JSON: the pending signature's own keys and, beside them, the `certsign` section.
    private struct Stored: Encodable {
        let file: PendingFile

        func encode(to encoder: any Encoder) throws {
            try file.pending.encode(to: encoder)
            var container = encoder.container(keyedBy: SectionKey.self)
            try container.encode(file.completion, forKey: .certsign)
        }
    }

    /// The `certsign` section alone, read from the file's JSON.
    private struct Section: Decodable {
        let certsign: Completion?
    }

    private enum SectionKey: String, CodingKey { case certsign }

    /// Writes it to `path` with mode 0600, atomically, refusing a file that exists.
    /// - Throws: `.alreadyExists` naming the file; `.fileSystem`.
    func write(to path: String) throws {
        if case .failure(let error) = Self.writeAll([.success((path, self))], jsonData: [try jsonData()])[0] {
            throw error
        }
    }

    /// Writes each prepared pending file (mode 0600, none over a file that exists) with one flush per
    /// file system (`FileSystem.writeNewFiles`), keeping the failures given and adding the files that
    /// could not be written.
    /// - Returns: per entry, in order, the entry or why its file was not written.
    /// - Parameter jsonData: per entry, its file's ``jsonData()`` when the caller has it (encoded on
    ///   its workers); nil for a failed entry.
    static func writeAll(
        _ entries: [Result<(String, PendingFile), CertificateProviderError>],
        jsonData: [[UInt8]?]
    ) -> [Result<(String, PendingFile), CertificateProviderError>] {
        var files: [(path: String, bytes: [UInt8])] = []
        var positions: [Int] = []
        for (index, (entry, bytes)) in zip(entries, jsonData).enumerated() {
            guard case .success((let path, _)) = entry, let bytes else { continue }
            files.append((path, bytes))
            positions.append(index)
        }
        var outcomes = entries
        for (written, error) in FileSystem.writeNewFiles(files, mode: 0o600).enumerated() {
            guard let error else { continue }
            let path = files[written].path
            outcomes[positions[written]] = .failure(
                error.code == .alreadyExists
                    ? CertificateProviderError(
                        .alreadyExists,
                        "\(path) exists: complete it ('certsign complete \(path) …') or cancel it ('certsign pending "
                            + "cancel ID') before preparing this document again"
                    ) : error
            )
        }
        return outcomes
    }

    /// Reads the `.pending` file at `path`.
    /// - Throws: `.fileSystem` when it cannot be read; `.malformedInput` naming the field when it is
    ///   not a pending signature of `certsign prepare` (or was edited where that shows); the callers
    ///   name the file.
    init(contentsOf path: String, context: CommandContext) throws {
        try self.init(jsonBytes: Data(try context.readInputFile(path, what: "pending file")))
    }

    /// Reads a pending file's JSON (a `.pending` file's bytes, or an item of the journal's queue).
    /// - Throws: `.malformedInput` naming the field when it is not a pending signature of `certsign
    ///   prepare`.
    init(jsonBytes bytes: Data) throws {
        do {
            pending = try PendingSignature(jsonData: bytes)
            guard let section = try JSONDecoder().decode(Section.self, from: bytes).certsign else {
                throw CertificateProviderError.malformedInput("it has no '\(SectionKey.certsign.rawValue)' section")
            }
            completion = section
        } catch let error as CertificateProviderError {
            throw CertificateProviderError(
                error.code,
                "not a pending file of certsign prepare: \(error.reason)"
            )
        } catch {
            throw CertificateProviderError.malformedInput(
                "not a pending file of certsign prepare: its '\(SectionKey.certsign.rawValue)' section is wrong (\(error))"
            )
        }
        guard SignatureLevel(completion.level) != nil else {
            throw CertificateProviderError.malformedInput(
                "not a pending file of certsign prepare: its level '\(completion.level)' is not b-b, b-t, b-lt or b-lta"
            )
        }
    }

    /// Creates a pending file's value.
    init(pending: PendingSignature, completion: Completion) {
        self.pending = pending
        self.completion = completion
    }
}
