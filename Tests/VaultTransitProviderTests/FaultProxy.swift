import CertificateProvidersTesting
import Foundation
import TestSupport

/// A Python `http.server` in front of a real OpenBao that answers requests whose path contains
/// `route` with HTTP `status` the first `count` times (every time when `count` is negative) and
/// forwards everything else: a server that fails (500) or throttles (429, then answers).
/// `GET /__faults` answers how many faults it sent. With `reflects`, a fault's error message repeats
/// the request's headers and body, as some servers' and proxies' error pages do.
final class FaultProxy: Sendable {
    private let server: PythonServerProcess
    let url: URL

    init(upstream: URL, route: String, status: Int, count: Int, reflects: Bool = false) throws {
        let script = """
            import http.client, http.server, json, sys, threading
            upstream_host, upstream_port = sys.argv[1], int(sys.argv[2])
            route, status, count = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
            reflects = sys.argv[6] == "1"
            lock = threading.Lock()
            sent = [0]
            class Handler(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def answer(self, code, body):
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    if code == 429:
                        self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(body)
                def handle_any(self):
                    length = int(self.headers.get("Content-Length") or 0)
                    body = self.rfile.read(length) if length else b""
                    if self.path == "/__faults":
                        return self.answer(200, json.dumps({"faults": sent[0]}).encode())
                    with lock:
                        fault = route in self.path and (count < 0 or sent[0] < count)
                        if fault:
                            sent[0] += 1
                    if fault:
                        message = "injected HTTP %d" % status
                        if reflects:
                            sent_headers = "; ".join("%s: %s" % item for item in self.headers.items())
                            message += "; you sent %s with %s" % (sent_headers, body.decode(errors="replace"))
                        return self.answer(status, json.dumps({"errors": [message]}).encode())
                    connection = http.client.HTTPConnection(upstream_host, upstream_port, timeout=30)
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                    connection.request(self.command, self.path, body=body, headers=headers)
                    response = connection.getresponse()
                    self.answer(response.status, response.read())
                    connection.close()
                do_GET = do_POST = do_PUT = handle_any
                def log_message(self, *args):
                    pass
            class Server(http.server.ThreadingHTTPServer):
                daemon_threads = True
            server = Server(("127.0.0.1", 0), Handler)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """
        let directory = try TemporaryDirectory(prefix: "fault-proxy")
        server = try PythonServerProcess(
            script: try directory.write("proxy.py", text: script),
            arguments: [
                upstream.host ?? "127.0.0.1", String(upstream.port ?? 0), route, String(status), String(count),
                reflects ? "1" : "0",
            ],
            what: "the fault proxy"
        )
        url = URL(string: "http://127.0.0.1:\(server.port)")!
    }

    /// How many faults it answered.
    func faults() throws -> Int {
        let data = try ExternalTool.run("curl", ["-sf", url.appendingPathComponent("__faults").absoluteString])
            .standardOutput
        return (try JSONSerialization.jsonObject(with: data) as? [String: Int])?["faults"] ?? -1
    }

    func stop() { server.stop() }
}
