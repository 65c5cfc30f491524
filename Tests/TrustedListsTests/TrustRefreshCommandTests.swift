import Foundation
import TestSupport
import Testing

/// `certsign trust refresh` against a real local HTTP server (tl_server.py), and the cache it fills
/// used offline by `verify --trust eu` and `trust show --cache`.
@Suite(.enabled(if: CLI.isBuilt)) struct TrustRefreshCommandTests {
    static let listFiles = ["lotl.xml", "BE.xml", "LU.xml"]

    static func refresh(
        _ server: TrustedListServer,
        cache: String,
        signer: String? = "lotl-signer"
    ) throws
        -> ExternalTool.Result
    {
        try CLI.run(
            ["--json", "trust", "refresh", "--lotl", server.lotlURL, "--cache", cache]
                + (signer.map { ["--lotl-signer", TrustedListFixtures.certificatePath($0)] } ?? [])
        )
    }

    /// `territory: state` of each list of a `--json` refresh.
    static func states(_ result: ExternalTool.Result) throws -> [String: String] {
        let document = try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: Any])
        let lists = try #require(document["lists"] as? [[String: Any]])
        return Dictionary(
            uniqueKeysWithValues: lists.map { ($0["territory"] as? String ?? "", $0["state"] as? String ?? "") }
        )
    }

    /// Every file of the cache with its bytes.
    static func snapshot(_ cache: String) -> [String: Data] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []
        return Dictionary(
            uniqueKeysWithValues: names.map { ($0, FileManager.default.contents(atPath: "\(cache)/\($0)") ?? Data()) }
        )
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func refreshFillsTheCacheAsksOnlyForChangesAndKeepsTheVerifiedCopy() throws {
        let server = try TrustedListServer()
        let directory = try TemporaryDirectory(prefix: "tl-cache")
        let cache = directory.path("cache")
        let first = try Self.refresh(server, cache: cache)
        #expect(first.status == 0, "\(first.output)\(first.errorOutput)")
        #expect(try Self.states(first) == ["EU": "fetched", "BE": "fetched", "LU": "fetched"])
        let firstRequests = try server.takeRequests()
        #expect(firstRequests.map(\.path) == ["/EU/lotl.xml", "/BE/tl-qc.xml", "/LU/tl-qtst.xml"])
        #expect(firstRequests.allSatisfy { $0.status == 200 && $0.ifNoneMatch == nil && $0.ifModifiedSince == nil })
        #expect(try Self.mode(cache) == 0o700)
        for name in Self.listFiles + ["lotl.source.json", "BE.source.json", "LU.source.json", "lotl-signers.pem"] {
            #expect(try Self.mode("\(cache)/\(name)") == 0o600, "\(name)")
        }
        let source = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(cache)/BE.source.json")))
                as? [String: Any]
        )
        #expect(
            source["url"] as? String == server.lotlURL.replacingOccurrences(of: "EU/lotl.xml", with: "BE/tl-qc.xml")
        )
        #expect((source["etag"] as? String)?.hasPrefix("\"") == true)
        #expect(source["lastModified"] != nil)

        // Second run, without --lotl-signer (the cache stored it): every list is asked for conditionally.
        let second = try Self.refresh(server, cache: cache, signer: nil)
        #expect(second.status == 0, "\(second.output)\(second.errorOutput)")
        #expect(try Self.states(second) == ["EU": "notModified", "BE": "notModified", "LU": "notModified"])
        let secondRequests = try server.takeRequests()
        #expect(secondRequests.count == 3)
        #expect(secondRequests.allSatisfy { $0.status == 304 && $0.ifNoneMatch != nil && $0.ifModifiedSince != nil })

        // Third run: the server publishes a tampered BE list; it is refused and the verified copy stays.
        let verified = Self.snapshot(cache)
        try server.serveAsBE("tl-qc-tampered.xml")
        let third = try CLI.run(["trust", "refresh", "--lotl", server.lotlURL, "--cache", cache])
        #expect(third.status == 1)
        #expect(third.output.contains("BE BE.xml: kept"), "\(third.output)")
        #expect(third.output.contains("signature does not hold"))
        #expect(third.output.contains("the verified copy stays"))
        #expect(third.output.contains("LU LU.xml: not modified"))
        #expect(Self.snapshot(cache) == verified)
        #expect(try server.takeRequests().first { $0.path == "/BE/tl-qc.xml" }?.status == 200)

        // A LOTL checked with another signer's certificate: refused, the cache left as it was.
        let wrongSigner = try Self.refresh(server, cache: cache, signer: "other-signer")
        #expect(wrongSigner.status == 1)
        #expect(wrongSigner.output.contains("\"code\" : \"wrongSigner\""), "\(wrongSigner.output)")
        #expect(wrongSigner.output.contains("the list of the lists from \(server.lotlURL) is refused"))
        #expect(Self.snapshot(cache) == verified)
        // A URL the server does not have.
        let missing = try CLI.run([
            "trust", "refresh", "--lotl", server.lotlURL + ".missing", "--cache", cache,
        ])
        #expect(missing.status == 1)
        #expect(missing.errorOutput.contains("the server answered HTTP 404"), "\(missing.errorOutput)")
        #expect(Self.snapshot(cache) == verified)
    }

    @Test func unreachableServerAndBadURLsLeaveNoCache() throws {
        let directory = try TemporaryDirectory(prefix: "tl-cache-errors")
        let cache = directory.path("cache")
        let signer = ["--lotl-signer", TrustedListFixtures.certificatePath("lotl-signer"), "--cache", cache]
        // Port 1 on loopback: nothing listens there.
        let unreachable = try CLI.run(["trust", "refresh", "--lotl", "http://127.0.0.1:1/lotl.xml"] + signer)
        #expect(unreachable.status == 1)
        #expect(
            unreachable.errorOutput.contains(
                "the list of the lists cannot be downloaded from http://127.0.0.1:1/lotl.xml"
            ),
            "\(unreachable.errorOutput)"
        )
        let clearText = try CLI.run(["trust", "refresh", "--lotl", "http://tl.example/lotl.xml"] + signer)
        #expect(clearText.status == 1)
        #expect(clearText.errorOutput.contains("refusing clear-text http://"), "\(clearText.errorOutput)")
        #expect(clearText.errorOutput.contains("--allow-insecure-http"))
        let malformed = try CLI.run(["trust", "refresh", "--lotl", "tl.example/lotl.xml"] + signer)
        #expect(malformed.status == 64)
        #expect(malformed.errorOutput.contains("--lotl 'tl.example/lotl.xml' is not an http:// or https:// URL"))
        let noSigner = try CLI.run(["trust", "refresh", "--lotl", "http://127.0.0.1:1/lotl.xml", "--cache", cache])
        #expect(noSigner.status == 1)
        #expect(noSigner.errorOutput.contains("no signing certificate of the list of the lists was given"))
        #expect(!FileManager.default.fileExists(atPath: cache))
    }

    @Test func verifyWithTheEUTrustUsesTheCacheOffline() throws {
        let directory = try TemporaryDirectory(prefix: "tl-cache-verify")
        let environment = ["XDG_CACHE_HOME": directory.path("xdg")]
        let server = try TrustedListServer()
        let refreshed = try CLI.run(
            [
                "trust", "refresh", "--lotl", server.lotlURL, "--lotl-signer",
                TrustedListFixtures.certificatePath("lotl-signer"),
            ],
            environment: environment
        )
        #expect(refreshed.status == 0, "\(refreshed.output)\(refreshed.errorOutput)")
        server.stop()
        let cache = directory.path("xdg/certsign/trusted-lists")
        #expect(FileManager.default.fileExists(atPath: "\(cache)/BE.xml"))

        let document = try directory.write("document.txt", text: "signed under the EU trusted lists\n")
        let signature = try TrustedListFixtures.sign(document, by: "qc-signer")
        let fromFiles = try CLI.run(["verify", signature, "--content", document] + TrustedListFixtures.listArguments)
        let expected = "qualification: QESig — qualified certificate under \"TL Test Qualified CA\", key on a QSCD"
        #expect(fromFiles.output.contains(expected))
        for extra in [["--cache", cache], []] {
            let result = try CLI.run(
                ["verify", signature, "--content", document, "--trust", "eu"] + extra,
                environment: environment
            )
            #expect(result.status == 0, "\(result.output)\(result.errorOutput)")
            #expect(result.output.contains(expected), "\(result.output)")
        }
        let shown = try CLI.run(["trust", "show", "--cache", cache])
        #expect(shown.status == 0, "\(shown.errorOutput)")
        #expect(shown.output.contains("GRANTED CA/QC: TL Test Qualified CA"))
        #expect(shown.output.contains("BE.xml: trusted list BE"))

        let empty = directory.path("empty")
        let missing = try CLI.run(["verify", signature, "--content", document, "--trust", "eu", "--cache", empty])
        #expect(missing.status == 1)
        #expect(missing.errorOutput.contains("holds no verified list of the lists"), "\(missing.errorOutput)")
        #expect(missing.errorOutput.contains("run `certsign trust refresh --lotl URL --cache \(empty)`"))
        let cacheAlone = try CLI.run(["verify", signature, "--cache", cache])
        #expect(cacheAlone.status == 64)
        #expect(cacheAlone.errorOutput.contains("--cache DIR is where --trust eu reads the trusted lists"))
    }
}
