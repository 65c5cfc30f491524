import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import PKCS12Provider
import RemoteProviderSupport
import Testing

#if canImport(Glibc)
import Glibc
import TestSupport
#endif

private func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

/// Client-side PKI for the client-certificate tests: a client CA, an identity it issued (kept in a
/// real PKCS#12 identity store), and an identity from another CA.
private struct ClientPKI {
    let authority: TestPKI
    let stranger: SigningIdentity
    let directory: TemporaryDirectory
    let store: PKCS12IdentityStore
    static let alias = "tls-client"
    static let storePassword = "client-store-pass"

    init() throws {
        authority = try TestPKI(rootSubject: "CN=Client CA,O=swift-certificate-providers tests", keyType: .p256)
        stranger = try TestPKI(rootSubject: "CN=Other CA,O=elsewhere", keyType: .p256).issueLeaf(
            subject: "CN=Stranger,O=elsewhere"
        )
        directory = try TemporaryDirectory()
        store = PKCS12IdentityStore(directory: directory.url.appendingPathComponent("store"))
        let issued = try authority.issueLeaf(subject: "CN=Клиент TLS,O=ООО Ромашка", keyType: .p256)
        try store.import(issued, alias: ClientPKI.alias, storePassword: Secret(ClientPKI.storePassword))
    }

    /// The identity as a provider would get it: read back from the store with its password.
    func storedIdentity() throws -> SigningIdentity {
        try store.identity(alias: ClientPKI.alias, password: Secret(ClientPKI.storePassword))
    }
}

@Suite("CurlTransport over loopback HTTPS: the emulator (libmicrohttpd + GnuTLS) and Python's ssl server")
struct CurlTransportTLSTests {
    private func withTLSEmulator<R>(
        host: String = "127.0.0.1",
        serverIdentity: SigningIdentity? = nil,
        clientCAs: [Certificate] = [],
        faults: Bool = false,
        _ body: (DSSEmulator, URL, String) async throws -> R
    ) async throws -> R {
        let emulator = try DSSEmulator(
            configuration: .init(
                host: host,
                faultsEnabled: faults,
                tls: .init(serverIdentity: serverIdentity, clientCertificateAuthorities: clientCAs)
            ),
            seed: sharedSeed
        )
        let base = try emulator.start()
        defer { emulator.stop() }
        let directory = try TemporaryDirectory()
        let caFile = try directory.write("emulator-ca.pem", text: emulator.certificateAuthorityPEM)
        return try await body(emulator, base, caFile)
    }

    private func notFoundRequest(_ base: URL, fault: String? = nil, timeout: TimeInterval = 10) throws -> HTTPRequest {
        var request = HTTPRequest(url: try url(base.absoluteString + "api/v1/nothing/"), timeout: timeout)
        if let fault { request.setHeader(DSSEmulator.Fault.headerName, fault) }
        return request
    }

    @Test(
        "trusted through trustedCAFile (added to, or replacing, the system store): FMP and CryptoPro round trips work"
    )
    func trustedByCAFile() async throws {
        try await withTLSEmulator { emulator, base, caFile in
            #expect(base.scheme == "https")
            for replaces in [false, true] {
                let transport = try CurlTransport(
                    configuration: .init(trustedCAFile: caFile, trustedCAFileReplacesSystemStore: replaces)
                )
                #expect(try await transport.send(try notFoundRequest(base)).status == 404)
                let fmp = try await loggedInSeedClient(base, transport, device: "tls-test")
                let certificates = try await fmp.certificates(dssPassword: Secret(StandardSeed.dssPassword)).value
                #expect(certificates.contains { $0.id == StandardSeed.certificateID })
                let signatureID = try await signSeedSample(fmp).value
                #expect(emulator.storedSignatureIDs.contains(signatureID))

                let cryptoPro = CryptoProDSSClient(configuration: .init(baseURL: base), transport: transport)
                _ = try await cryptoPro.login(username: StandardSeed.username, password: Secret(StandardSeed.password))
                let cades = try await cryptoPro.sign(
                    document: Array("документ".utf8),
                    certificateID: StandardSeed.certificateID,
                    pin: Secret(StandardSeed.certificatePIN)
                )
                #expect(!cades.isEmpty)
            }
        }
    }

    @Test(
        "without trustedCAFile → .untrustedServerCertificate naming the server certificate; nothing reaches the server"
    )
    func untrustedWithoutCAFile() async throws {
        try await withTLSEmulator { emulator, base, _ in
            let error = await expectError(.untrustedServerCertificate, as: HTTPClientError.self) {
                try await CurlTransport().send(try notFoundRequest(base))
            }
            #expect(error?.reason.contains("CN=DSS Emulator") == true, "\(String(describing: error))")
            #expect(error?.reason.contains("trustedCAFile") == true)
            #expect(emulator.receivedRequests.isEmpty)
            // A CA file that does not hold the emulator's CA does not help either.
            let directory = try TemporaryDirectory()
            let other = try directory.write("other.pem", text: try TestPKI().root.certificate.pemRepresentation)
            await expectError(.untrustedServerCertificate, as: HTTPClientError.self) {
                try await CurlTransport(
                    configuration: .init(trustedCAFile: other, trustedCAFileReplacesSystemStore: true)
                ).send(try notFoundRequest(base))
            }
        }
    }

    @Test("a server certificate for another host → .serverHostnameMismatch")
    func hostnameMismatch() async throws {
        let pki = try TestPKI(rootSubject: "CN=Mismatch CA", keyType: .p256)
        let elsewhere = try pki.issueTLSServer(
            subject: "CN=elsewhere.example",
            dnsNames: ["elsewhere.example"],
            ipAddresses: ["192.0.2.7"]
        )
        try await withTLSEmulator(serverIdentity: elsewhere) { emulator, base, _ in
            let directory = try TemporaryDirectory()
            let caFile = try directory.write("mismatch-ca.pem", text: pki.root.certificate.pemRepresentation)
            let error = await expectError(.serverHostnameMismatch, as: HTTPClientError.self) {
                try await CurlTransport(configuration: .init(trustedCAFile: caFile)).send(try notFoundRequest(base))
            }
            #expect(error?.reason.contains("127.0.0.1") == true)
            #expect(emulator.receivedRequests.isEmpty)
        }
    }

    @Test(
        "client certificate required: from a stored identity → works; missing or from another CA → .clientCertificateRejected"
    )
    func clientCertificates() async throws {
        let client = try ClientPKI()
        try await withTLSEmulator(clientCAs: [client.authority.root.certificate]) { emulator, base, caFile in
            let identity = try client.storedIdentity()
            let transport = try CurlTransport(
                configuration: .init(trustedCAFile: caFile, clientIdentity: try TLSClientIdentity(identity))
            )
            #expect(try await transport.send(try notFoundRequest(base)).status == 404)
            _ = try await loggedInSeedClient(base, transport, device: "tls-test")
            #expect(emulator.receivedRequests.count == 2)
            emulator.clearReceivedRequests()

            let missing = await expectError(.clientCertificateRejected, as: HTTPClientError.self) {
                try await CurlTransport(configuration: .init(trustedCAFile: caFile)).send(try notFoundRequest(base))
            }
            #expect(
                missing?.reason.contains("no client certificate was configured") == true,
                "\(String(describing: missing))"
            )
            let foreign = await expectError(.clientCertificateRejected, as: HTTPClientError.self) {
                try await CurlTransport(
                    configuration: .init(trustedCAFile: caFile, clientIdentity: try TLSClientIdentity(client.stranger))
                )
                .send(try notFoundRequest(base))
            }
            #expect(foreign?.reason.contains("CN=Stranger") == true, "\(String(describing: foreign))")
            #expect(emulator.receivedRequests.isEmpty)
        }
    }

    @Test(
        "providers: trustedCAFile, clientIdentity (a store alias) and clientIdentityPassword reach a server demanding a client certificate"
    )
    func providerParameters() async throws {
        let client = try ClientPKI()
        let store = client.store
        let lookup: ClientIdentityLookup = { alias, password in try store.identity(alias: alias, password: password) }
        try await withTLSEmulator(clientCAs: [client.authority.root.certificate]) { emulator, base, caFile in
            let tls: ProviderParameters = [
                RemoteTLSParameters.trustedCAFile: .string(caFile),
                RemoteTLSParameters.clientIdentity: .string(ClientPKI.alias),
                RemoteTLSParameters.clientIdentityPassword: .secret(Secret(ClientPKI.storePassword)),
            ]
            let fmp = try FMPDSSProvider(
                parameters: ProviderParameters([
                    FMPDSSProvider.ParameterKey.url: .url(base),
                    FMPDSSProvider.ParameterKey.environment: .string(StandardSeed.environment),
                    FMPDSSProvider.ParameterKey.project: .string(StandardSeed.project),
                    FMPDSSProvider.ParameterKey.username: .string(StandardSeed.username),
                    FMPDSSProvider.ParameterKey.password: .secret(Secret(StandardSeed.password)),
                    FMPDSSProvider.ParameterKey.dssPassword: .secret(Secret(StandardSeed.dssPassword)),
                    FMPDSSProvider.ParameterKey.certificateID: .integer(StandardSeed.certificateID),
                ]).merging(tls),
                clientIdentityLookup: lookup
            )
            #expect(try await fmp.initialize(options: [:]).certificate.subject.contains("Леонид"))
            let cryptoPro = try CryptoProDSSProvider(
                parameters: ProviderParameters([
                    CryptoProDSSProvider.ParameterKey.url: .url(base),
                    CryptoProDSSProvider.ParameterKey.username: .string(StandardSeed.username),
                    CryptoProDSSProvider.ParameterKey.password: .secret(Secret(StandardSeed.password)),
                ]).merging(tls),
                clientIdentityLookup: lookup
            )
            _ = try await cryptoPro.initialize(options: [:])
            #expect(emulator.receivedRequests.count >= 4)
            // Wrong identity password → the store's .wrongPassword; no lookup → .invalidParameter;
            // with an app transport → .invalidParameter.
            await expectError(.wrongPassword) {
                try await fmp.initialize(options: [RemoteTLSParameters.clientIdentityPassword: .secret(Secret("nope"))])
            }
            await expectError(.invalidParameter) {
                try await FMPDSSProvider(parameters: fmp.parameters).initialize(options: [:])
            }
            await expectError(.invalidParameter) {
                try await CryptoProDSSProvider(parameters: cryptoPro.parameters, transport: CurlTransport()).initialize(
                    options: [:])
            }
            expectError(.invalidParameter) {
                try fmp.setParameters([RemoteTLSParameters.clientIdentity: .boolean(true)])
            }
        }
    }

    @Test("a client identity whose key is held by a server is refused when the transport is made")
    func remoteKeyRefused() async throws {
        let certificate = try TestPKI().issueLeaf(subject: "CN=Remote").certificate
        let remote = SigningIdentity(
            certificate: certificate,
            key: ServerHeldSigningKey.fmpDSS(certificate: certificate, certificateID: 1)
        )
        expectError(.invalidParameter) {
            try CurlTransport(configuration: .init(clientIdentity: try TLSClientIdentity(remote)))
        }
    }

    @Test("IPv6: https://[::1]:port/ and http://[::1]:port/ work")
    func ipv6() async throws {
        try await withTLSEmulator(host: "::1") { _, base, caFile in
            #expect(base.absoluteString.hasPrefix("https://[::1]:"))
            let transport = try CurlTransport(configuration: .init(trustedCAFile: caFile))
            #expect(try await transport.send(try notFoundRequest(base)).status == 404)
        }
        let plain = try DSSEmulator(configuration: .init(host: "::1"), seed: sharedSeed)
        let base = try plain.start()
        defer { plain.stop() }
        #expect(try await CurlTransport().send(try notFoundRequest(base)).status == 404)
    }

    @Test("over HTTPS: a 20 MiB answer → .responseTooLarge; cancellation stops a slow transfer")
    func limitsOverHTTPS() async throws {
        try await withTLSEmulator(faults: true) { _, base, caFile in
            let transport = try CurlTransport(configuration: .init(trustedCAFile: caFile))
            await expectError(.responseTooLarge, as: HTTPClientError.self) {
                try await transport.send(try notFoundRequest(base, fault: "large-body=\(20 << 20)"))
            }
            let task = Task { try await transport.send(try notFoundRequest(base, fault: "delay=5000", timeout: 30)) }
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            await expectError(.cancelled, as: HTTPClientError.self) { try await task.value }
            // The transport goes on working after a cancelled transfer.
            #expect(try await transport.send(try notFoundRequest(base)).status == 404)
        }
    }

    @Test("a server that accepts the connection but never answers the handshake → .timeout naming the TLS handshake")
    func handshakeTimeout() async throws {
        let listener = try LoopbackListener()
        let error = await expectError(.timeout, as: HTTPClientError.self) {
            try await CurlTransport().send(
                HTTPRequest(url: try url("https://127.0.0.1:\(listener.port)/"), timeout: 0.5)
            )
        }
        #expect(error?.reason.contains("TLS handshake") == true, "\(String(describing: error))")
    }

    @Test(
        "a transfer cancelled in the middle of its TLS handshake → .cancelled; the half-made connection's TLS state is freed with it"
    )
    func cancelledInHandshake() async throws {
        let listener = try LoopbackListener()
        let transport = CurlTransport()
        let request = HTTPRequest(url: try url("https://127.0.0.1:\(listener.port)/"), timeout: 30)
        let task = Task { try await transport.send(request) }
        // The kernel accepts the connection at once; the ClientHello is written and never answered.
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await expectError(.cancelled, as: HTTPClientError.self) { try await task.value }
        // The transport goes on driving transfers: the next one times out in its handshake.
        await expectError(.timeout, as: HTTPClientError.self) {
            try await transport.send(HTTPRequest(url: try url("https://127.0.0.1:\(listener.port)/"), timeout: 0.5))
        }
    }

    // MARK: A server the package did not write

    @Test(
        "Python http.server in ssl, client certificate required: stored identity works over one kept-alive connection; missing or foreign → .clientCertificateRejected"
    )
    func pythonServer() async throws {
        let client = try ClientPKI()
        let serverPKI = try TestPKI(rootSubject: "CN=Python Server CA", keyType: .p256)
        let server = try PythonTLSServer(
            serverIdentity: try serverPKI.issueTLSServer(),
            clientCA: client.authority.root.certificate
        )
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let caFile = try directory.write("python-ca.pem", text: serverPKI.root.certificate.pemRepresentation)
        let transport = try CurlTransport(
            configuration: .init(trustedCAFile: caFile, clientIdentity: try TLSClientIdentity(client.storedIdentity()))
        )
        var ports: Set<Int> = []
        for name in ["localhost", "127.0.0.1", "[::1]"] where name != "[::1]" || server.hasIPv6 {
            for _ in 0..<3 {
                let response = try await transport.send(
                    HTTPRequest(url: try url("https://\(name):\(server.port(for: name))/hello"))
                )
                #expect(response.status == 200)
                let json = try response.json(context: "python")
                #expect(json["client"]?.stringValue == "Клиент TLS")
                if name == "127.0.0.1", let port = json["client_port"]?.intValue { ports.insert(port) }
            }
        }
        #expect(ports.count == 1, "three requests to one host should share one kept-alive connection: \(ports)")
        // A redirect is returned, not followed (so neither a body nor an Authorization header is replayed).
        var redirected = HTTPRequest(url: try url("https://127.0.0.1:\(server.port)/redirect"))
        redirected.setHeader("Authorization", "Bearer not-for-anyone-else")
        let redirect = try await transport.send(redirected)
        #expect(redirect.status == 302)
        #expect(redirect.header("location") == "/hello?followed=1")
        let missing = await expectError(.clientCertificateRejected, as: HTTPClientError.self) {
            try await CurlTransport(configuration: .init(trustedCAFile: caFile)).send(
                HTTPRequest(url: try url("https://127.0.0.1:\(server.port)/"))
            )
        }
        #expect(missing?.reason.contains("no client certificate") == true)
        await expectError(.clientCertificateRejected, as: HTTPClientError.self) {
            try await CurlTransport(
                configuration: .init(trustedCAFile: caFile, clientIdentity: try TLSClientIdentity(client.stranger))
            )
            .send(HTTPRequest(url: try url("https://127.0.0.1:\(server.port)/")))
        }
        await expectError(.untrustedServerCertificate, as: HTTPClientError.self) {
            try await CurlTransport(
                configuration: .init(clientIdentity: try TLSClientIdentity(client.storedIdentity()))
            )
            .send(HTTPRequest(url: try url("https://127.0.0.1:\(server.port)/")))
        }
    }
}

/// `python3 -m http.server` in an `ssl` context, on ephemeral ports the script prints (IPv4, and IPv6
/// when the host has it). By default its handler and TLS settings are ``clientCertificateHandler``
/// and ``clientCertificateRequired``; a handler is Python source defining `Handler`, the settings are
/// lines changing `context` (which holds the server's identity and trusts the client CA already).
final class PythonTLSServer: Sendable {
    private let server: PythonServerProcess
    private let directory: TemporaryDirectory
    let port: Int
    let port6: Int?
    var hasIPv6: Bool { port6 != nil }

    func port(for host: String) -> Int { host == "[::1]" ? (port6 ?? port) : port }

    init(
        serverIdentity: SigningIdentity,
        clientCA: Certificate,
        handler: String = clientCertificateHandler,
        tlsSettings: String = clientCertificateRequired
    ) throws {
        directory = try TemporaryDirectory()
        guard let key = serverIdentity.key as? LocalSigningKey else {
            throw CertificateProviderError.invalidParameter("local key needed")
        }
        let certificate = try directory.write(
            "server.pem",
            text: ([serverIdentity.certificate] + serverIdentity.chain).map(\.pemRepresentation).joined()
        )
        let keyFile = try directory.write("server-key.pem", text: try key.pemRepresentation(password: nil))
        let trust = try directory.write("client-ca.pem", text: clientCA.pemRepresentation)
        let script = try directory.write(
            "server.py",
            text: """
                import http.server, json, socket, ssl, sys, threading
                \(handler)
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(sys.argv[1], sys.argv[2])
                context.load_verify_locations(sys.argv[3])
                \(tlsSettings)
                class Server(http.server.ThreadingHTTPServer):
                    daemon_threads = True
                    def get_request(self):
                        raw, address = self.socket.accept()
                        return context.wrap_socket(raw, server_side=True), address
                class Server6(Server):
                    address_family = socket.AF_INET6
                servers = [Server(("127.0.0.1", 0), Handler)]
                try:
                    servers.append(Server6(("::1", 0), Handler))
                except OSError:
                    pass
                print(" ".join(str(s.server_address[1]) for s in servers), flush=True)
                for s in servers[1:]:
                    threading.Thread(target=s.serve_forever, daemon=True).start()
                servers[0].serve_forever()
                """
        )
        server = try PythonServerProcess(
            script: script,
            arguments: [certificate, keyFile, trust],
            what: "the Python TLS server"
        )
        port = server.port
        port6 = server.ports.count > 1 ? server.ports[1] : nil
    }

    func stop() { server.stop() }

    /// `GET /redirect` answers 302, any other path JSON naming the client certificate's CN
    /// (`client`), the client's port and the path.
    static let clientCertificateHandler = """
        \(pythonJSONHandler)
        class Handler(JSONHandler):
            def do_GET(self):
                if self.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", "/hello?followed=1")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                peer = self.connection.getpeercert() or {}
                cn = next((value for rdn in peer.get("subject", ()) for (name, value) in rdn if name == "commonName"), None)
                self.send_json({"client": cn, "client_port": self.client_address[1], "path": self.path})
        """

    /// TLS 1.2 or 1.3, a client certificate required in the handshake.
    static let clientCertificateRequired = """
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.verify_mode = ssl.CERT_REQUIRED
        """
}
