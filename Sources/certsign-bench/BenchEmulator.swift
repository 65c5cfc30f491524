import EmulatorKit
import Foundation
import HTTPClient

#if canImport(Glibc)
import Glibc
#endif

/// The emulator the remote rows run against, and a `CurlTransport` that trusts it.
///
/// By default the emulator runs in a process of its own (this executable, started with
/// `--profile emulator-serve`), used by wrk, the C libcurl loop and our client alike, so
/// that our client's process holds the client alone, as wrk's does (in-process, our client shared
/// the allocator and the two cores' threads with the server). `--emulator in-process`
/// keeps it in the bench's process, as the rows of earlier sessions did.
///
/// The child stops when ``stop()`` closes its standard input, and by itself when its parent is gone
/// (the bench failed or was killed), so no stray emulator outlives a bench run.
final class BenchEmulator {
    /// The emulator's base URL (`http://127.0.0.1:PORT/`, or `https://`).
    let base: URL
    /// The emulator CA's PEM file (HTTPS only; the same file wrk's peers use).
    let caFile: String?
    /// A transport trusting the emulator CA (HTTPS) or the default one (HTTP).
    let transport: CurlTransport
    /// Where the emulator runs, for the table's notes.
    let placement: String
    /// Whether the emulator runs in the bench's own process (`--emulator in-process`).
    var runsInThisProcess: Bool { inProcess != nil }
    private let inProcess: DSSEmulator?
    private let child: Process?
    private let childInput: Pipe?

    /// The longest the bench waits for a child emulator to report its URL.
    private static let startTimeoutMilliseconds: Int32 = 60_000

    /// Starts an emulator over HTTP or HTTPS; its CA goes to `scratch/<name>-emulator-ca.pem`.
    init(tls: Bool, scratch: URL, name: String, options: BenchOptions) throws {
        let caURL = scratch.appendingPathComponent("\(name)-emulator-ca.pem")
        if options.emulatorInProcess {
            let emulator = try DSSEmulator(configuration: BenchEmulator.configuration(tls: tls))
            base = try emulator.start()
            if tls { try Data(emulator.certificateAuthorityPEM.utf8).write(to: caURL) }
            inProcess = emulator
            child = nil
            childInput = nil
            placement = "in the bench's process"
        } else {
            let process = Process()
            process.executableURL = URL(
                fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            )
            process.arguments = ["--profile", "emulator-serve", "--ca-out", caURL.path] + (tls ? ["--tls"] : [])
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            child = process
            childInput = input
            inProcess = nil
            do {
                let line = try BenchEmulator.readLine(
                    from: output.fileHandleForReading.fileDescriptor,
                    timeoutMilliseconds: BenchEmulator.startTimeoutMilliseconds
                )
                guard let url = URL(string: line), url.port != nil else {
                    throw BenchError("the emulator process printed '\(line)' instead of its URL")
                }
                base = url
            } catch {
                BenchEmulator.end(process, input)
                throw error
            }
            placement = "in its own process (pid \(process.processIdentifier))"
        }
        caFile = tls ? caURL.path : nil
        transport =
            tls
            ? try CurlTransport(configuration: .init(trustedCAFile: caURL.path, trustedCAFileReplacesSystemStore: true))
            : CurlTransport()
    }

    deinit { stop() }

    /// The emulator's configuration, in the bench's process or its own: room for 8 connections per
    /// client and wrk at once, no request log, and CSC authorizations that last a whole suite (one SAD
    /// signs every `signHash` round of the C libcurl loop, wrk and ours).
    private static func configuration(tls: Bool) -> DSSEmulator.Configuration {
        .init(
            connectionLimit: 128,
            requestLogLimit: 0,
            tls: tls ? .init() : nil,
            cscSignaturesPerAuthorization: Int(Int32.max)
        )
    }

    /// Stops the emulator (idempotent).
    func stop() {
        inProcess?.stop()
        if let child, let childInput { BenchEmulator.end(child, childInput) }
    }

    /// Closes the child's input (it stops), and kills it when it has not ended within 5 s.
    private static func end(_ process: Process, _ input: Pipe) {
        try? input.fileHandleForWriting.close()
        let deadline = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
        while process.isRunning && DispatchTime.now().uptimeNanoseconds < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Reads one line (without its newline) from a pipe, waiting at most `timeoutMilliseconds` overall.
    private static func readLine(from descriptor: Int32, timeoutMilliseconds: Int32) throws -> String {
        var bytes: [UInt8] = []
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeoutMilliseconds) * 1_000_000
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { throw BenchError("the emulator process did not report its URL in time") }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32((deadline - now) / 1_000_000) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var byte: UInt8 = 0
            let count = read(descriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else {
                throw BenchError("the emulator process ended before reporting its URL")
            }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }

    /// The child side (`--profile emulator-serve [--tls] --ca-out FILE`): starts the emulator, writes its
    /// CA, prints its base URL, and serves until standard input closes or the parent is gone.
    static func serve(_ options: BenchOptions) async throws -> Never {
        let tls = options.tls
        let emulator = try DSSEmulator(configuration: BenchEmulator.configuration(tls: tls))
        let base = try emulator.start()
        if tls, let caOut = options.caOut {
            try Data(emulator.certificateAuthorityPEM.utf8).write(to: URL(fileURLWithPath: caOut), options: .atomic)
        }
        FileHandle.standardOutput.write(Data("\(base.absoluteString)\n".utf8))
        let parent = getppid()
        // Standard input closing (the bench stopped this emulator, or ended) ends the process.
        let watcher = Thread {
            _ = FileHandle.standardInput.readDataToEndOfFile()
            emulator.stop()
            exit(0)
        }
        watcher.start()
        // So does the parent's death (reparenting) when something else keeps the input open.
        while getppid() == parent { try await Task.sleep(for: .seconds(1)) }
        emulator.stop()
        exit(0)
    }
}
