import CertificateProviders
import CertificateProvidersTesting
import Foundation
import HTTPClient
import JSON
import Testing

#if canImport(Glibc)
import TestSupport
import RemoteProviderSupport
#endif

/// The TLS hooks of a connection (the verify and message callbacks libcurl's OpenSSL backend runs)
/// write to the report of the transfer that opened the connection. A kept-alive connection outlives
/// that transfer; TLS messages that reach it afterwards, while it is reused by a later transfer or
/// while curl closes it, must find the report still alive (under `make test-asan` a freed one is a
/// heap-use-after-free). A TLS 1.3 server's post-handshake CertificateRequest is such a message,
/// and a real one: curl offers post-handshake authentication, so the client answers it.
@Suite("CurlTransport: TLS messages on a kept-alive connection after the transfer that opened it ended")
struct CurlTLSReportLifetimeTests {
    private struct Fixture {
        let server: PythonTLSServer
        let caFile: String
        let directory: TemporaryDirectory
        let client: SigningIdentity
        static let clientName = "PHA Client"

        init() throws {
            let clientPKI = try TestPKI(rootSubject: "CN=PHA Client CA,O=swift-certificate-providers tests")
            client = try clientPKI.issueLeaf(subject: "CN=\(Fixture.clientName),O=swift-certificate-providers tests")
            let serverPKI = try TestPKI(rootSubject: "CN=PHA Server CA", keyType: .p256)
            server = try PythonTLSServer(
                serverIdentity: try serverPKI.issueTLSServer(),
                clientCA: clientPKI.root.certificate,
                handler: CurlTLSReportLifetimeTests.handler,
                tlsSettings: CurlTLSReportLifetimeTests.postHandshakeAuthentication
            )
            directory = try TemporaryDirectory()
            caFile = try directory.write("pha-ca.pem", text: serverPKI.root.certificate.pemRepresentation)
        }

        func url(_ path: String) throws -> URL {
            try #require(URL(string: "https://127.0.0.1:\(server.port)\(path)"))
        }

        func get(_ path: String, over transport: CurlTransport) async throws -> JSONValue {
            let response = try await transport.send(HTTPRequest(url: try url(path)))
            #expect(response.status == 200)
            return try response.json(context: "the Python TLS 1.3 server")
        }

        /// Asks the server (over a connection of its own) for its state until `done` holds, for up to 20 s.
        func waitForStatus(_ done: (JSONValue) -> Bool) async throws -> JSONValue {
            let probe = try CurlTransport(configuration: .init(trustedCAFile: caFile))
            let deadline = ContinuousClock.now + .seconds(20)
            while true {
                let status = try await get("/status", over: probe)
                if done(status) || ContinuousClock.now > deadline { return status }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    @Test(
        "a CertificateRequest reaches an idle kept-alive connection; the next requests reuse it and the client identity answers it"
    )
    func certificateRequestThenReuse() async throws {
        // curl decides at each request whether a kept-alive connection is still fit for reuse; on a
        // loaded machine it may open a new one instead, and then this path was not taken. So the
        // scenario is tried up to three times, each with a fresh server and transport, and must reach
        // the reused connection at least once (every try passes under ASan only if no callback wrote
        // to a freed report).
        var tries: [String] = []
        var reused = false
        for _ in 0..<3 where !reused {
            let ports = try await reuseAfterCertificateRequest()
            reused = ports.allSatisfy { $0 == ports[0] }
            tries.append("client ports \(ports.map(String.init).joined(separator: ", "))")
        }
        #expect(
            reused,
            "no try reused the connection that got the CertificateRequest: \(tries.joined(separator: "; "))"
        )
    }

    /// One try of ``certificateRequestThenReuse()``: the client ports of the three requests (the second
    /// and third reused the first one's connection when they are equal; then the client identity
    /// must have answered the CertificateRequest).
    private func reuseAfterCertificateRequest() async throws -> [Int] {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let transport = try CurlTransport(
            configuration: .init(trustedCAFile: fixture.caFile, clientIdentity: try TLSClientIdentity(fixture.client))
        )
        let first = try await fixture.get("/ask", over: transport)
        #expect(first["client"]?.isNull == true, "no certificate is asked for in the handshake")
        let status = try await fixture.waitForStatus { ($0["asked"]?.intValue ?? 0) >= 1 }
        #expect(status["asked"]?.intValue == 1, "the server never sent its CertificateRequest: \(status)")
        // The CertificateRequest waits in the idle connection; this request reads it.
        let second = try await fixture.get("/second", over: transport)
        let third = try await fixture.get("/third", over: transport)
        let ports = try [first, second, third].map { try #require($0["client_port"]?.intValue) }
        if ports.allSatisfy({ $0 == ports[0] }) {
            #expect(third["client"]?.stringValue == Fixture.clientName)
        }
        return ports
    }

    @Test(
        "a CertificateRequest reaches an idle kept-alive connection; releasing the transport closes it (curl_multi_cleanup), answering it"
    )
    func certificateRequestThenRelease() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        do {
            let transport = try CurlTransport(
                configuration: .init(
                    trustedCAFile: fixture.caFile,
                    clientIdentity: try TLSClientIdentity(fixture.client)
                )
            )
            _ = try await fixture.get("/ask", over: transport)
            let status = try await fixture.waitForStatus { ($0["asked"]?.intValue ?? 0) >= 1 }
            #expect(status["asked"]?.intValue == 1, "the server never sent its CertificateRequest: \(status)")
            // The transfer and its report are gone; the transport goes at the end of this scope and
            // libcurl reads the waiting CertificateRequest while it closes the connection.
        }
        let status = try await fixture.waitForStatus { !($0["answered"]?.arrayValue ?? []).isEmpty }
        #expect(status["answered"]?.arrayValue == [.string(Fixture.clientName)], "\(status)")
    }

    /// After answering `GET /ask` it sends a post-handshake CertificateRequest. Every answer is JSON:
    /// the client certificate's CN (`client`), the client's port, how many CertificateRequests were
    /// sent (`asked`) and the CNs of the connections that ended with a client certificate (`answered`).
    static let handler = """
        asked = []
        answered = []
        lock = threading.Lock()
        def client_cn(connection):
            peer = connection.getpeercert() or {}
            return next((value for rdn in peer.get("subject", ()) for (name, value) in rdn if name == "commonName"), None)
        \(pythonJSONHandler)
        class Handler(JSONHandler):
            def do_GET(self):
                with lock:
                    state = {"asked": len(asked), "answered": list(answered)}
                state.update({"client": client_cn(self.connection), "client_port": self.client_address[1]})
                self.send_json(state)
                self.wfile.flush()
                if self.path == "/ask":
                    # After the answer, so that it reaches a connection the client holds idle.
                    self.connection.verify_client_post_handshake()
                    self.connection.do_handshake()
                    with lock:
                        asked.append(self.client_address[1])
            def handle(self):
                super().handle()
                cn = client_cn(self.connection)
                if cn is not None:
                    with lock:
                        answered.append(cn)
        """

    /// TLS 1.3 only; no client certificate asked for in the handshake, one may be asked for later.
    static let postHandshakeAuthentication = """
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        context.verify_mode = ssl.CERT_OPTIONAL
        context.post_handshake_auth = True
        """
}
