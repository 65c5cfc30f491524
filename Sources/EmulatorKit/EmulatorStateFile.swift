import CertificateProviders
internal import Durability
import Foundation
import Synchronization

/// An emulator's state directory (``DSSEmulator/Configuration/stateDirectory``): `state.json`
/// (``EmulatorStateDocument``) in a directory made 0700, the file written 0600 and atomically (a
/// new file renamed over the old one, synced) after every change, so a killed emulator leaves the
/// state before or after a change, never a torn file. A file that cannot be read back is an error
/// naming it, never silently replaced.
final class EmulatorStateFile: Sendable {
    /// The state directory.
    let directory: String
    private let document: Mutex<EmulatorStateDocument>
    /// The exclusive lock on `DIR/lock`, held while an emulator serves this state (from start to
    /// stop): a second emulator on the same directory would rewrite `state.json` under the first one.
    private let lock = Mutex<HeldLock?>(nil)

    /// `DIR/state.json`.
    var path: String { Self.path(in: directory) }

    private static func path(in directory: String) -> String {
        (directory as NSString).appendingPathComponent("state.json")
    }

    /// The state kept in `directory`, or nil when it holds none yet.
    /// - Throws: `.storeCorrupted` naming the file when it is damaged or of another version;
    ///   `.fileSystem` when the directory cannot be made or the file not read.
    static func load(from directory: String) throws -> EmulatorStateFile? {
        try FileSystem.checkPrivateDirectory(directory, what: "the emulator state directory")
        try FileSystem.makePrivateDirectory(directory)
        let path = path(in: directory)
        guard FileSystem.exists(path) else { return nil }
        guard let bytes = FileSystem.read(path) else {
            throw FileSystem.failure("reading the emulator state", path)
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let document: EmulatorStateDocument
        do {
            document = try decoder.decode(EmulatorStateDocument.self, from: Data(bytes))
            guard document.version == EmulatorStateDocument.currentVersion else {
                throw CertificateProviderError(
                    .storeCorrupted,
                    "version \(document.version), this emulator reads \(EmulatorStateDocument.currentVersion)"
                )
            }
            // Every key and certificate must read back before the emulator serves anything.
            _ = try document.makeSeed()
            _ = try document.makeTimestampIdentity()
        } catch {
            let why = (error as? CertificateProviderError)?.reason ?? String(describing: error)
            throw CertificateProviderError(
                .storeCorrupted,
                "the emulator state \(path) is damaged (\(why)); it is left as it is: move it aside to start "
                    + "with a fresh state, or restore it"
            )
        }
        return EmulatorStateFile(directory: directory, document: document)
    }

    /// Takes the directory's lock (`DIR/lock`, recording this process's ID in it) until
    /// ``releaseLock()``; no-op when this state holds it already.
    /// - Throws: `.fileSystem` naming the directory and the process that holds the lock when another
    ///   emulator serves it.
    func acquireLock() throws {
        try lock.withLock { held in
            if held == nil { held = HeldLock(try Self.lock(directory)) }
        }
    }

    /// Gives the directory's lock up (an emulator that stopped).
    func releaseLock() { lock.withLock { $0 = nil } }

    private static func lock(_ directory: String) throws -> FileSystem.Lock {
        let path = (directory as NSString).appendingPathComponent("lock")
        guard let lock = try FileSystem.Lock(tryingPath: path) else {
            let holder = FileSystem.read(path).map { String(decoding: $0, as: UTF8.self) }?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let who = holder.flatMap { Int32($0) }.map { "process \($0)" } ?? "another process"
            throw CertificateProviderError(
                .fileSystem,
                "the emulator state \(directory) is in use: \(who) serves it (it holds \(path)); stop that "
                    + "emulator, or give another --state directory"
            )
        }
        lock.record("\(getpid())\n")
        return lock
    }

    /// Writes a new state into `directory` (which holds none).
    /// - Throws: `.fileSystem` naming the file.
    static func create(in directory: String, _ document: EmulatorStateDocument) throws -> EmulatorStateFile {
        let file = EmulatorStateFile(directory: directory, document: document)
        try file.update { _ in }
        return file
    }

    private init(directory: String, document: EmulatorStateDocument) {
        self.directory = directory
        self.document = Mutex(document)
    }

    /// The state as last written.
    var current: EmulatorStateDocument { document.withLock { $0 } }

    /// Changes the state and writes it (under one lock, so writes land in the order of changes).
    /// - Throws: `.fileSystem` naming the file; the state in memory is then left unchanged.
    func update(_ change: (inout EmulatorStateDocument) throws -> Void) throws {
        try document.withLock { document in
            var changed = document
            try change(&changed)
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try FileSystem.writeAtomically(path, Array(try encoder.encode(changed)), mode: 0o600)
            document = changed
        }
    }
}

/// Keeps a lock for as long as the state file lives. Nothing calls into the lock once it is made (its
/// deinit unlocks), so sharing this immutable reference between threads is safe.
private final class HeldLock: @unchecked Sendable {
    let lock: FileSystem.Lock
    init(_ lock: FileSystem.Lock) { self.lock = lock }
}
