import Foundation
import TestSupport
import Testing

/// Tests run in parallel, and several start long-lived servers (moto, bao, certomancer). A tool's
/// output pipe that leaks into such a server never reaches its end while the server runs: the
/// reading test waits, holding a thread of the small pool every other test needs (a CI run hung so).
@Suite struct ExternalToolPipeTests {
    /// What `/proc/PID/fd` of `pid` points at (`pipe:[inode]`, …).
    static func openFiles(of pid: Int32) throws -> Set<String> {
        let directory = "/proc/\(pid)/fd"
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory)
        return Set(
            entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)") }
        )
    }

    static func target(of descriptor: Int32) throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
    }

    /// Whether `descriptor` is closed when this process, or a child forked from it, runs a program.
    static func isCloseOnExec(_ descriptor: Int32) -> Bool { fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0 }

    /// Foundation's `Process` closes the descriptors that are open when it prepares a spawn; a pipe
    /// another thread opens between that moment and the spawn reaches the new program unless it is
    /// close-on-exec (a `Pipe` is not).
    @Test(
        "a tool's pipes are close-on-exec from birth, unlike Foundation's Pipe, and a program started later has neither"
    )
    func closeOnExecPipes() throws {
        let pipe = try ExternalTool.CloseOnExecPipe()
        #expect(Self.isCloseOnExec(pipe.reading.fileDescriptor) && Self.isCloseOnExec(pipe.writing.fileDescriptor))
        let plain = Pipe()
        #expect(
            !Self.isCloseOnExec(plain.fileHandleForWriting.fileDescriptor),
            "Foundation's Pipe is close-on-exec now"
        )
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/bin/sleep")
        server.arguments = ["3"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let inherited = try Self.openFiles(of: server.processIdentifier)
        #expect(!inherited.contains(try Self.target(of: pipe.writing.fileDescriptor)), "\(inherited)")
        #expect(!inherited.contains(try Self.target(of: pipe.reading.fileDescriptor)), "\(inherited)")
    }

    @Test("a tool's output and standard input still flow through the close-on-exec pipes")
    func toolOutputArrives() throws {
        let result = try ExternalTool.run("sh", ["-c", "cat; echo error >&2"], input: Data("Привет\n".utf8))
        #expect(result.succeeded)
        #expect(result.output == "Привет\n")
        #expect(result.errorOutput == "error\n")
    }
}
