import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import Testing

#if canImport(Glibc)
import Glibc
import TestSupport
import RemoteProviderSupport
#endif

/// The transport keeps an idle kept-alive connection's socket in its epoll set between requests
/// (no epoll_ctl per request) and must still notice when the server closes it, and when curl
/// closes it and the kernel hands the same descriptor to a new connection.
@Suite("CurlTransport: kept-alive connections, closed by the server while idle, and their sockets")
struct CurlConnectionReuseTests {
    @Test("sequential requests share one kept-alive connection; 8 in flight open at most 8")
    func keepAlive() async throws {
        let server = try IdleClosingServer(idleSeconds: 3600)
        defer { server.stop() }
        let transport = CurlTransport()
        // On the transport's own thread: in a full parallel test run the shared pool can leave a
        // task waiting for minutes, and curl rightly replaces a connection idle for longer than
        // CURLOPT_MAXAGE_CONN (118 s).
        let ports = try await withTaskExecutorPreference(transport.taskExecutor) {
            var ports: Set<Int> = []
            for index in 0..<20 {
                let answer = try await server.get(over: transport, path: "/sequential/\(index)")
                #expect(answer.path == "/sequential/\(index)")
                ports.insert(answer.clientPort)
            }
            return ports
        }
        #expect(ports.count == 1, "20 sequential requests should share one connection: \(ports)")
        let parallel = try await withThrowingTaskGroup(of: IdleClosingServer.Answer.self) { group in
            for index in 0..<64 {
                group.addTask { try await server.get(over: transport, path: "/parallel/\(index % 8)") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(parallel.count == 64)
        #expect(Set(parallel.map(\.clientPort)).count <= 8)
    }

    @Test("a server that closes idle connections: every next request opens a new one and is answered")
    func serverClosesIdleConnections() async throws {
        let server = try IdleClosingServer(idleSeconds: 0.2)
        defer { server.stop() }
        let transport = CurlTransport()
        var earlier: Set<Int> = []
        for round in 0..<4 {
            // Two at once (often on two connections), so that up to two sockets sit idle in the
            // epoll set when the server hangs up.
            async let first = server.get(over: transport, path: "/round/\(round)/a")
            async let second = server.get(over: transport, path: "/round/\(round)/b")
            let answers = try await [first, second]
            #expect(answers.map(\.path).sorted() == ["/round/\(round)/a", "/round/\(round)/b"])
            let ports = Set(answers.map(\.clientPort))
            #expect(ports.isDisjoint(with: earlier), "round \(round) should need new connections: \(ports), \(earlier)")
            earlier.formUnion(ports)
            // Longer than the server's idle limit: it closes the connections while they are idle.
            try await Task.sleep(for: .milliseconds(600))
        }
    }

    @Test(
        "HTTPS: requests on kept-alive connections the server closed while idle (TLS close_notify, then FIN) are answered",
        arguments: [0, 6 * 1024, 200 * 1024]
    )
    func postsAfterTheServerClosedIdleTLSConnections(bodySize: Int) async throws {
        // libmicrohttpd + GnuTLS sends close_notify before it closes an idle connection. curl 7.88
        // peeks one byte (the alert) and takes the connection for alive; a POST whose body goes out
        // after its headers then fails with "Send failure: Broken pipe". Seen in the FMP and
        // CryptoPro benches (8 in flight after rounds of other clients). A body size of 0 is a GET.
        let emulator = try DSSEmulator(
            // 3 s, not 1: under ASan (make test-asan-core) eight TLS handshakes at once can take over a
            // second, and the server then closed connections that were not idle but still handshaking.
            configuration: .init(host: "127.0.0.1", connectionTimeoutSeconds: 3, tls: .init()),
            seed: sharedSeed
        )
        let base = try emulator.start()
        defer { emulator.stop() }
        let directory = try TemporaryDirectory()
        let caFile = try directory.write("emulator-ca.pem", text: emulator.certificateAuthorityPEM)
        let transport = try CurlTransport(
            configuration: .init(trustedCAFile: caFile, trustedCAFileReplacesSystemStore: true)
        )
        let url = base.appendingPathComponent("no-such-route")
        let body = Array(repeating: UInt8(ascii: "x"), count: bodySize)
        for round in 0..<3 {
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let method: HTTPMethod = body.isEmpty ? .get : .post
                        return try await transport.send(HTTPRequest(method: method, url: url, body: body, timeout: 20))
                            .status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.count == 8 && statuses.allSatisfy { $0 == 404 }, "round \(round): \(statuses)")
            // Longer than the server's idle limit: it closes the kept connections while they are idle.
            try await Task.sleep(for: .milliseconds(4500))
        }
    }

    @Test("a POST on a kept-alive connection closed without an answer is sent again, unless it is sent at most once")
    func atMostOnce() async throws {
        try await withEmulator(.init(faultsEnabled: true)) { emulator, url in
            let transport = CurlTransport()
            func received(_ path: String) -> Int { emulator.receivedRequests.filter { $0.path == path }.count }
            /// A POST whose connection the emulator closes without answering, after one that leaves a
            /// kept-alive connection.
            func dropped(_ path: String, atMostOnce: Bool) async {
                let kept = HTTPRequest(method: .post, url: url.appendingPathComponent("kept"), body: Array("{}".utf8))
                #expect((try? await transport.send(kept))?.status == 404)
                var request = HTTPRequest(method: .post, url: url.appendingPathComponent(path), body: Array("{}".utf8))
                request.setHeader(DSSEmulator.Fault.headerName, DSSEmulator.Fault.drop.headerValue)
                request.atMostOnce = atMostOnce
                await expectError(.network, as: HTTPClientError.self) { try await transport.send(request) }
            }
            // On the transport's own thread: a task of the shared pool can resume minutes late under
            // a whole suite's load, and the kept-alive connection would be gone by then.
            await withTaskExecutorPreference(transport.taskExecutor) {
                await dropped("resent", atMostOnce: false)
                await dropped("once", atMostOnce: true)
            }
            #expect(received("/resent") == 2)
            #expect(received("/once") == 1)
        }
    }

    @Test("a header name or value holding CR LF, CR or LF is refused before anything is sent")
    func headerLineBreaks() async throws {
        let server = try IdleClosingServer(idleSeconds: 3600)
        defer { server.stop() }
        let transport = CurlTransport()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/injected"))
        // "\r\n" is a single Character in Swift, unlike "\r" and "\n" alone.
        for (name, value) in [
            ("X-Note", "a\r\nInjected: 1"), ("X-Note", "a\nInjected: 1"), ("X-Note", "a\rb"),
            ("X-Note\r\nInjected", "1"), ("X:Note", "1"),
        ] {
            let refused = await expectError(.invalidParameter, as: HTTPClientError.self) {
                try await transport.send(HTTPRequest(url: url, headers: [(name, value)]))
            }
            #expect(refused?.reason.contains("line break or colon") == true)
        }
        let answer = try await server.get(over: transport, path: "/after")
        #expect(answer.path == "/after")
    }
}

/// Python's `http.server` over plain HTTP/1.1 on 127.0.0.1 that closes a kept-alive connection
/// after `idleSeconds` without a request, and answers JSON naming the path and the client's port.
private final class IdleClosingServer: Sendable {
    struct Answer: Sendable {
        var path: String
        var clientPort: Int
    }

    private let server: PythonServerProcess
    private let directory: TemporaryDirectory
    let port: Int

    init(idleSeconds: Double) throws {
        directory = try TemporaryDirectory()
        let script = try directory.write(
            "server.py",
            text: """
                import http.server, json, sys
                \(pythonJSONHandler)
                class Handler(JSONHandler):
                    timeout = float(sys.argv[1])
                    def do_GET(self):
                        self.send_json({"path": self.path, "client_port": self.client_address[1]})
                class Server(http.server.ThreadingHTTPServer):
                    daemon_threads = True
                    def handle_error(self, request, client_address):
                        pass
                server = Server(("127.0.0.1", 0), Handler)
                print(server.server_address[1], flush=True)
                server.serve_forever()
                """
        )
        server = try PythonServerProcess(
            script: script,
            arguments: [String(idleSeconds)],
            what: "the Python HTTP server"
        )
        port = server.port
    }

    /// GET `path`, with a deadline well below the test's patience: a socket the loop failed to watch
    /// would end in `.timeout`, not hang.
    func get(over transport: CurlTransport, path: String) async throws -> Answer {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)\(path)"))
        let response = try await transport.send(HTTPRequest(url: url, timeout: 10))
        #expect(response.status == 200)
        let json = try response.json(context: "idle-closing server")
        return Answer(path: json["path"]?.stringValue ?? "", clientPort: json["client_port"]?.intValue ?? -1)
    }

    func stop() { server.stop() }
}
