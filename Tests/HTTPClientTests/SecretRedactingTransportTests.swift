import CertificateProviders
import CertificateProvidersTesting
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

@Suite("SecretRedactingTransport: a server that repeats the request in its error never gets a secret into it")
struct SecretRedactingTransportTests {
    /// A real loopback server that answers every POST with the request's headers and body as text: HTTP
    /// 400 for paths under `/fail`, else 200.
    final class ReflectingServer: Sendable {
        private let server: PythonServerProcess
        private let directory: TemporaryDirectory
        let url: URL

        init() throws {
            directory = try TemporaryDirectory()
            let script = try directory.write(
                "server.py",
                text: """
                    import http.server
                    class Handler(http.server.BaseHTTPRequestHandler):
                        protocol_version = "HTTP/1.1"
                        def do_POST(self):
                            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                            text = str(self.headers).encode() + b"\\n" + body
                            self.send_response(400 if self.path.startswith("/fail") else 200)
                            self.send_header("Content-Length", str(len(text)))
                            self.send_header("X-Echo", self.headers.get("Authorization") or "")
                            self.end_headers()
                            self.wfile.write(text)
                        def log_message(self, *args):
                            pass
                    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
                    print(server.server_address[1], flush=True)
                    server.serve_forever()
                    """
            )
            server = try PythonServerProcess(script: script, what: "the reflecting server")
            url = URL(string: "http://127.0.0.1:\(server.port)")!
        }

        func stop() { server.stop() }
    }

    @Test("header tokens, Basic credentials and form and JSON body secrets are cut out of a 400; a 200 is untouched")
    func reflected() async throws {
        let server = try ReflectingServer()
        defer { server.stop() }
        let transport = SecretRedactingTransport(CurlTransport(), secrets: [Secret("never-sent-key")])
        let password = "pa ss/wörd&1"
        let token = "hvs.CAESIJ3x0token"
        let clientSecret = "client-secret-42"

        var form = HTTPRequest(method: .post, url: server.url.appendingPathComponent("fail"), timeout: 10)
        form.setHeader("X-Vault-Token", token)
        form.setHeader("Authorization", "Basic " + Data("client:\(clientSecret)".utf8).base64EncodedString())
        let slot = SecretSlot(Secret(password))
        form.setFormBody([("username", "Leonid"), ("password", slot.placeholder)], secrets: [slot])
        let failed = try await transport.send(form)
        let text = String(decoding: failed.body, as: UTF8.self)
        #expect(failed.status == 400)
        #expect(text.contains("username=Leonid"), "the rest of the server's text stays: \(text)")
        #expect(text.contains("X-Vault-Token: [redacted]"), "\(text)")
        let encodedPassword = HTTPRequest.formEncoded([("", password)]).dropFirst()
        for secret in [token, clientSecret, password, String(encodedPassword), "never-sent-key"] {
            #expect(!text.contains(secret), "'\(secret)' in: \(text)")
        }
        #expect(failed.header("X-Echo") == "[redacted]")

        var json = HTTPRequest(method: .post, url: server.url.appendingPathComponent("fail"), timeout: 10)
        let pin = SecretSlot(Secret("12\"34"))
        try json.setJSONBody(["pin": .string(pin.placeholder), "note": "kept"], secrets: [pin])
        let jsonText = String(decoding: try await transport.send(json).body, as: UTF8.self)
        #expect(jsonText.contains("\"note\"") && !jsonText.contains(#"12\"34"#), "\(jsonText)")
        // A token the first request carried is still known to a later one that does not carry it.
        var later = HTTPRequest(method: .post, url: server.url.appendingPathComponent("fail"), timeout: 10)
        later.body = Array("an old token: \(token)".utf8)
        let laterText = String(decoding: try await transport.send(later).body, as: UTF8.self)
        #expect(!laterText.contains(token) && laterText.contains("an old token: [redacted]"), "\(laterText)")

        // A success is the protocol: passed on as the server sent it.
        form.url = server.url.appendingPathComponent("ok")
        let succeeded = try await transport.send(form)
        #expect(succeeded.status == 200)
        #expect(String(decoding: succeeded.body, as: UTF8.self).contains(token))
    }

    @Test("a credential header sent again, a new token in it, and names in any case: each secret is cut out")
    func repeatedAndRenewedHeaders() async throws {
        let server = try ReflectingServer()
        defer { server.stop() }
        let transport = SecretRedactingTransport(CurlTransport())
        let url = server.url.appendingPathComponent("fail")
        // The same token on several requests, then a renewed one: both are known afterwards.
        for token in ["first-token-1111", "first-token-1111", "renewed-token-2222"] {
            var request = HTTPRequest(method: .post, url: url, timeout: 10)
            request.setHeader("AUTHORIZATION", "Bearer   \(token)  ")
            request.setHeader("x-Api-Key", "api-key-value-3333")
            request.setHeader("X-SESSION-Id", "session-value-4444")
            let text = String(decoding: try await transport.send(request).body, as: UTF8.self)
            for secret in [token, "api-key-value-3333", "session-value-4444"] {
                #expect(!text.contains(secret), "'\(secret)' in: \(text)")
            }
        }
        var later = HTTPRequest(method: .post, url: url, timeout: 10)
        later.body = Array("old first-token-1111, new renewed-token-2222".utf8)
        let laterText = String(decoding: try await transport.send(later).body, as: UTF8.self)
        #expect(laterText.contains("old [redacted], new [redacted]"), "\(laterText)")
    }
}
