import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import Synchronization
import TestSupport
import Testing

/// Forwards to a real transport and keeps every request it was given (a decorator: the emulator
/// still answers).
private final class RecordingTransport: HTTPTransport {
    private let inner: any HTTPTransport
    private let log = Mutex<[HTTPRequest]>([])
    init(_ inner: any HTTPTransport) { self.inner = inner }
    var requests: [HTTPRequest] { log.withLock { $0 } }
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        log.withLock { $0.append(request) }
        return try await inner.send(request)
    }
}

private func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
    let bytes = Array(needle.utf8)
    guard bytes.count <= haystack.count else { return false }
    return (0...(haystack.count - bytes.count)).contains { haystack[$0..<($0 + bytes.count)].elementsEqual(bytes) }
}

private func bytes(of secret: Secret?) -> [UInt8] { secret?.withUnsafeBytes { Array($0) } ?? [] }

@Suite("Request bodies that carry secrets are held in a wiped Secret")
struct SecretBodyTests {
    @Test("JSON and form bodies: placeholders become the escaped secret; body stays empty; the wire form parses back")
    func encoding() throws {
        let awkward = Secret("pa\"ss\\wörd&=+ \n€")
        let slot = SecretSlot(awkward)
        var request = HTTPRequest(method: .post, url: try #require(URL(string: "https://dss.example/")))
        try request.setJSONBody(["user": "Leonid", "nested": ["PinCode": .string(slot.placeholder)]], secrets: [slot])
        #expect(request.body.isEmpty)
        #expect(request.header("Content-Type") == "application/json")
        let json = try JSONValue(parsing: bytes(of: request.secretBody))
        #expect(json["nested"]?["PinCode"]?.stringValue == "pa\"ss\\wörd&=+ \n€")
        #expect(json["user"]?.stringValue == "Leonid")
        #expect(!contains(bytes(of: request.secretBody), slot.placeholder))

        var form = HTTPRequest(method: .post, url: try #require(URL(string: "https://dss.example/")))
        form.setFormBody([("username", "Leonid"), ("password", slot.placeholder)], secrets: [slot])
        #expect(form.body.isEmpty)
        let text = String(decoding: bytes(of: form.secretBody), as: UTF8.self)
        #expect(text == HTTPRequest.formEncoded([("username", "Leonid"), ("password", "pa\"ss\\wörd&=+ \n€")]))
        // Setting a plain body afterwards drops the secret one.
        form.setFormBody([("a", "b")])
        #expect(form.secretBody == nil)
    }

    @Test(
        "FMP and CryptoPro clients send passwords and PINs only in secretBody, and the server gets them intact"
    )
    func clients() async throws {
        let emulator = try DSSEmulator(configuration: .init(requestLogKeepsSecrets: true), seed: sharedSeed)
        let base = try emulator.start()
        defer { emulator.stop() }
        let recorder = RecordingTransport(try makeTransport())
        let fmp = try await loggedInSeedClient(base, recorder, device: "secret-body")
        _ = try await fmp.certificates(dssPassword: Secret(StandardSeed.dssPassword))
        _ = try await signSeedSample(fmp)
        let cryptoPro = CryptoProDSSClient(configuration: .init(baseURL: base), transport: recorder)
        _ = try await cryptoPro.login(username: StandardSeed.username, password: Secret(StandardSeed.password))
        _ = try await cryptoPro.sign(
            document: Array("текст".utf8),
            certificateID: StandardSeed.certificateID,
            pin: Secret(StandardSeed.certificatePIN)
        )

        let secrets = [StandardSeed.password, StandardSeed.dssPassword, StandardSeed.certificatePIN]
        let carrying = recorder.requests.filter { $0.method == .post }
        #expect(carrying.count == 5)
        for request in carrying {
            #expect(request.secretBody != nil, "\(request.url.path) has no secret body")
            #expect(request.body.isEmpty, "\(request.url.path) put its body in a plain array")
            for secret in secrets where secret.count > 3 { #expect(!contains(request.body, secret)) }
        }
        // What reached the server: the secrets, exactly.
        let received = emulator.receivedRequests.filter { $0.method == "POST" }
        #expect(received.count == 5)
        #expect(received[0].text.contains("password=\(StandardSeed.password)"))
        #expect(received[1].json?["password"]?.stringValue == StandardSeed.dssPassword)
        #expect(received[2].json?["certificate_pin"]?.stringValue == StandardSeed.certificatePIN)
        #expect(received[3].text.contains("password=\(StandardSeed.password)"))
        #expect(received[4].json?["Signature"]?["PinCode"]?.stringValue == StandardSeed.certificatePIN)
    }

    @Test("secret placeholders are replaced wherever they stand, next to other 's' bytes and each other")
    func placeholders() throws {
        let first = SecretSlot(Secret("pa\"ss"))
        let second = SecretSlot(Secret("s€cret"))
        var request = HTTPRequest(method: .post, url: try #require(URL(string: "https://dss.example/")))
        try request.setJSONBody(
            [
                "s": .string(first.placeholder), "ss": .string("s" + second.placeholder + first.placeholder + "s"),
                "secret-slot-": "secret-slot-", "last": .string(second.placeholder),
            ],
            secrets: [first, second]
        )
        let body = try #require(request.secretBody).withUnsafeBytes { Array($0) }
        let json = try JSONValue(parsing: body)
        #expect(json["s"]?.stringValue == "pa\"ss")
        #expect(json["ss"]?.stringValue == "ss€cretpa\"sss")
        #expect(json["secret-slot-"]?.stringValue == "secret-slot-")
        #expect(json["last"]?.stringValue == "s€cret")
        #expect(json.objectValue?.count == 4)
    }

    @Test("a placeholder is 'secret-slot-' and 32 lower-case hex digits, fresh for every slot")
    func placeholderForm() {
        let placeholders = (0..<64).map { _ in SecretSlot(Secret("pin")).placeholder }
        for placeholder in placeholders {
            #expect(placeholder.hasPrefix("secret-slot-") && placeholder.utf8.count == 44, "\(placeholder)")
            #expect(placeholder.dropFirst(12).allSatisfy { "0123456789abcdef".contains($0) }, "\(placeholder)")
        }
        #expect(Set(placeholders).count == placeholders.count)
        // Every hex digit shows up somewhere (the digits are not stuck at one value).
        #expect(Set(placeholders.joined().dropFirst(12)).isSuperset(of: "0123456789abcdef"))
    }
}
