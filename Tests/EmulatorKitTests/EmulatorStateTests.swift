import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

/// `DSSEmulator.Configuration.stateDirectory`: the CA, keys, users and stored signatures survive a
/// restart (a new emulator on the same directory); a damaged state file is an error and is kept.
@Suite("DSSEmulator: a state kept across restarts")
struct EmulatorStateTests {
    /// Sends one FMP request in-process as Leonid (logged in first).
    static func request(
        _ method: String,
        _ route: String,
        body: String = "",
        on emulator: DSSEmulator
    ) throws -> JSONValue {
        let token = try emulator.inProcessLogin(device: "state-test")
        let answer = try #require(
            emulator.handle(
                method: method,
                path: "/api/v1/dss/Leonid_environment/Leonid_project/\(route)/",
                headers: [
                    ("Content-Type", "application/json"), ("Authorization", "Bearer \(token)"),
                    ("X-Device-Id", "state-test"),
                ],
                body: Array(body.utf8)
            )
        )
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        return try JSONValue(parsing: answer.body)
    }

    /// Signs row `row` with certificate 12831 and returns the signature id.
    static func sign(row: Int, on emulator: DSSEmulator) throws -> Int {
        let body = """
            {"resource": "GetBudgetPlanning", "table": "ПланированиеБюджета", "params": {}, "column": "Номер",
             "hhive_id": \(row), "password": "Saprun123", "certificate_id": 12831, "certificate_pin": "123"}
            """
        return try #require(try request("POST", "sign", body: body, on: emulator)["signature_id"]?.intValue)
    }

    /// The permission bits of `path`.
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test("CA, users' keys and certificates and stored signatures survive a restart; files 0700/0600")
    func survivesRestart() throws {
        let directory = try TemporaryDirectory(prefix: "emulator-state")
        let stateDirectory = directory.path("state")
        let configuration = DSSEmulator.Configuration(requestLogLimit: 0, stateDirectory: stateDirectory)
        let first = try DSSEmulator(configuration: configuration, seed: sharedSeed)
        #expect(try Self.sign(row: 1, on: first) == 121)
        #expect(try Self.mode(stateDirectory) == 0o700)
        #expect(try Self.mode(stateDirectory + "/state.json") == 0o600)
        let signerBefore = try #require(first.seed.users.first?.certificates.first?.identity.certificate)

        let second = try DSSEmulator(configuration: configuration)
        #expect(second.certificateAuthorityPEM == first.certificateAuthorityPEM)
        #expect(second.seed.users.first?.certificates.first?.identity.certificate == signerBefore)
        #expect(second.storedSignatureIDs == [121])
        #expect(try Self.sign(row: 2, on: second) == 122, "ids count on from the kept state")
        let third = try DSSEmulator(configuration: configuration)
        #expect(third.storedSignatureIDs == [121, 122])
        // Both kept signatures, the one from before the restarts too, verify against the kept CA (openssl).
        let signs = try #require(try Self.request("GET", "signs", on: third)["signs"]?.arrayValue)
        #expect(signs.count == 2)
        let authority = try Certificate(pemEncoded: third.certificateAuthorityPEM)
        for entry in signs {
            let cms = try #require(entry["signature"]?.stringValue.flatMap { Data(base64Encoded: $0) })
            let verified = try OpenSSLCMS.verify(Array(cms), trust: [authority], cades: true)
            #expect(verified.succeeded, "\(entry["signature_id"]?.intValue ?? 0): \(verified.result.errorOutput)")
            #expect(verified.content == Array((entry["hhive_id"]?.intValue == 1 ? "БП-2026-001" : "БП-2026-002").utf8))
        }
    }

    @Test(
        "revocation URLs: the last port again; when busy, new certificates naming the new URL, the old ones still good"
    )
    func newURLGivesNewCertificates() throws {
        let directory = try TemporaryDirectory(prefix: "emulator-state")
        let configuration = DSSEmulator.Configuration(
            requestLogLimit: 0,
            stateDirectory: directory.path("state"),
            issuesRevocationURLs: true
        )
        let first = try DSSEmulator(configuration: configuration, seed: sharedSeed)
        let firstURL = try first.start()
        let before = try #require(first.seed.users.first?.certificates.first?.identity.certificate)
        first.stop()
        let again = try DSSEmulator(configuration: configuration)
        #expect(try again.start() == firstURL, "the last run's port, so the certificates stay valid")
        #expect(again.seed.users.first?.certificates.first?.identity.certificate == before, "nothing re-issued")
        again.stop()
        // Another server on that port: the next run binds another one, so its URL changes.
        let squatter = try DSSEmulator(configuration: .init(port: UInt16(firstURL.port ?? 0)), seed: sharedSeed)
        try squatter.start()
        defer { squatter.stop() }
        let moved = try DSSEmulator(configuration: configuration)
        let movedURL = try moved.start()
        defer { moved.stop() }
        #expect(movedURL != firstURL)
        let after = try #require(moved.seed.users.first?.certificates.first?.identity.certificate)
        #expect(after != before && after.publicKeyDERRepresentation == before.publicKeyDERRepresentation)
        let ca = try directory.write("ca.pem", text: moved.certificateAuthorityPEM)
        for (certificate, url) in [(before, firstURL), (after, movedURL)] {
            let file = try directory.write("\(certificate.serialNumber).pem", text: certificate.pemRepresentation)
            let named = try ExternalTool.run("openssl", ["x509", "-in", file, "-noout", "-ocsp_uri"])
            #expect(named.output.trimmingCharacters(in: .whitespacesAndNewlines) == url.absoluteString + "ocsp")
            let ocsp = try ExternalTool.run(
                "openssl",
                ["ocsp", "-issuer", ca, "-cert", file, "-url", movedURL.absoluteString + "ocsp", "-CAfile", ca]
            )
            #expect(ocsp.output.contains(": good"), "\(ocsp.output)\(ocsp.errorOutput)")
        }
    }

    @Test("a damaged state file is a .storeCorrupted error naming it, and is left as it is")
    func damagedState() throws {
        let directory = try TemporaryDirectory(prefix: "emulator-state")
        let stateDirectory = directory.path("state")
        _ = try DSSEmulator(configuration: .init(stateDirectory: stateDirectory), seed: sharedSeed)
        let path = stateDirectory + "/state.json"
        var bytes = try #require(FileManager.default.contents(atPath: path))
        bytes = bytes.prefix(bytes.count / 2)
        try bytes.write(to: URL(fileURLWithPath: path))
        do {
            _ = try DSSEmulator(configuration: .init(stateDirectory: stateDirectory))
            Issue.record("a damaged state was accepted")
        } catch let error as CertificateProviderError {
            #expect(error.code == .storeCorrupted)
            #expect(error.reason.contains(path), "\(error.reason)")
        }
        #expect(FileManager.default.contents(atPath: path) == bytes, "never replaced")
    }
}
