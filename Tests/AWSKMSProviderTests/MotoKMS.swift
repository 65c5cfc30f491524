import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real `moto_server` (PyPI `moto[server]`) on a free loopback port, with keys made by boto3
/// (`Fixtures/moto_kms_setup.py`): a P-256 and an RSA-2048 signing key, an encryption-only key and
/// an alias of the P-256 key, reachable only with the IAM access key the script made (moto checks
/// SigV4 signatures from the eighth request on). Certificates for the KMS keys come from a test CA
/// made with openssl (`-force_pubkey`).
final class MotoKMS: Sendable {
    static let fixtures = PackageRoot.url.appendingPathComponent("Tests/AWSKMSProviderTests/Fixtures")

    let url: URL
    let accessKeyID: String
    let secretAccessKey: String
    let region: String
    let keys: [String: String]
    let alias: String
    /// The PEM public keys boto3 read (`p256`, `rsa`).
    let publicKeys: [String: String]
    /// The test CA's certificate and key files, and the directory they live in.
    let work: TemporaryDirectory
    let caCertificate: Certificate
    private let process: Process

    /// Starts moto and makes the keys.
    /// - Throws: when moto_server or boto3 is missing (the message names `make deps`) or does not start.
    init() throws {
        try #require(ExternalTool.isAvailable("moto_server"), "moto_server is missing: run 'make deps' (moto[server])")
        let port = try Self.freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ExternalTool.path(of: "moto_server")!)
        process.arguments = ["-H", "127.0.0.1", "-p", String(port)]
        var environment = ProcessInfo.processInfo.environment
        environment["INITIAL_NO_AUTH_ACTION_COUNT"] = "7"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        url = URL(string: "http://127.0.0.1:\(port)/")!
        // A TCP connect, not an HTTP request: moto counts requests towards INITIAL_NO_AUTH_ACTION_COUNT.
        let wait = """
            import socket, sys, time
            for _ in range(300):
                try:
                    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
                    sys.exit(0)
                except OSError:
                    time.sleep(0.05)
            sys.exit(1)
            """
        let started = try ExternalTool.run("python3", ["-c", wait, String(port)]).succeeded
        let setup = try ExternalTool.run(
            "python3",
            [Self.fixtures.appendingPathComponent("moto_kms_setup.py").path, url.absoluteString]
        )
        guard started, setup.succeeded,
            let json = try JSONSerialization.jsonObject(with: setup.standardOutput) as? [String: Any]
        else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw CocoaError(
                .fileReadUnknown,
                userInfo: [NSLocalizedDescriptionKey: "moto did not start (run 'make deps'): \(setup.errorOutput)"]
            )
        }
        accessKeyID = json["accessKeyID"] as! String
        secretAccessKey = json["secretAccessKey"] as! String
        region = json["region"] as! String
        keys = json["keys"] as! [String: String]
        alias = json["alias"] as! String
        publicKeys = json["publicKeys"] as! [String: String]
        work = try TemporaryDirectory(prefix: "aws-kms-ca")
        let key = work.path("ca.key")
        let made = try ExternalTool.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                "-out", work.path("ca.pem"), "-days", "30", "-subj", "/CN=KMS Test CA/O=swift-certificate-providers",
                "-addext", "basicConstraints=critical,CA:true", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ]
        )
        try #require(made.succeeded, "openssl: \(made.errorOutput)")
        caCertificate = try Certificate(pemEncoded: String(decoding: try work.read("ca.pem"), as: UTF8.self))
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A certificate from the test CA for the KMS key `name` (`p256`, `rsa`), as `<name>.pem` (the
    /// leaf then the CA) in `work`; returns its path.
    func certificate(for name: String, subject: String = "/CN=KMS Signer/O=Test") throws -> String {
        let publicKey = try work.write("\(name)-public.pem", text: publicKeys[name]!)
        let extensions = try work.write(
            "leaf.ext",
            text: "basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature,nonRepudiation\n"
                + "extendedKeyUsage=emailProtection\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
        )
        let made = try ExternalTool.run(
            "openssl",
            [
                "x509", "-new", "-subj", subject, "-force_pubkey", publicKey, "-CA", work.path("ca.pem"), "-CAkey",
                work.path("ca.key"), "-days", "30", "-extfile", extensions, "-out", work.path("\(name)-leaf.pem"),
            ]
        )
        try #require(made.succeeded, "openssl: \(made.errorOutput)")
        let chain = try work.read("\(name)-leaf.pem") + (try work.read("ca.pem"))
        return try work.write("\(name).pem", chain)
    }

    /// The `certsign` arguments that select the KMS key `keyID`, the secret key taken from
    /// `AWS_KMS_SECRET` (``environment``).
    func arguments(keyID: String, certificate: String?, endpoint: URL? = nil) -> [String] {
        var arguments = [
            "--provider", "aws-kms", "--param", "region=\(region)", "--param", "keyID=\(keyID)", "--param",
            "endpointURL=\((endpoint ?? url).absoluteString)", "--param", "accessKeyID=\(accessKeyID)",
            "--param-env", "secretAccessKey=AWS_KMS_SECRET",
        ]
        if let certificate { arguments += ["--param", "certificate=\(certificate)"] }
        return arguments
    }

    /// The environment ``arguments(keyID:certificate:endpoint:)`` reads the secret from.
    var environment: [String: String] { ["AWS_KMS_SECRET": secretAccessKey] }

    /// Expects `document`'s `.p7s` to pass `openssl cms -verify -cades` with the test CA trusted.
    func expectVerifies(
        _ document: String,
        _ label: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let verified = try OpenSSLCMS.verify(
            signatureFile: document + ".p7s",
            contentFile: document,
            caFile: work.path("ca.pem"),
            cades: true
        )
        #expect(verified.succeeded, "\(label)\(verified.errorOutput)", sourceLocation: sourceLocation)
    }

    /// The SHA-256 fingerprint (`AB:CD:…`) of the public key boto3 read for the KMS key `name`,
    /// computed by openssl.
    func publicKeyFingerprint(_ name: String) throws -> String {
        let der = try work.write("\(name)-public.der", try Certificate.publicKeyDER(pem: publicKeys[name]!))
        let digest = try ExternalTool.run("openssl", ["dgst", "-sha256", "-c", der])  // "SHA2-256(FILE)= ab:cd:…"
        try #require(digest.succeeded, "\(digest.errorOutput)")
        return String(digest.output.split(separator: " ").last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            .uppercased()
    }

    /// A port nothing listens on now.
    static func freePort() throws -> Int {
        let result = try ExternalTool.run(
            "python3",
            ["-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"]
        )
        return try #require(Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)))
    }
}

/// Expects `body` to throw a `CertificateProviderError` with `code` whose reason contains `text`.
func expectError<R>(
    _ code: CertificateProviderError.Code,
    containing text: String,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async {
    let error = await expectError(code, sourceLocation: sourceLocation, body)
    #expect(error?.reason.contains(text) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
}
