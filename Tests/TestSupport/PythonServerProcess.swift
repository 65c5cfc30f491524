import CertificateProvidersTesting
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Python source of `JSONHandler`, an `http.server` request handler (HTTP/1.1, no request log) whose
/// `send_json(value)` answers 200 with `value` as JSON. Scripts put it after `import http.server, json`
/// (at the start of a line) and derive their `Handler` from it.
public let pythonJSONHandler = """
    class JSONHandler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def send_json(self, value):
            body = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    """

/// A Python script run as a real local server for a test: `python3 SCRIPT
/// ARGUMENTS…`, which binds its sockets to port 0 and prints the ports it got on the first line
/// of its standard output; ``stop()`` ends it.
public final class PythonServerProcess: Sendable {
    private let process: Process
    /// The whole numbers of the first line the script printed (its ports), at least one.
    public let ports: [Int]
    /// The first port.
    public var port: Int { ports[0] }

    /// Starts the script and waits for its first line.
    /// - Parameters:
    ///   - script: the script's path.
    ///   - arguments: its arguments.
    ///   - what: the server's name, for the error.
    /// - Throws: when python3 cannot start, or the script exits before printing a port.
    public init(script: String, arguments: [String] = [], what: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ExternalTool.path(of: "python3") ?? "/usr/bin/python3")
        process.arguments = [script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let ports = String(decoding: line, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
            .compactMap { Int($0) }
        guard !ports.isEmpty else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "\(what) did not start"])
        }
        self.ports = ports
        self.process = process
    }

    /// Ends the server. SIGKILL: the child inherits the test runner's blocked signal mask, so
    /// SIGTERM may never land.
    public func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
