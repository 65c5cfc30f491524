import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// Bad inputs against a real OpenBao (and a fault proxy in front of it): each a clear error, exit 1,
/// no output file, the token printed nowhere.
@Suite("vault-transit: wrong token, unknown key, encryption key, mismatched certificate, 500, 429, closed port")
struct VaultTransitErrorTests {
    /// A certificate issued for `key` through certsign csr and openssl x509 -req.
    func certificate(for key: String, _ bao: BaoServer, _ work: TemporaryDirectory) throws -> (String, OpenSSLTestCA) {
        let csrPath = work.path("\(key).csr")
        let csr = try CLI.run(
            ["csr"] + vaultArguments(bao.url, key: key) + ["--subject", "CN=Signer \(key)", "--out", csrPath],
            store: try TemporaryDirectory(),
            environment: ["VAULT_TOKEN": bao.token]
        )
        try #require(csr.succeeded, "\(csr.errorOutput)")
        let ca = try OpenSSLTestCA(in: work)
        return (try ca.issue(csrPath, as: "\(key).pem"), ca)
    }

    /// Signs a document with `arguments` and requires exit 1, no signature file, `reason` on stderr and
    /// neither token printed or stored.
    func expectRefused(
        _ name: String,
        url: URL,
        key: String,
        token: String,
        realToken: String,
        extra: [String: String],
        reason: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let store = try TemporaryDirectory()
        let work = try TemporaryDirectory()
        let document = try work.write("doc.txt", text: "документ\n")
        let out = work.path("doc.p7s")
        let result = try CLI.run(
            ["sign", document, "--out", out] + vaultArguments(url, key: key, extra: extra),
            store: store,
            environment: ["VAULT_TOKEN": token]
        )
        #expect(
            result.status == 1,
            "\(name): exit \(result.status): \(result.errorOutput)",
            sourceLocation: sourceLocation
        )
        #expect(
            !FileManager.default.fileExists(atPath: out),
            "\(name): a signature file was written",
            sourceLocation: sourceLocation
        )
        for part in reason {
            #expect(
                result.errorOutput.lowercased().contains(part.lowercased()),
                "\(name): '\(part)' not in: \(result.errorOutput)",
                sourceLocation: sourceLocation
            )
        }
        try expectNoSecret(realToken, in: result, store: store, sourceLocation: sourceLocation)
        try expectNoSecret(token, in: result, store: store, sourceLocation: sourceLocation)
    }

    @Test(
        "token, key, key type, certificate and closed port: exit 1, no file, a reason naming the fix",
        .enabled(if: CLI.isBuilt)
    )
    func refusals() async throws {
        try await withBao { bao in
            let work = try TemporaryDirectory()
            let (ecCertificate, _) = try certificate(for: "ec", bao, work)
            let certificate = ["certificate": ecCertificate]
            try expectRefused(
                "wrong token",
                url: bao.url,
                key: "ec",
                token: "wrong-token-\(UUID().uuidString)",
                realToken: bao.token,
                extra: certificate,
                reason: ["refused the token", "parameter 'token'", "hint: give a valid token"]
            )
            try expectRefused(
                "unknown key",
                url: bao.url,
                key: "nokey",
                token: bao.token,
                realToken: bao.token,
                extra: certificate,
                reason: ["no transit key 'nokey'"]
            )
            try expectRefused(
                "encryption-only key",
                url: bao.url,
                key: "aes",
                token: bao.token,
                realToken: bao.token,
                extra: certificate,
                reason: ["aes256-gcm96", "cannot sign"]
            )
            // The ec certificate given for the rsa key: both public-key fingerprints, as openssl computes them.
            let certificateKey = try opensslFingerprint(
                ["x509", "-in", ecCertificate, "-noout", "-pubkey"]
            )
            let rsaKey = try opensslFingerprint(nil, pem: try bao.publicKeyPEM("rsa"))
            try expectRefused(
                "mismatched certificate",
                url: bao.url,
                key: "rsa",
                token: bao.token,
                realToken: bao.token,
                extra: certificate,
                reason: ["does not certify", certificateKey, rsaKey]
            )
            let closed = try LoopbackListener().port  // closed once the listener is gone
            try expectRefused(
                "closed port",
                url: URL(string: "http://127.0.0.1:\(closed)")!,
                key: "ec",
                token: bao.token,
                realToken: bao.token,
                extra: certificate,
                reason: ["connection was refused", "127.0.0.1"]
            )
            try expectRefused(
                "clear-text http to another host",
                url: URL(string: "http://vault.example:8200")!,
                key: "ec",
                token: bao.token,
                realToken: bao.token,
                extra: certificate,
                reason: ["clear-text"]
            )
        }
    }

    @Test("a server that answers 500 to every sign: exit 1 after the retries, no file", .enabled(if: CLI.isBuilt))
    func serverError() async throws {
        try await withBao { bao in
            let work = try TemporaryDirectory()
            let (ecCertificate, _) = try certificate(for: "ec", bao, work)
            let proxy = try FaultProxy(upstream: bao.url, route: "/sign/", status: 500, count: -1)
            defer { proxy.stop() }
            try expectRefused(
                "HTTP 500",
                url: proxy.url,
                key: "ec",
                token: bao.token,
                realToken: bao.token,
                extra: ["certificate": ecCertificate],
                reason: ["HTTP 500", "try again later"]
            )
            #expect(try proxy.faults() == 5, "five attempts (the retry policy), then the error")
        }
    }

    @Test(
        "a server whose error repeats the request's headers: the error shows the text without the token",
        .enabled(if: CLI.isBuilt)
    )
    func reflectedToken() async throws {
        try await withBao { bao in
            let work = try TemporaryDirectory()
            let (ecCertificate, _) = try certificate(for: "ec", bao, work)
            let proxy = try FaultProxy(upstream: bao.url, route: "/sign/", status: 400, count: -1, reflects: true)
            defer { proxy.stop() }
            try expectRefused(
                "reflected headers",
                url: proxy.url,
                key: "ec",
                token: bao.token,
                realToken: bao.token,
                extra: ["certificate": ecCertificate],
                reason: ["HTTP 400", "you sent", "X-Vault-Token: [redacted]"]
            )
        }
    }

    @Test(
        "a server that answers 429 twice, then signs: retried with backoff, the signature verifies",
        .enabled(if: CLI.isBuilt)
    )
    func throttled() async throws {
        try await withBao { bao in
            let work = try TemporaryDirectory()
            let (ecCertificate, ca) = try certificate(for: "ec", bao, work)
            let proxy = try FaultProxy(upstream: bao.url, route: "/sign/", status: 429, count: 2)
            defer { proxy.stop() }
            let store = try TemporaryDirectory()
            let document = try work.write("doc.txt", text: "документ\n")
            let result = try CLI.run(
                ["sign", document, "--out", work.path("doc.p7s")]
                    + vaultArguments(proxy.url, key: "ec", extra: ["certificate": ecCertificate]),
                store: store,
                environment: ["VAULT_TOKEN": bao.token]
            )
            #expect(result.succeeded, "\(result.errorOutput)")
            #expect(try proxy.faults() == 2)
            let verified = try OpenSSLCMS.verify(
                signatureFile: work.path("doc.p7s"),
                contentFile: document,
                caFile: ca.certificatePath,
                cades: true
            )
            #expect(verified.succeeded, "\(verified.errorOutput)")
            try expectNoSecret(bao.token, in: result, store: store)
        }
    }
}

/// `openssl … -pubkey` (or `pem`) → `openssl pkey -pubin -outform DER` → `openssl dgst -sha256 -c`:
/// the colon-separated SHA-256 of the DER SubjectPublicKeyInfo.
func opensslFingerprint(_ pubkeyCommand: [String]?, pem: String? = nil) throws -> String {
    let text = try pubkeyCommand.map { try ExternalTool.run("openssl", $0).output } ?? pem ?? ""
    let der = try ExternalTool.run("openssl", ["pkey", "-pubin", "-outform", "DER"], input: Data(text.utf8))
    try #require(der.succeeded, "openssl pkey: \(der.errorOutput)")
    let digest = try ExternalTool.run("openssl", ["dgst", "-sha256", "-c"], input: der.standardOutput)
    return String(digest.output.split(separator: " ").last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
}
