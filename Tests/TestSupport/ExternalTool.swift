internal import CSystemShims
public import Foundation

/// Runs real command-line tools (`openssl`, `keytool`, `python3`) from tests, so interop is checked
/// against the tools users have, not against our own code.
public enum ExternalTool {
    /// What a finished process left behind.
    public struct Result: Sendable {
        /// The exit status.
        public let status: Int32
        /// Everything written to standard output.
        public let standardOutput: Data
        /// Everything written to standard error.
        public let standardError: Data
        /// Standard output as UTF-8 text.
        public var output: String { String(decoding: standardOutput, as: UTF8.self) }
        /// Standard error as UTF-8 text.
        public var errorOutput: String { String(decoding: standardError, as: UTF8.self) }
        /// Whether the process exited with status 0.
        public var succeeded: Bool { status == 0 }
        /// The command line: the tool and its arguments (which never hold secrets).
        public var command: String { arguments.joined(separator: " ") }
        let arguments: [String]

        /// This result, when the tool exited with status 0.
        /// - Throws: ``Failure`` otherwise.
        @discardableResult
        public func requireSuccess() throws -> Result {
            guard succeeded else { throw Failure(result: self) }
            return self
        }
    }

    /// The full path of `name` on `PATH`, or nil when the tool is not installed.
    public static func path(of name: String) -> String? {
        if name.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The path of an executable product of this package (`certsign`, `journal-stress`, …), built
    /// next to the running test bundle (`.build/<config>/`), or nil when it is not there.
    public static func builtProduct(_ name: String) -> String? {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // The test binary may sit inside a bundle directory: walk up to the build directory.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// Whether `name` is installed.
    public static func isAvailable(_ name: String) -> Bool { path(of: name) != nil }

    /// Runs a tool to completion.
    /// - Parameters:
    ///   - tool: a name on `PATH` or an absolute path.
    ///   - arguments: the arguments (never put secrets here: use `environment` and `env:` options).
    ///   - environment: extra environment variables.
    ///   - input: bytes for standard input (stdin is closed after them).
    ///   - directory: the working directory.
    /// - Throws: when the tool is missing or cannot start.
    @discardableResult
    public static func run(
        _ tool: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        input: Data? = nil,
        directory: URL? = nil
    ) throws -> Result {
        guard let executable = path(of: tool) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "\(tool) is not installed"])
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        if let directory { process.currentDirectoryURL = directory }
        // Close-on-exec pipes: a program another test starts at this moment must not inherit this
        // tool's output pipe, or reading it to the end waits for that program to exit (a server).
        let stdout = try CloseOnExecPipe()
        let stderr = try CloseOnExecPipe()
        let stdin = try CloseOnExecPipe()
        process.standardOutput = stdout.writing
        process.standardError = stderr.writing
        process.standardInput = stdin.reading
        try process.run()
        // The tool holds its own copies now; these ends must close for the reads to reach the end.
        try stdout.writing.close()
        try stderr.writing.close()
        try stdin.reading.close()
        // Drain both pipes concurrently so a chatty tool cannot block on a full pipe.
        let collected = CollectedOutput()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            collected.setError(stderr.reading.readDataToEndOfFile())
            group.leave()
        }
        if let input { stdin.writing.write(input) }
        try? stdin.writing.close()
        let output = stdout.reading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            standardOutput: output,
            standardError: collected.error,
            arguments: [tool] + arguments
        )
    }

    /// A tool that exited with a status other than 0.
    public struct Failure: Error, CustomStringConvertible {
        /// What the tool left behind.
        public let result: Result
        /// The command, its status and its standard error.
        public var description: String { "\(result.command) failed (\(result.status)): \(result.errorOutput)" }
    }

    /// A pipe made with `pipe2(O_CLOEXEC)`: no program started by another thread inherits its ends
    /// (a `Pipe` is not close-on-exec, and marking it afterwards leaves a window).
    /// A test that starts a `Process` itself and reads its output to the end uses one too: its write
    /// end goes to the process, and the test closes it (``writing``) right after `run()`.
    package struct CloseOnExecPipe {
        /// The read end (the test's).
        package let reading: FileHandle
        /// The write end (the process's): close it after `run()`, or the read never ends.
        package let writing: FileHandle

        /// Makes the pipe.
        /// - Throws: `POSIXError` when the system has no descriptors left.
        package init() throws {
            var descriptors: [Int32] = [-1, -1]
            guard CSystemShims_pipeCloseOnExec(&descriptors) == 0 else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
            reading = FileHandle(fileDescriptor: descriptors[0], closeOnDealloc: true)
            writing = FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: true)
        }
    }

    private final class CollectedOutput: @unchecked Sendable {
        // Written once by the reader thread before group.leave(), read after group.wait().
        var error = Data()
        func setError(_ data: Data) { error = data }
    }
}

/// A temporary directory removed when the value is released.
public final class TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// Creates a fresh directory under the system temporary directory.
    public init(prefix: String = "certificate-providers-tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes bytes to a file inside the directory and returns its path.
    @discardableResult
    public func write(_ name: String, _ bytes: some DataProtocol) throws -> String {
        let path = self.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Writes text to a file inside the directory and returns its path.
    @discardableResult
    public func write(_ name: String, text: String) throws -> String { try write(name, Data(text.utf8)) }

    /// Reads a file inside the directory.
    public func read(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path(name)))) }

    deinit { try? FileManager.default.removeItem(at: url) }
}
