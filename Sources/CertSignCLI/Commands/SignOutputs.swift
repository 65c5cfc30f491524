import CertificateProviders
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where `certsign sign` writes each signature, and which outputs it refuses.
extension Commands {
    /// Where one signature goes.
    enum SignatureOutput: Equatable {
        case file(URL)
        case standardOutput
    }

    /// The output of every document, in order: `--out FILE`, `--out -`, `--out-dir DIR`, or
    /// `DOCUMENT.p7s` (standard output for DOCUMENT `-`).
    /// - Throws: `UsageError` when a signature would replace a document being signed, or two
    ///   documents would get the same signature file.
    static func signatureOutputs(
        _ documents: [String],
        out: String?,
        directory: String?
    ) throws -> [SignatureOutput] {
        // No file-system access per document beyond what is needed: URLs are built with
        // `isDirectory` given (so Foundation does not stat them) against a working directory read
        // once, and the output folder is made into a URL once.
        let workingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        func fileURL(_ path: String) -> URL {
            URL(fileURLWithPath: path, isDirectory: false, relativeTo: workingDirectory).absoluteURL
        }
        let outputDirectory = directory.map {
            URL(fileURLWithPath: $0, isDirectory: true, relativeTo: workingDirectory).absoluteURL
        }
        let outputs: [SignatureOutput] = documents.map { path in
            if let out {
                return out == "-" ? .standardOutput : .file(fileURL(out))
            }
            if let outputDirectory {
                let name = (path == "-" ? "stdin" : (path as NSString).lastPathComponent) + ".p7s"
                return .file(outputDirectory.appendingPathComponent(name, isDirectory: false))
            }
            return path == "-" ? .standardOutput : .file(fileURL(path + ".p7s"))
        }
        var identities = SignatureFileIdentities()
        let inputs = Set(documents.filter { $0 != "-" }.map { identities.file($0) ?? identities.resolved($0) })
        let someInputMissing = inputs.contains { if case .path = $0 { true } else { false } }
        var seen: [SignatureFileIdentities.Key: String] = [:]
        for (document, output) in zip(documents, outputs) {
            guard case .file(let url) = output else { continue }
            // A signature file that does not exist yet can only be a document that does not exist either.
            let existing = identities.file(url.path)
            if inputs.contains(existing ?? (someInputMissing ? identities.resolved(url.path) : .path(""))) {
                throw UsageError(
                    message:
                        "the signature of \(document) would replace the document \(url.path); choose another --out",
                    usage: signUsage
                )
            }
            let target = identities.output(url)
            if let earlier = seen[target] {
                throw UsageError(
                    message:
                        "\(earlier) and \(document) would both be signed into \(url.path); sign them into different "
                        + "--out-dir folders or rename one",
                    usage: signUsage
                )
            }
            seen[target] = document
        }
        return outputs
    }

    /// ``Format/path(_:)`` of a file without asking the file system (no `getcwd`, no `stat`): the
    /// working directory is read once by the caller.
    static func displayPath(_ path: String, in workingDirectory: URL) -> String {
        path == "-"
            ? path
            : URL(fileURLWithPath: path, isDirectory: false, relativeTo: workingDirectory).absoluteURL
                .standardizedFileURL.path
    }

    /// Tells files apart for ``signatureOutputs(_:out:directory:)`` with one `stat(2)` per document and one per
    /// output folder: an existing file is its device and inode (two spellings, a symbolic link or a
    /// hard link to one file are the same file); a signature file is its folder's device and inode
    /// plus its name. Paths that cannot be `stat`ed fall back to resolving the path name by name.
    struct SignatureFileIdentities {
        enum Key: Hashable {
            case file(dev_t, ino_t)
            case entry(dev_t, ino_t, String)
            case path(String)
        }
        private var folders: [String: Key] = [:]

        /// The file `path` names (following links), or nil when it cannot be `stat`ed.
        func file(_ path: String) -> Key? {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return .file(info.st_dev, info.st_ino)
        }

        /// `path` with every symbolic link resolved, name by name (for paths that do not exist).
        func resolved(_ path: String) -> Key {
            .path(URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path)
        }

        /// Where a signature file goes: its folder (`stat`ed once per folder) and its name.
        mutating func output(_ url: URL) -> Key {
            let folder = url.deletingLastPathComponent().path
            let name = url.lastPathComponent
            let key: Key
            if let known = folders[folder] {
                key = known
            } else {
                key = file(folder) ?? resolved(folder)
                folders[folder] = key
            }
            switch key {
            case .file(let device, let inode): return .entry(device, inode, name)
            case .path(let resolvedFolder): return .path(resolvedFolder + "/" + name)
            case .entry: return .path(url.standardizedFileURL.resolvingSymlinksInPath().path)
            }
        }
    }

    /// Why a signature must not be written over `path` (a link, device, FIFO, socket or
    /// directory), or nil when it is missing or a regular file.
    static func unreplaceableOutput(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFLNK:
            return "it is a symbolic link (certsign never writes through or replaces one; remove the link, or name "
                + "another output)"
        case S_IFDIR: return "it is a directory (use --out-dir for a folder)"
        case S_IFIFO: return "it is a FIFO"
        case S_IFCHR, S_IFBLK: return "it is a device"
        default: return "it is not a regular file"
        }
    }
}
