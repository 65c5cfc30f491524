import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// Packages outside this one, built with `swift build` as an app's would be, against the products
/// alone (Tests/Fixtures/OutsidePackages). Each keeps its own scratch path under `.build/`, so a
/// second run builds only what changed. One build at a time: the tests of one fixture share its scratch
/// path, and a test removing its build plan under another's running build broke that build.
@Suite(.serialized) struct OutsidePackageTests {
    /// Builds the fixture package `name` and returns the path of its executable `product`.
    static func build(_ name: String, product: String) throws -> String {
        let package = PackageRoot.url.appendingPathComponent("Tests/Fixtures/OutsidePackages/\(name)")
        let scratch = PackageRoot.url.appendingPathComponent(".build/outside-packages/\(name)")
        // SwiftPM plans a path dependency's sources once and reuses the plan while its manifests stand
        // unchanged, so a file added to this package since the last run would be missing from it:
        // without the plan it plans again, and still compiles only what changed.
        try? FileManager.default.removeItem(at: scratch.appendingPathComponent("debug.yaml"))
        let built = try ExternalTool.run(
            "swift",
            ["build", "--package-path", package.path, "--scratch-path", scratch.path, "--product", product]
        )
        try #require(built.succeeded, "swift build of \(name): \(built.errorOutput)\(built.output)")
        return scratch.appendingPathComponent("debug/\(product)").path
    }

    @Test("An app on Signing, PKCS12Provider and SignatureJournal signs into SQLite, and its binary needs no libpq")
    func sqliteAppLinksNoPostgres() throws {
        let binary = try Self.build("OutsideApp", product: "sqlite-signer")
        let needed = try ExternalTool.run("readelf", ["-d", binary]).requireSuccess().output
        #expect(needed.contains("libsqlite3.so"), "\(needed)")
        #expect(needed.contains("libcrypto.so"), "\(needed)")
        #expect(!needed.contains("libpq"), "the SQLite app links the PostgreSQL client: \(needed)")

        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory(prefix: "outside-sqlite")
        let document = try directory.write("Отчёт.txt", text: "Квартальный отчёт\n")
        let run = try ExternalTool.run(
            binary,
            [pki.pkcs12Path("signer-rsa"), document, directory.path("journal.sqlite"), pki.certificatePath("root")],
            environment: ["SIGNER_P12_PASSWORD": CertomancerPKI.pkcs12Password]
        )
        #expect(run.succeeded, "\(run.errorOutput)")
        #expect(run.output.contains("valid: true"), "\(run.output)")
        #expect(run.output.contains("records: 1"), "\(run.output)")
        let openssl = try OpenSSLCMS.verify(
            signatureFile: document + ".p7s",
            contentFile: document,
            caFile: pki.certificatePath("root"),
            cades: true,
            anyPurpose: true
        )
        #expect(openssl.succeeded, "\(openssl.errorOutput)")
    }

    @Test(
        "An app's tests use the testing products as the articles show: in-memory journal, gate, stored identity, B-LT"
    )
    func testingProductsWalkthrough() throws {
        let binary = try Self.build("OutsideApp", product: "testing-walkthrough")
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory(prefix: "outside-testing")
        let workingDirectory = directory.url.appendingPathComponent("cwd")
        try FileManager.default.createDirectory(at: workingDirectory, withIntermediateDirectories: true)
        let run = try ExternalTool.run(
            binary,
            [pki.pkcs12Path("signer-rsa"), pki.certificatePath("root"), directory.path("identities")],
            environment: ["SIGNER_P12_PASSWORD": CertomancerPKI.pkcs12Password],
            directory: workingDirectory
        )
        try Self.expectLines(
            run,
            [
                "memory-name in memory: true",
                "testing coordinator journal in memory: true",
                "testing coordinator records: 1",
                "gate held records: 0",
                "gate released records: 1",
                "gate cancelled: cancelled records: 0",
                "stored identity signer matches: true",
                "stored identity valid: true",
                "long-term asked: /tsa,/ocsp",
                "long-term level: B-LT",
                "long-term offline valid: true",
            ]
        )
        let left = try FileManager.default.contentsOfDirectory(atPath: workingDirectory.path)
        #expect(left.isEmpty, "the in-memory journals wrote to the working directory: \(left)")
    }

    @Test(
        "A remote provider written outside on RemoteProviderSupport, HTTPClient and JSON signs through the coordinator"
    )
    func remoteProviderFromOutside() throws {
        let binary = try Self.build("OutsideApp", product: "remote-provider")
        let run = try ExternalTool.run(binary, [])
        try Self.expectLines(
            run,
            [
                "remote signed valid: true",
                "remote records: 1",
                "members parameters: 12832",
                "members stored matches: true",
                "members after set: 12831",
                "members stored after set: forgotten",
                "wrong value: invalidServerSignature",
            ]
        )
    }

    /// Requires that the fixture's run succeeded and printed each of the `expected` lines.
    static func expectLines(_ run: ExternalTool.Result, _ expected: [String]) throws {
        try #require(run.succeeded, "\(run.errorOutput)\(run.output)")
        let lines = Set(run.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        for line in expected {
            #expect(lines.contains(line), "missing '\(line)' in:\n\(run.output)")
        }
    }
}
