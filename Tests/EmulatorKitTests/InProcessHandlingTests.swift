import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

/// `DSSEmulator.handle(method:path:headers:body:)`, the socket-free entry point the fuzz harness
/// (Tests/Fuzz) feeds: it must answer exactly as the server does over HTTP.
@Suite("DSSEmulator: in-process request handling")
struct InProcessHandlingTests {
    @Test("login, certificates and routing errors answer as over HTTP, without starting the server")
    func answersAsOverHTTP() throws {
        let emulator = try DSSEmulator(seed: sharedSeed)
        let token = try emulator.inProcessLogin(device: "in-process")

        let certificates = try #require(
            emulator.handle(
                method: "POST",
                path: "/api/v1/dss/Leonid_environment/Leonid_project/certificates/",
                headers: [
                    ("Content-Type", "application/json"), ("Authorization", "Bearer \(token)"),
                    ("X-Device-Id", "in-process"),
                ],
                body: Array(#"{"password": "Saprun123"}"#.utf8)
            )
        )
        #expect(certificates.status == 200)
        let list = try JSONValue(parsing: certificates.body)["certificates"]?.arrayValue
        #expect(list?.first?["id"]?.intValue == 12831)

        #expect(emulator.handle(method: "GET", path: "/nowhere", headers: [], body: [])?.status == 404)
        #expect(emulator.handle(method: "GET", path: "/api/v1/auth/jwt/obtain/", headers: [], body: [])?.status == 405)
        #expect(emulator.baseURL == nil)
    }

    @Test("a body over maxBodyBytes is refused with 413, as the server cuts and flags it")
    func oversizedBody() throws {
        let emulator = try DSSEmulator(configuration: .init(maxBodyBytes: 16), seed: sharedSeed)
        let response = emulator.handle(
            method: "POST",
            path: "/STS/oauth/token",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array(repeating: UInt8(ascii: "a"), count: 17)
        )
        #expect(response?.status == 413)
    }
}
