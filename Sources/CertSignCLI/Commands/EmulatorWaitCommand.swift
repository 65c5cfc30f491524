import CertificateProviders
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `certsign emulator wait FILE`: blocks until the emulator started with `--ready-file FILE` listens,
/// then prints its URL, so a script that starts `certsign emulator … &` can go on without a sleep.
extension Commands {
    struct EmulatorWaitOptions: CommandOptions {
        var readyFile = ""
        var timeoutSeconds = 60

        static var arguments: [ArgumentBinding<Self>] {
            [.one(\.readyFile, "FILE", "the file the emulator was given with --ready-file", type: .file)]
        }

        static var options: [OptionBinding<Self>] {
            [
                .integer(
                    \.timeoutSeconds,
                    "--timeout",
                    "SECONDS",
                    "give up (exit 1) when the emulator is not listening after this long",
                    in: 1...3600,
                    default: .initial
                ) { $0 }
            ]
        }
    }

    static let emulatorWait = CommandDescriptor(
        words: ["emulator", "wait"],
        summary: "wait until an emulator started with --ready-file FILE listens; print its URL",
        discussion: """
            The emulator writes FILE (its URL, atomically) once it listens, and removes it when it stops. \
            This command returns as soon as FILE names a URL whose port accepts connections, so a stale \
            FILE left by an emulator that was killed is not taken for a ready one.
            """,
        examples: [
            "certsign emulator --port 8080 --ready-file emulator.url & certsign emulator wait emulator.url"
        ]
    ) { (options: EmulatorWaitOptions, context) in
        let url = try await EmulatorReadiness.wait(
            for: options.readyFile,
            timeout: .seconds(options.timeoutSeconds)
        )
        context.emit(encoding: EmulatorReadyDocument(url: url.absoluteString), human: url.absoluteString)
        return CertSign.exitSuccess
    }
}

/// `emulator wait --json`: `{"url"}`.
struct EmulatorReadyDocument: Encodable {
    var url: String

    enum CodingKeys: String, CodingKey, CaseIterable { case url }
}

/// The emulator's readiness signal: the file `--ready-file` names holds the URL it listens on.
package enum EmulatorReadiness {
    /// The ready file's content for `url`: the URL and a newline.
    package static func contents(url: URL) -> [UInt8] { Array((url.absoluteString + "\n").utf8) }

    /// Waits until `path` names a URL whose host and port accept a TCP connection.
    /// - Throws: `.timeout` naming `path` when that does not happen within `timeout`.
    static func wait(for path: String, timeout: Duration) async throws -> URL {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            if let url = readyURL(path) { return url }
            guard clock.now < deadline else {
                throw CertificateProviderError(
                    .timeout,
                    "the emulator's ready file \(path) did not name a listening URL within \(timeout); "
                        + "is 'certsign emulator --ready-file \(path)' running? (its output says why it stopped)"
                )
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The URL in `path` when the file holds one and its port accepts connections.
    static func readyURL(_ path: String) -> URL? {
        guard let data = FileManager.default.contents(atPath: path),
            let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            let url = URL(string: text), let host = url.host, let port = url.port
        else { return nil }
        return accepts(host: host, port: port) ? url : nil
    }

    /// Whether `host`:`port` accepts a TCP connection now.
    private static func accepts(host: String, port: Int) -> Bool {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        guard getaddrinfo(bare, String(port), &hints, &list) == 0, let first = list else { return false }
        defer { freeaddrinfo(first) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            let descriptor = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            if descriptor >= 0 {
                let connected = connect(descriptor, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0
                close(descriptor)
                if connected { return true }
            }
            entry = current.pointee.ai_next
        }
        return false
    }
}
