public import CertificateProviders
import CertificateProvidersTesting
public import Foundation
import Testing

/// certomancer's Animator (PyPI `certomancer`) as the test PKI's real TSA, OCSP responder and CRL
/// source, on a free loopback port (`Tests/Fixtures/certomancer/serve.py`): root → intermediate CA,
/// signers (RSA, P-256, one revoked, one with only a CRL distribution point) and a TSA whose certificates carry an AIA OCSP URL and a CRL
/// distribution point on this server. Nothing of ours checks ours.
///
/// The server writes its certificates (`NAME.cert.pem`), PKCS#12 files (`NAME.pfx`, password
/// ``pkcs12Password``) and signer keys into ``directory``, and logs every request it answers, so a
/// test can count them (``requests(containing:)``). ``stop()`` takes it off the network (the
/// offline tests); the files stay.
public final class CertomancerPKI: Sendable {
    /// The password of every `NAME.pfx`.
    public static let pkcs12Password = "test"

    private let server: PythonServerProcess
    /// Where the certificates, PKCS#12 files and the request log are.
    public let directory: TemporaryDirectory
    /// The server's port on 127.0.0.1.
    public var port: Int { server.port }

    /// Starts the server and waits until it has written the PKI and bound its port.
    /// - Throws: when python3 or certomancer is missing (run `make deps`) or the server does not start.
    public init() throws {
        let check = try ExternalTool.run("python3", ["-c", "import certomancer, werkzeug"])
        try #require(check.succeeded, "certomancer is not installed (run `make deps`): \(check.errorOutput)")
        let fixtures = PackageRoot.url.appendingPathComponent("Tests/Fixtures/certomancer")
        directory = try TemporaryDirectory(prefix: "certomancer")
        server = try PythonServerProcess(
            script: fixtures.appendingPathComponent("serve.py").path,
            arguments: [fixtures.appendingPathComponent("certomancer.yml").path, directory.url.path],
            what: "certomancer (Tests/Fixtures/certomancer/serve.py; run `make deps` if it is missing)"
        )
    }

    /// The TSA's URL.
    public var timestampURL: URL { URL(string: "http://127.0.0.1:\(port)/testing/tsa/tsa")! }

    /// The URL of `tsa-archive`, a TSA whose certificate outlives `tsa`'s (2089 against 2080): for
    /// archive timestamps that past-signature validation checks after `tsa` expired.
    public var archiveTimestampURL: URL { URL(string: "http://127.0.0.1:\(port)/testing/tsa/tsa-archive")! }

    /// The path of certificate `label` (PEM): root, interm, interm-ocsp, tsa, signer-rsa, signer-ec,
    /// signer-revoked, signer-crl.
    public func certificatePath(_ label: String) -> String { directory.path("\(label).cert.pem") }

    /// The path of the PKCS#12 file of `label` (its key, certificate and chain; password
    /// ``pkcs12Password``).
    public func pkcs12Path(_ label: String) -> String { directory.path("\(label).pfx") }

    /// Certificate `label`.
    public func certificate(_ label: String) throws -> Certificate {
        try #require(try Certificate.certificates(derOrPEM: try directory.read("\(label).cert.pem")).first)
    }

    /// The requests answered so far whose `METHOD PATH` line contains `text` (`/ocsp/`, `/crls/`,
    /// `/tsa/`), in order.
    public func requests(containing text: String) -> [String] {
        let log = (try? String(contentsOfFile: directory.path("requests.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init).filter { $0.contains(text) }
    }

    /// Takes the server off the network (its port then refuses connections); its files stay.
    public func stop() { server.stop() }
}
