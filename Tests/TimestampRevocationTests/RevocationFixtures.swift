import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

/// `openssl ca -gencrl` for one TestPKI authority, with a configuration written into a temporary
/// directory: CRLs listing the certificates it revoked, with the CRL extensions a test asks for
/// (issuing distribution point, delta CRL indicator, an unknown critical extension…).
struct OpenSSLCRLIssuer {
    let directory: TemporaryDirectory
    let name: String
    let certificatePath: String
    let keyPath: String

    init(_ authority: TestPKI.Authority, name: String, in directory: TemporaryDirectory) throws {
        self.directory = directory
        self.name = name
        certificatePath = try directory.write("\(name)-ca.pem", text: authority.certificate.pemRepresentation)
        keyPath = try directory.write("\(name)-ca.key", text: try authority.key.pemRepresentation(password: nil))
    }

    /// One line of an `openssl ca` index: `V`alid, or `R`evoked at `revoked`.
    static func indexLine(_ certificate: Certificate, revoked: Date?) -> String {
        var serial = certificate.serialNumber.uppercased()
        if serial.count % 2 == 1 { serial = "0" + serial }
        return [
            revoked == nil ? "V" : "R", indexTime(certificate.notValidAfter), revoked.map(indexTime) ?? "", serial,
            "unknown", "/CN=\(certificate.subjectAttribute("CN") ?? "")",
        ].joined(separator: "\t")
    }

    /// A time as `openssl ca` writes it in its index.
    static func indexTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyMMddHHmmss'Z'"
        return formatter.string(from: date)
    }

    /// Makes `file` (PEM): a CRL numbered `number` listing `revoked`, with `extensions` (lines of
    /// its `[crl_ext]` section) and `sections` (more configuration text they refer to).
    /// - Returns: the CRL's path.
    @discardableResult
    func makeCRL(
        _ file: String,
        revoked: [(certificate: Certificate, date: Date)] = [],
        number: Int = 1,
        extensions: [String] = [],
        sections: String = ""
    ) throws -> String {
        let index = try directory.write(
            "\(file).index",
            text: revoked.map { Self.indexLine($0.certificate, revoked: $0.date) + "\n" }.joined()
        )
        _ = try directory.write("\(file).index.attr", text: "unique_subject = no\n")
        let counter = try directory.write("\(file).number", text: String(format: "%02X\n", number))
        let config = try directory.write(
            "\(file).cnf",
            text: """
                [ ca ]
                default_ca = test_ca
                [ test_ca ]
                database = \(index)
                crlnumber = \(counter)
                default_md = sha256
                default_crl_days = 1
                \(extensions.isEmpty ? "" : "crl_extensions = crl_ext")
                [ crl_ext ]
                \(extensions.joined(separator: "\n"))
                \(sections)
                """
        )
        let made = try ExternalTool.run(
            "openssl",
            [
                "ca", "-gencrl", "-config", config, "-keyfile", keyPath, "-cert", certificatePath, "-out",
                directory.path(file),
            ]
        )
        guard made.succeeded else {
            throw CertificateProviderError(.cryptoFailure, "openssl ca -gencrl: \(made.errorOutput)")
        }
        return directory.path(file)
    }
}

/// An OCSP responder made with Python `cryptography`'s `ocsp.OCSPResponseBuilder` behind
/// `http.server` on 127.0.0.1 (a free port the script prints), answering for the CAs it is given.
/// The last path component of the URL picks the answer: `good`, `revoked` (an hour ago), `stale`
/// (thisUpdate 2020-01-01, no nextUpdate), `dayold` (thisUpdate a day ago, no nextUpdate),
/// `future` (thisUpdate in two days), `nononce` (good, without the request's nonce), `wrongnonce`
/// (good, with a nonce that is not the request's), `wrongid` (good, for another certificate of the
/// same issuer). Every other answer echoes the nonce.
final class PythonOCSPResponder: Sendable {
    private let server: PythonServerProcess
    var port: Int { server.port }

    /// The responder URL for `mode`.
    func url(_ mode: String) -> String { "http://127.0.0.1:\(port)/\(mode)" }

    static let script = """
        import sys, datetime, hashlib, http.server
        from cryptography import x509
        from cryptography.x509 import ocsp
        from cryptography.hazmat.primitives import hashes, serialization
        folder = sys.argv[1]
        def authorities():
            for name in sys.argv[2].split(','):
                cert = x509.load_pem_x509_certificate(open(f'{folder}/{name}-ca.pem', 'rb').read())
                key = serialization.load_pem_private_key(open(f'{folder}/{name}-ca.key', 'rb').read(), None)
                yield cert, key
        def utcnow():
            return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
        def answer(body, mode):
            request = ocsp.load_der_ocsp_request(body)
            for cert, key in authorities():
                key_hash = x509.SubjectKeyIdentifier.from_public_key(cert.public_key()).digest
                name_hash = hashlib.sha1(cert.subject.public_bytes()).digest()
                if request.issuer_key_hash == key_hash and request.issuer_name_hash == name_hash:
                    break
            else:
                return ocsp.OCSPResponseBuilder.build_unsuccessful(ocsp.OCSPResponseStatus.UNAUTHORIZED)
            known = x509.load_pem_x509_certificates(open(f'{folder}/known.pem', 'rb').read())
            same_issuer = [c for c in known if c.issuer == cert.subject]
            target = next((c for c in same_issuer if c.serial_number == request.serial_number), None)
            if target is None:
                return ocsp.OCSPResponseBuilder.build_unsuccessful(ocsp.OCSPResponseStatus.UNAUTHORIZED)
            if mode == 'wrongid':
                target = next(c for c in same_issuer if c.serial_number != request.serial_number)
            now = utcnow()
            this_update, next_update = now - datetime.timedelta(minutes=1), now + datetime.timedelta(hours=1)
            status, revoked_at = ocsp.OCSPCertStatus.GOOD, None
            if mode == 'stale':
                this_update, next_update = datetime.datetime(2020, 1, 1), None
            elif mode == 'dayold':
                this_update, next_update = now - datetime.timedelta(days=1), None
            elif mode == 'future':
                this_update, next_update = now + datetime.timedelta(days=2), now + datetime.timedelta(days=3)
            elif mode == 'revoked':
                status, revoked_at = ocsp.OCSPCertStatus.REVOKED, now - datetime.timedelta(hours=1)
            builder = ocsp.OCSPResponseBuilder().add_response(
                cert=target, issuer=cert, algorithm=hashes.SHA1(), cert_status=status, this_update=this_update,
                next_update=next_update, revocation_time=revoked_at, revocation_reason=None,
            ).responder_id(ocsp.OCSPResponderEncoding.HASH, cert)
            if mode == 'wrongnonce':
                builder = builder.add_extension(x509.OCSPNonce(bytes(16)), critical=False)
            elif mode != 'nononce':
                try:
                    nonce = request.extensions.get_extension_for_class(x509.OCSPNonce).value
                    builder = builder.add_extension(nonce, critical=False)
                except x509.ExtensionNotFound:
                    pass
            return builder.sign(key, hashes.SHA256())
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
                der = answer(body, self.path.rstrip('/').rsplit('/', 1)[-1]).public_bytes(serialization.Encoding.DER)
                self.send_response(200)
                self.send_header('Content-Type', 'application/ocsp-response')
                self.send_header('Content-Length', str(len(der)))
                self.end_headers()
                self.wfile.write(der)
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        server.daemon_threads = True
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    /// Starts the responder for the CAs named `issuers` (their `NAME-ca.pem` / `NAME-ca.key` files
    /// in `directory`, as ``OpenSSLCRLIssuer`` writes them) and the certificates of `known.pem`
    /// there; the files are read at each request, so they may be written after the start (the
    /// certificates name the responder's port).
    init(directory: TemporaryDirectory, issuers: [String]) throws {
        let script = try directory.write("ocsp-responder.py", text: Self.script)
        server = try PythonServerProcess(
            script: script,
            arguments: [directory.url.path, issuers.joined(separator: ",")],
            what: "the Python OCSP responder"
        )
    }

    /// Stops the responder.
    func stop() { server.stop() }

    /// What `openssl ocsp` says about `certificate` (issued by `issuer`) asking `url`, trusting
    /// `anchor`, with a 7-day `-status_age`: its standard output and error together.
    static func openSSLVerdict(
        certificate: String,
        issuer: String,
        anchor: String,
        url: String
    ) throws -> String {
        let result = try ExternalTool.run(
            "openssl",
            [
                "ocsp", "-issuer", issuer, "-cert", certificate, "-url", url, "-CAfile", anchor, "-VAfile", issuer,
                "-status_age", "604800",
            ]
        )
        return result.output + result.errorOutput
    }
}
