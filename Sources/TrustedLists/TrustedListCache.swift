public import CertificateProviders
import Durability
public import Foundation

/// A directory of verified trusted lists, filled by ``TrustedListRefresher`` and read offline.
///
/// Layout: the list of the lists as `lotl.xml`, each member state's TL as `TERRITORY.xml` (`BE.xml`),
/// each with a `NAME.source.json` (``TrustedListSource``: its URL and validators), and the LOTL's
/// signing certificates as `lotl-signers.pem`. Only lists that verified are ever written, each
/// atomically; the directory is made 0700 and every file 0600. Reading checks every signature again.
public struct TrustedListCache: Sendable {
    /// The directory.
    public let directory: URL

    /// The file name of the list of the lists.
    public static let listOfTheListsName = "lotl.xml"
    /// The file name of the LOTL's signing certificates (PEM).
    static let signersName = "lotl-signers.pem"

    /// Creates a cache in `directory` (nothing is read or made yet).
    public init(directory: URL) { self.directory = directory }

    /// The default directory: `$XDG_CACHE_HOME/certsign/trusted-lists`, else
    /// `~/.cache/certsign/trusted-lists`.
    /// - Parameter environment: the process environment (for `XDG_CACHE_HOME` and `HOME`).
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            base = URL(fileURLWithPath: cache)
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            base = URL(fileURLWithPath: home).appendingPathComponent(".cache")
        }
        return base.appendingPathComponent("certsign/trusted-lists")
    }

    /// The file name of the TL of `territory` (letters and digits only: a LOTL's text never makes a path).
    public static func fileName(territory: String) -> String {
        let safe = territory.uppercased().unicodeScalars.filter { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
        return (safe.isEmpty ? "unnamed" : String(String.UnicodeScalarView(safe))) + ".xml"
    }

    /// The path of the file `name` in the cache.
    public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The stored copy of the list `name`, when there is one.
    func storedList(_ name: String) -> [UInt8]? { FileSystem.read(path(name)) }

    /// Where the stored copy of the list `name` came from, when it is known.
    public func source(of name: String) -> TrustedListSource? {
        guard let bytes = FileSystem.read(path(Self.sourceName(of: name))) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(TrustedListSource.self, from: Data(bytes))
    }

    /// The LOTL signing certificates stored by the last refresh (empty when there are none).
    public func storedSigners() -> [Certificate] {
        guard let bytes = FileSystem.read(path(Self.signersName)) else { return [] }
        return (try? Certificate.certificates(derOrPEM: bytes)) ?? []
    }

    static func sourceName(of name: String) -> String {
        (name.hasSuffix(".xml") ? String(name.dropLast(4)) : name) + ".source.json"
    }

    /// Creates the directory (0700) when it is missing.
    func prepare() throws {
        try converting { try FileSystem.makePrivateDirectory(directory.path) }
    }

    /// Stores a verified list and where it came from, each file replaced atomically (0600).
    func store(_ bytes: [UInt8], as name: String, source: TrustedListSource) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let record = try encoder.encode(source)
        try converting {
            try FileSystem.writeAtomically(path(name), bytes, syncingDirectory: false)
            try FileSystem.writeAtomically(path(Self.sourceName(of: name)), [UInt8](record))
        }
    }

    /// Stores the LOTL's signing certificates (PEM, 0600).
    func storeSigners(_ signers: [Certificate]) throws {
        let pem = signers.map(\.pemRepresentation).joined()
        try converting { try FileSystem.writeAtomically(path(Self.signersName), Array(pem.utf8)) }
    }

    /// The cached lists, every signature checked again: the LOTL with `lotlSigners` (default: the
    /// certificates the last refresh stored), each TL it points to with its pointer's certificates.
    /// - Parameters:
    ///   - lotlSigners: the LOTL's signing certificates; nil for those stored in the cache.
    ///   - time: the time every list must be current at.
    ///   - limits: how much each list may hold.
    /// - Throws: ``TrustedListError`` `.cacheEmpty` when the cache holds no list of the lists, else
    ///   the first list refused (its code and reason).
    public func load(
        lotlSigners: [Certificate]? = nil,
        at time: Date = Date(),
        limits: TrustedListLimits = TrustedListLimits()
    ) throws -> TrustedListSet {
        let lotl = directory.appendingPathComponent(Self.listOfTheListsName)
        guard FileSystem.exists(lotl.path) else {
            throw TrustedListError(
                .cacheEmpty,
                "the trusted-list cache \(directory.path) holds no verified list of the lists: refresh it first"
            )
        }
        let signers = lotlSigners ?? storedSigners()
        let list = try TrustedList.load(contentsOf: lotl, signers: signers, at: time, limits: limits)
        let tls = Set(list.pointers.filter { $0.isXML && !Self.pointsToListOfTheLists($0) }.map(\.territory))
            .map { directory.appendingPathComponent(Self.fileName(territory: $0)) }
            .filter { FileSystem.exists($0.path) }
            .sorted { $0.path < $1.path }
        return try TrustedListSet.load(files: [lotl] + tls, lotlSigners: signers, at: time, limits: limits)
    }

    /// Whether a pointer of the LOTL names a list of the lists (the LOTL's pointer to itself).
    static func pointsToListOfTheLists(_ pointer: TrustedListPointer) -> Bool {
        pointer.type == TrustedList.listOfTheListsType
    }

    private func converting(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as CertificateProviderError {
            throw TrustedListError(.cacheUnusable, "the trusted-list cache \(directory.path): \(error.reason)")
        }
    }
}
