import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// Key versions and namespaces against a real OpenBao: a rotated key keeps signing with the version
/// its certificate certifies only when asked to, and a key in a namespace is reached through
/// `X-Vault-Namespace`.
@Suite("vault-transit: keyVersion after a rotation, a key in a namespace")
struct VaultTransitKeyVersionTests {
    @Test(
        "after 'bao write transit/keys/ec/rotate' the latest version is refused for the v1 certificate; keyVersion=1 signs",
        .enabled(if: CLI.isBuilt)
    )
    func rotation() async throws {
        try await withBao { bao in
            let store = try TemporaryDirectory()
            let work = try TemporaryDirectory()
            let environment = ["VAULT_TOKEN": bao.token]
            let csr = try CLI.run(
                ["csr"] + vaultArguments(bao.url, key: "ec") + [
                    "--subject", "CN=Version One", "--out", work.path("v1.csr"),
                ],
                store: store,
                environment: environment
            )
            try #require(csr.succeeded, "\(csr.errorOutput)")
            let ca = try OpenSSLTestCA(in: work)
            let certificate = try ca.issue(work.path("v1.csr"), as: "v1.pem")
            try bao.bao(["write", "-f", "transit/keys/ec/rotate"])
            let document = try work.write("doc.txt", text: "после ротации\n")
            let latest = try CLI.run(
                ["sign", document, "--out", work.path("latest.p7s")]
                    + vaultArguments(bao.url, key: "ec", extra: ["certificate": certificate]),
                store: store,
                environment: environment
            )
            #expect(latest.status == 1 && latest.errorOutput.contains("version 2"), "\(latest.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: work.path("latest.p7s")))
            let pinned = try CLI.run(
                ["sign", document, "--out", work.path("v1.p7s")]
                    + vaultArguments(bao.url, key: "ec", extra: ["certificate": certificate, "keyVersion": "1"]),
                store: store,
                environment: environment
            )
            #expect(pinned.succeeded, "\(pinned.errorOutput)")
            let verified = try OpenSSLCMS.verify(
                signatureFile: work.path("v1.p7s"),
                contentFile: document,
                caFile: ca.certificatePath,
                cades: true
            )
            #expect(verified.succeeded, "\(verified.errorOutput)")
            let missing = try CLI.run(
                ["sign", document, "--out", work.path("v7.p7s")]
                    + vaultArguments(bao.url, key: "ec", extra: ["certificate": certificate, "keyVersion": "7"]),
                store: store,
                environment: environment
            )
            #expect(missing.status == 1 && missing.errorOutput.contains("versions: 1, 2"), "\(missing.errorOutput)")
        }
    }

    @Test(
        "a key in namespace 'team' signs with --param namespace=team and is unknown without it",
        .enabled(if: CLI.isBuilt)
    )
    func namespace() async throws {
        try await withBao { bao in
            try bao.bao(["namespace", "create", "team"])
            try bao.bao(["secrets", "enable", "-namespace=team", "transit"])
            try bao.bao(["write", "-namespace=team", "-f", "transit/keys/team-key", "type=rsa-2048"])
            let store = try TemporaryDirectory()
            let work = try TemporaryDirectory()
            let environment = ["VAULT_TOKEN": bao.token]
            let inNamespace = try CLI.run(
                ["csr"] + vaultArguments(bao.url, key: "team-key", extra: ["namespace": "team"])
                    + ["--subject", "CN=Team", "--out", work.path("team.csr")],
                store: store,
                environment: environment
            )
            #expect(inNamespace.succeeded, "\(inNamespace.errorOutput)")
            let verified = try ExternalTool.run("openssl", ["req", "-in", work.path("team.csr"), "-verify", "-noout"])
            #expect(verified.succeeded, "\(verified.errorOutput)")
            let outside = try CLI.run(
                ["csr"] + vaultArguments(bao.url, key: "team-key") + [
                    "--subject", "CN=Team", "--out", work.path("x.csr"),
                ],
                store: store,
                environment: environment
            )
            #expect(
                outside.status == 1 && outside.errorOutput.contains("no transit key 'team-key'"),
                "\(outside.errorOutput)"
            )
            #expect(!FileManager.default.fileExists(atPath: work.path("x.csr")))
        }
    }
}
