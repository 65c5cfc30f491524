import Foundation
import Glibc

/// A private PostgreSQL cluster for one test: `initdb` in a temporary directory (as the `postgres`
/// user when the tests run as root, since PostgreSQL refuses root), listening on a free loopback
/// port and on a socket directory inside the temporary directory; stopped and removed when released.
///
/// It has a database `journal` owned by the role `signer`, whose password is only in a `.pgpass`
/// file of mode 0600 (``environment`` points libpq at it): the way certsign is meant to get it.
/// The superuser `postgres` connects through the socket without a password (``psql(_:database:)``),
/// for setting up and for tampering with the tables behind certsign's back.
public final class PostgresCluster: @unchecked Sendable {
    // @unchecked: every field is a constant; the server Process is touched only in init and deinit.
    /// The temporary directory (data directory, socket directory, log, .pgpass).
    public let directory: TemporaryDirectory
    /// The TCP port on 127.0.0.1.
    public let port: UInt16
    /// The role certsign connects as, and its password (only in ``passFile``).
    public let role = "signer"
    /// The password of ``role``.
    public let password: String
    /// The `.pgpass` file (mode 0600) with ``role``'s password.
    public let passFile: String
    private let binaries: String
    private let runAsPostgres: Bool
    private let server: Process

    /// The directory PostgreSQL's server binaries are in, or nil when they are not installed.
    public static var binaryDirectory: String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "\(root)/\($0)/bin" }.first {
            FileManager.default.isExecutableFile(atPath: "\($0)/initdb")
        }
    }

    /// Creates and starts the cluster.
    /// - Throws: a message naming `make deps` when PostgreSQL is not installed; a tool's failure.
    public init() throws {
        guard let binaries = Self.binaryDirectory, ExternalTool.isAvailable("psql") else {
            throw PostgresUnavailable()
        }
        self.binaries = binaries
        runAsPostgres = geteuid() == 0
        directory = try TemporaryDirectory(prefix: "postgres-cluster")
        passFile = directory.path("pgpass")
        password = (0..<24).map { _ in String(format: "%x", Int.random(in: 0..<16)) }.joined()
        port = try Self.freePort()
        let base = directory.path("pg")
        try FileManager.default.createDirectory(atPath: base + "/socket", withIntermediateDirectories: true)
        if runAsPostgres {
            try Self.check(ExternalTool.run("chown", ["-R", "postgres:postgres", base]), "chown")
        }
        try Self.check(
            try Self.run(
                "initdb",
                [
                    "-D", base + "/data", "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256",
                    "--no-sync",
                ],
                binaries: binaries,
                asPostgres: runAsPostgres,
                base: base
            ),
            "initdb"
        )
        // The server runs as a child of this process (pg_ctl's daemonised server left the test
        // runner waiting for pg_ctl forever); its output goes to a log file.
        let log = base + "/server.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let server = Process()
        let postgres = "\(binaries)/postgres"
        let serverArguments = [
            "-D", base + "/data", "-p", "\(port)", "-k", base + "/socket", "-c", "listen_addresses=127.0.0.1",
            "-c", "max_connections=60", "-c", "shared_buffers=32MB",
        ]
        if runAsPostgres {
            server.executableURL = URL(fileURLWithPath: ExternalTool.path(of: "runuser") ?? "/usr/sbin/runuser")
            server.arguments = ["-u", "postgres", "--", postgres] + serverArguments
        } else {
            server.executableURL = URL(fileURLWithPath: postgres)
            server.arguments = serverArguments
        }
        server.currentDirectoryURL = URL(fileURLWithPath: base)
        let logHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        server.standardOutput = logHandle
        server.standardError = logHandle
        server.standardInput = FileHandle.nullDevice
        try server.run()
        try? logHandle.close()
        self.server = server
        let deadline = Date().addingTimeInterval(60)
        while true {
            let ready = try ExternalTool.run("\(binaries)/pg_isready", ["-q", "-h", base + "/socket", "-p", "\(port)"])
            if ready.succeeded { break }
            guard server.isRunning, Date() < deadline else {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw PostgresToolFailure(description: "postgres did not start: \(text)")
            }
            usleep(100_000)
        }
        try Data("127.0.0.1:\(port):*:\(role):\(password)\n".utf8).write(to: URL(fileURLWithPath: passFile))
        chmod(passFile, 0o600)
        try Self.appendToProcessPassFile("127.0.0.1:\(port):*:\(role):\(password)\n")
        try psql("CREATE ROLE \(role) LOGIN PASSWORD '\(password)'", database: "postgres")
        try psql("CREATE DATABASE journal OWNER \(role)", database: "postgres")
    }

    deinit {
        _ = try? run("pg_ctl", ["-D", directory.path("pg") + "/data", "-m", "immediate", "-w", "stop"])
        if server.isRunning { kill(server.processIdentifier, SIGKILL) }
        server.waitUntilExit()
    }

    /// `postgresql://signer@127.0.0.1:PORT/DATABASE` (no password).
    public func uri(database: String = "journal", role: String? = nil) -> String {
        "postgresql://\(role ?? self.role)@127.0.0.1:\(port)/\(database)"
    }

    /// The environment certsign gets the password from (`PGPASSFILE`).
    public var environment: [String: String] { ["PGPASSFILE": passFile] }

    /// Adds a line to the `.pgpass` file (another role's password).
    public func addPassword(role: String, password: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: passFile))
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(Data("127.0.0.1:\(port):*:\(role):\(password)\n".utf8))
        try Self.appendToProcessPassFile("127.0.0.1:\(port):*:\(role):\(password)\n")
    }

    /// The `.pgpass` file (mode 0600) holding the passwords of every cluster this process started.
    ///
    /// `PGPASSFILE` is one variable for the whole process, while tests that run at once each start
    /// a cluster: pointing it at one cluster's file would take the password away from another's
    /// connections. Each cluster adds its lines here (one `O_APPEND` write each, so concurrent
    /// clusters never tear a line), and ``useProcessPassFile()`` points libpq at it once.
    public static let processPassFile: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("certsign-pgpass-\(getpid())").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if descriptor >= 0 { close(descriptor) }
        return path
    }()

    /// Points this process's libpq (`PGPASSFILE`) at ``processPassFile``, once for the process.
    public static func useProcessPassFile() { _ = processPassFileInstalled }

    private static let processPassFileInstalled: Bool = {
        setenv("PGPASSFILE", processPassFile, 1) == 0
    }()

    private static func appendToProcessPassFile(_ line: String) throws {
        let descriptor = open(processPassFile, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw PostgresToolFailure(description: "cannot open \(processPassFile)") }
        defer { close(descriptor) }
        let written = Array(line.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == line.utf8.count else {
            throw PostgresToolFailure(description: "cannot write \(processPassFile)")
        }
    }

    /// Runs SQL as the superuser through the socket; returns its unaligned output.
    @discardableResult
    public func psql(_ sql: String, database: String = "journal") throws -> String {
        let result = try ExternalTool.run(
            "psql",
            [
                "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", directory.path("pg") + "/socket", "-p", "\(port)",
                "-U", "postgres", "-d", database, "-c", sql,
            ]
        )
        try Self.check(result, "psql")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A TCP port of 127.0.0.1 that nothing listens on now (the kernel's pick for port 0).
    public static func freePort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw PostgresToolFailure(description: "socket: \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw PostgresToolFailure(description: "bind: \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// The server's log (for failure messages).
    public var serverLog: String {
        (try? String(contentsOfFile: directory.path("pg") + "/server.log", encoding: .utf8)) ?? ""
    }

    private func run(_ tool: String, _ arguments: [String]) throws -> ExternalTool.Result {
        try Self.run(tool, arguments, binaries: binaries, asPostgres: runAsPostgres, base: directory.path("pg"))
    }

    private static func run(
        _ tool: String,
        _ arguments: [String],
        binaries: String,
        asPostgres runAsPostgres: Bool,
        base basePath: String
    ) throws -> ExternalTool.Result {
        let path = "\(binaries)/\(tool)"
        // A working directory the postgres user may enter.
        let base = URL(fileURLWithPath: basePath)
        if runAsPostgres {
            return try ExternalTool.run("runuser", ["-u", "postgres", "--", path] + arguments, directory: base)
        }
        return try ExternalTool.run(path, arguments, directory: base)
    }

    private static func check(_ result: ExternalTool.Result, _ what: String) throws {
        guard result.succeeded else {
            throw PostgresToolFailure(
                description: "\(what) failed (\(result.status)): \(result.errorOutput)\(result.output)"
            )
        }
    }
}

/// PostgreSQL is not installed.
public struct PostgresUnavailable: Error, CustomStringConvertible {
    /// What to do.
    public var description: String {
        "PostgreSQL (initdb, pg_ctl, psql) is not installed: run make deps (it installs postgresql and libpq-dev)"
    }
}

/// A PostgreSQL tool failed.
public struct PostgresToolFailure: Error, CustomStringConvertible {
    /// The tool's output.
    public let description: String
}
