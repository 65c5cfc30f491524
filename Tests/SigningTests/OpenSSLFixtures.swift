import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// Certificates and signatures an attacker (or an old archive) would bring, made by the openssl
/// command line under a `TestPKI` root, in a private temporary directory.
struct OpenSSLFixtures {
    /// A certificate made by `openssl x509 -req`, with its key file.
    struct Issued {
        let certificate: Certificate
        let certificatePath: String
        let keyPath: String
    }

    let pki: TestPKI
    let directory: TemporaryDirectory
    let rootPath: String
    let rootKeyPath: String
    private var serial = 100

    init(pki: TestPKI) throws {
        self.pki = pki
        directory = try TemporaryDirectory(prefix: "signing-evil")
        rootPath = try directory.write("root.pem", text: pki.root.certificate.pemRepresentation)
        rootKeyPath = try directory.write("root-key.pem", text: try pki.root.key.pemRepresentation(password: nil))
    }

    /// Runs openssl and fails the test with its stderr when it fails.
    @discardableResult
    func openssl(_ arguments: [String]) throws -> ExternalTool.Result {
        let result = try ExternalTool.run("openssl", arguments)
        try #require(result.succeeded, "openssl \(arguments.joined(separator: " ")): \(result.errorOutput)")
        return result
    }

    /// Issues a leaf under the root (or `issuer`) with `openssl x509 -req`.
    /// - Parameters:
    ///   - key: `genpkey` arguments (`-algorithm RSA -pkeyopt rsa_keygen_bits:1024`, …).
    ///   - extensions: lines of an OpenSSL extension section.
    ///   - certificateDigest: the digest the issuer signs the certificate with (`sha256`, `sha1`).
    mutating func issue(
        _ name: String,
        key: [String] = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
        extensions: [String] = [
            "basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature,nonRepudiation",
        ],
        certificateDigest: String = "sha256",
        issuer: Issued? = nil,
        days: Int = 30
    ) throws -> Issued {
        serial += 1
        let keyPath = directory.path("\(name)-key.pem")
        try openssl(["genpkey"] + key + ["-out", keyPath])
        let request = directory.path("\(name).csr")
        try openssl(["req", "-new", "-key", keyPath, "-subj", "/CN=\(name)/O=Evil Fixtures", "-out", request])
        let extensionFile = try directory.write(
            "\(name).cnf",
            text: "[v3]\n" + extensions.joined(separator: "\n") + "\n"
        )
        let certificatePath = directory.path("\(name).pem")
        try openssl([
            "x509", "-req", "-in", request, "-CA", issuer?.certificatePath ?? rootPath, "-CAkey",
            issuer?.keyPath ?? rootKeyPath,
            "-set_serial", "\(serial)", "-days", "\(days)", "-\(certificateDigest)", "-extfile", extensionFile,
            "-extensions", "v3",
            "-out", certificatePath,
        ])
        let certificate = try Certificate(
            pemEncoded: String(decoding: try directory.read("\(name).pem"), as: UTF8.self)
        )
        return Issued(certificate: certificate, certificatePath: certificatePath, keyPath: keyPath)
    }

    /// `openssl cms -sign` over `content`; returns the DER signature.
    func sign(_ content: [UInt8], by signer: Issued, extra: [String] = [], certfile: [Issued] = []) throws -> [UInt8] {
        let name = "sig-\(UUID().uuidString)"
        let document = try directory.write("\(name).bin", content)
        var arguments =
            [
                "cms", "-sign", "-binary", "-in", document, "-signer", signer.certificatePath, "-inkey", signer.keyPath,
                "-outform", "DER", "-out", directory.path("\(name).p7s"),
            ] + extra
        if !certfile.isEmpty {
            let bundle = try directory.write(
                "\(name)-certs.pem",
                text: certfile.map(\.certificate.pemRepresentation).joined()
            )
            arguments += ["-certfile", bundle]
        }
        try openssl(arguments)
        return try directory.read("\(name).p7s")
    }

    /// `openssl cms -resign`: adds a signer to an existing signature.
    func resign(_ signature: [UInt8], by signer: Issued, extra: [String] = []) throws -> [UInt8] {
        let name = "resign-\(UUID().uuidString)"
        let input = try directory.write("\(name)-in.p7s", signature)
        try openssl(
            [
                "cms", "-resign", "-binary", "-inform", "DER", "-in", input, "-signer", signer.certificatePath,
                "-inkey", signer.keyPath,
                "-outform", "DER", "-out", directory.path("\(name).p7s"),
            ] + extra
        )
        return try directory.read("\(name).p7s")
    }

    /// `openssl cms -verify` (the oracle) with the root as CA file.
    func opensslVerifies(_ signature: [UInt8], content: [UInt8]?, extra: [String] = []) throws -> ExternalTool.Result {
        let name = "verify-\(UUID().uuidString)"
        return try OpenSSLCMS.verify(
            signatureFile: try directory.write("\(name).p7s", signature),
            contentFile: try content.map { try directory.write("\(name).bin", $0) },
            caFile: rootPath,
            output: directory.path("\(name).out"),
            extra: extra
        )
    }
}
