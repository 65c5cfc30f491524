import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign sign --provider aws-kms` against a real moto_server: CAdES and PAdES with a P-256 and
/// an RSA-2048 KMS key, verified by `openssl cms -verify` and pyHanko; every bad input an exit 1
/// with no output file and no secret printed.
@Suite("certsign sign --provider aws-kms against moto", .serialized, .enabled(if: CLI.isBuilt))
struct AWSKMSCommandTests {
    @Test(
        "CAdES with the P-256 and the RSA key (and the P-256 key by its alias, credentials from AWS_*): openssl cms -verify -cades"
    )
    func cades() throws {
        let moto = try MotoKMS()
        let store = try TemporaryDirectory()
        let document = try store.write("contract.txt", text: "Договор поставки № 7\n")
        for (name, keyID) in [("p256", moto.keys["p256"]!), ("rsa", moto.keys["rsa"]!)] {
            let result = try CLI.run(
                ["sign", document, "--force"]
                    + moto.arguments(keyID: keyID, certificate: try moto.certificate(for: name)),
                store: store,
                environment: moto.environment
            )
            #expect(result.succeeded, "\(name): \(result.errorOutput)")
            try moto.expectVerifies(document, "\(name): ")
            #expect(!(result.output + result.errorOutput).contains(moto.secretAccessKey))
        }
        // The standard environment variables instead of parameters, and the key by its alias.
        let result = try CLI.run(
            [
                "sign", document, "--force", "--provider", "aws-kms", "--param", "keyID=\(moto.alias)", "--param",
                "endpointURL=\(moto.url.absoluteString)", "--param", "certificate=\(try moto.certificate(for: "p256"))",
            ],
            store: store,
            environment: [
                "AWS_ACCESS_KEY_ID": moto.accessKeyID, "AWS_SECRET_ACCESS_KEY": moto.secretAccessKey,
                "AWS_DEFAULT_REGION": moto.region,
            ]
        )
        #expect(result.succeeded, "\(result.errorOutput)")
        try moto.expectVerifies(document)
        try expectNoSecret(moto.secretAccessKey, in: store)
    }

    @Test(
        "certsign csr with the P-256 and the RSA key: openssl req -verify, the KMS public key, a CA's certificate that signs"
    )
    func certificateRequest() throws {
        let moto = try MotoKMS()
        let store = try TemporaryDirectory()
        let document = try store.write("order.txt", text: "Заказ № 12\n")
        for name in ["p256", "rsa"] {
            let request = store.path("\(name).csr")
            let made = try CLI.run(
                ["csr", "--subject", "CN=Иван Петров,O=Test", "--out", request]
                    + moto.arguments(keyID: moto.keys[name]!, certificate: nil),
                store: store,
                environment: moto.environment
            )
            #expect(made.succeeded, "\(name): \(made.errorOutput)")
            let verified = try ExternalTool.run("openssl", ["req", "-in", request, "-verify", "-noout"])
            #expect(verified.succeeded, "\(name): \(verified.errorOutput)")
            // The request carries the key boto3 reads from KMS.
            let requestKey = try ExternalTool.run("openssl", ["req", "-in", request, "-pubkey", "-noout"])
            #expect(
                try Certificate.publicKeyDER(pem: requestKey.output)
                    == (try Certificate.publicKeyDER(pem: moto.publicKeys[name]!)),
                "\(name)"
            )
            // A CA certifies the request; the certificate then signs through the same key.
            let leaf = store.path("\(name)-from-csr.pem")
            let extensions = try store.write("leaf.ext", text: "keyUsage=critical,digitalSignature,nonRepudiation\n")
            let issued = try ExternalTool.run(
                "openssl",
                [
                    "x509", "-req", "-in", request, "-CA", moto.work.path("ca.pem"), "-CAkey",
                    moto.work.path("ca.key"), "-days", "30", "-extfile", extensions, "-out", leaf,
                ]
            )
            #expect(issued.succeeded, "\(name): \(issued.errorOutput)")
            let signed = try CLI.run(
                ["sign", document, "--force"] + moto.arguments(keyID: moto.keys[name]!, certificate: leaf),
                store: store,
                environment: moto.environment
            )
            #expect(signed.succeeded, "\(name): \(signed.errorOutput)")
            try moto.expectVerifies(document, "\(name): ")
        }
        try expectNoSecret(moto.secretAccessKey, in: store)
    }

    @Test("PAdES with the P-256 and the RSA key: pyHanko finds each signature intact and trusted")
    func pades() throws {
        let moto = try MotoKMS()
        let store = try TemporaryDirectory()
        let pdf = try store.write("invoice.pdf", TestPDF.minimal())
        for name in ["p256", "rsa"] {
            let output = store.path("invoice-\(name).pdf")
            let result = try CLI.run(
                ["sign", pdf, "--format", "pades", "--field", "KMS", "--out", output]
                    + moto.arguments(keyID: moto.keys[name]!, certificate: try moto.certificate(for: name)),
                store: store,
                environment: moto.environment
            )
            #expect(result.succeeded, "\(name): \(result.errorOutput)")
            let judged = try PyHankoValidator.validate(output, root: moto.caCertificate, in: store)
            #expect(judged.count == 1 && judged.first?.contains("KMS: INTACT:TRUSTED") == true, "\(name): \(judged)")
        }
    }

    @Test(
        "many documents in one sign: Sign requests in flight together (at most concurrentRequests), every .p7s verifies"
    )
    func batch() throws {
        let moto = try MotoKMS()
        let store = try TemporaryDirectory()
        let log = store.path("statuses.log")
        // Each request waits 0.2 s in a loopback proxy that counts the requests it holds at once.
        let proxy = try PythonServerProcess(
            script: MotoKMS.fixtures.appendingPathComponent("fault_proxy.py").path,
            arguments: [moto.url.absoluteString, "delay", log],
            what: "the delaying proxy"
        )
        defer { proxy.stop() }
        let documents = try (1...16).map { try store.write("doc-\($0).txt", text: "document \($0)\n") }
        let started = Date()
        let result = try CLI.run(
            ["sign"] + documents
                + moto.arguments(
                    keyID: moto.keys["p256"]!,
                    certificate: try moto.certificate(for: "p256"),
                    endpoint: URL(string: "http://127.0.0.1:\(proxy.port)/")!
                )
                + ["--param", "concurrentRequests=4"],
            store: store,
            environment: moto.environment
        )
        let seconds = Date().timeIntervalSince(started)
        #expect(result.succeeded, "\(result.errorOutput)")
        let most =
            (try String(contentsOfFile: log, encoding: .utf8)).split(separator: "\n")
            .compactMap { $0.hasPrefix("inflight=") ? Int($0.dropFirst("inflight=".count)) : nil }.max() ?? 0
        #expect(most > 1 && most <= 4, "Sign requests in flight at once: \(most)")
        for document in documents {
            try moto.expectVerifies(document, "\(document): ")
        }
        print("aws-kms: 16 documents, 0.2 s per Sign, \(most) in flight: \(String(format: "%.2f", seconds)) s")
    }

    @Test(
        "bad inputs: wrong secret, unknown key, encryption-only key, mismatched certificate, closed port, a digest the key does not sign, an unknown session token: exit 1, a clear reason, no output, no secret",
        arguments: [
            "wrong-secret", "unknown-key", "encryption-key", "mismatched-certificate", "closed-port", "wrong-digest",
            "unknown-session-token",
        ]
    )
    func badInput(_ kind: String) throws {
        let moto = try MotoKMS()
        let store = try TemporaryDirectory()
        let document = try store.write("doc.txt", text: "document\n")
        var keyID = moto.keys["p256"]!
        var certificate = try moto.certificate(for: "p256")
        var environment = moto.environment
        var endpoint = moto.url
        var extra: [String] = []
        let expected: String
        switch kind {
        case "wrong-secret":
            environment["AWS_KMS_SECRET"] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYWRONGKEY"
            expected = "SignatureDoesNotMatch"
        case "unknown-key":
            keyID = "0b5bd1e7-6f0c-4d0e-9a3e-000000000000"
            expected = "NotFoundException"
        case "encryption-key":
            keyID = moto.keys["encryption"]!
            expected = "not SIGN_VERIFY"
        case "mismatched-certificate":
            certificate = try moto.certificate(for: "rsa")
            expected = "the key's is \(try moto.publicKeyFingerprint("p256"))"
        case "unknown-session-token":
            // moto knows only the tokens its STS issued: this one is refused as AWS refuses it.
            environment["AWS_SESSION_TOKEN"] = "FwoGZXIvYXdzEBYaDGV4cGlyZWQtdG9rZW4"
            expected = "InvalidClientTokenId"
        case "wrong-digest":
            extra = ["--digest", "sha384"]
            expected = "signs with ECDSA_SHA_256, not ECDSA_SHA_384"
        default:
            endpoint = URL(string: "http://127.0.0.1:\(try MotoKMS.freePort())/")!
            expected = "127.0.0.1"
        }
        let result = try CLI.run(
            ["sign", document] + moto.arguments(keyID: keyID, certificate: certificate, endpoint: endpoint) + extra,
            store: store,
            environment: environment
        )
        #expect(result.status == 1, "\(kind): \(result.status) \(result.errorOutput)")
        #expect(result.errorOutput.contains(expected), "\(kind): \(result.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: document + ".p7s"), "\(kind): no signature file")
        let secrets = [moto.secretAccessKey, environment["AWS_KMS_SECRET"], environment["AWS_SESSION_TOKEN"]]
        for secret in secrets.compactMap({ $0 }) {
            #expect(!(result.output + result.errorOutput).contains(secret), "\(kind): the secret was printed")
            try expectNoSecret(secret, in: store)
        }
    }

    @Test(
        "a server that answers 500, or 429 every time: exit 1 after the retries; 429 twice then moto: retried and signed",
        arguments: ["always-500", "always-429", "throttle-2"]
    )
    func faults(_ mode: String) throws {
        let moto = try MotoKMS()
        let store = try TemporaryDirectory()
        let log = store.path("statuses.log")
        let proxy = try PythonServerProcess(
            script: MotoKMS.fixtures.appendingPathComponent("fault_proxy.py").path,
            arguments: [moto.url.absoluteString, mode, log],
            what: "the fault proxy"
        )
        defer { proxy.stop() }
        let document = try store.write("doc.txt", text: "document\n")
        let result = try CLI.run(
            ["sign", document]
                + moto.arguments(
                    keyID: moto.keys["p256"]!,
                    certificate: try moto.certificate(for: "p256"),
                    endpoint: URL(string: "http://127.0.0.1:\(proxy.port)/")!
                ),
            store: store,
            environment: moto.environment
        )
        let statuses = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n") ?? []
        if mode == "throttle-2" {
            #expect(result.succeeded, "\(result.errorOutput)")
            #expect(statuses.prefix(3) == ["429", "429", "200"], "\(statuses)")
            try moto.expectVerifies(document)
        } else {
            #expect(result.status == 1, "\(result.errorOutput)")
            #expect(statuses.count == 4, "four attempts: \(statuses)")
            let code = mode == "always-500" ? "KMSInternalException" : "ThrottlingException"
            #expect(
                result.errorOutput.contains(code) && result.errorOutput.contains("4 attempts"),
                "\(result.errorOutput)"
            )
            #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
        }
        #expect(!(result.output + result.errorOutput).contains(moto.secretAccessKey))
    }

    /// No file under `store` (the journal included) holds `secret`.
    func expectNoSecret(_ secret: String, in store: TemporaryDirectory) throws {
        let files = FileManager.default.enumerator(atPath: store.url.path)?.compactMap { $0 as? String } ?? []
        for file in files {
            let bytes = (try? Data(contentsOf: store.url.appendingPathComponent(file))) ?? Data()
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds the secret")
        }
    }
}
