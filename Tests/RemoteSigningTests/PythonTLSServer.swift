import CertificateProviders
import CertificateProvidersTesting
import Foundation

#if canImport(Glibc)
import TestSupport
#endif

/// A Python `http.server` in an `ssl` context on ephemeral ports the script prints (IPv4, and IPv6
/// when the host has it): by default ``clientCertificateRequired``; the script gets the server's
/// certificate chain, its key and the client CA as its three arguments.
final class PythonTLSServer: Sendable {
    private let server: PythonServerProcess
    private let directory: TemporaryDirectory
    let port: Int
    let port6: Int?
    var hasIPv6: Bool { port6 != nil }

    func port(for host: String) -> Int { host == "[::1]" ? (port6 ?? port) : port }

    init(serverIdentity: SigningIdentity, clientCA: Certificate, script: String = clientCertificateRequired) throws {
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
        let scriptFile = try directory.write("server.py", text: script)
        server = try PythonServerProcess(
            script: scriptFile,
            arguments: [certificate, keyFile, trust],
            what: "the Python TLS server"
        )
        port = server.port
        port6 = server.ports.count > 1 ? server.ports[1] : nil
    }

    func stop() { server.stop() }

    /// Requires a client certificate (TLS 1.2 or 1.3); `GET /redirect` answers 302, any other path
    /// JSON naming the client certificate's CN (`client`), the client's port and the path.
    static let clientCertificateRequired = """
        import http.server, json, socket, ssl, sys, threading
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_GET(self):
                if self.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", "/hello?followed=1")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                peer = self.connection.getpeercert() or {}
                cn = next((value for rdn in peer.get("subject", ()) for (name, value) in rdn if name == "commonName"), None)
                body = json.dumps({"client": cn, "client_port": self.client_address[1], "path": self.path}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        context.load_verify_locations(sys.argv[3])
        context.verify_mode = ssl.CERT_REQUIRED
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
}
