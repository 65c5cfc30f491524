import CertificateProviders
import CryptoProDSSProvider
import EmulatorKit
import Foundation
import HTTPClient
import JSON

/// A logged-in CryptoPro DSS client on an emulator, shared by the bench rows and the profile loops.
struct CryptoProBenchSession: Sendable {
    let client: CryptoProDSSClient
    let transport: CurlTransport
    let bearer: String
    /// The `certificates` URL.
    let listingURL: String
    /// The `documents` URL.
    let signingURL: String
    /// The 4 KiB document the sign rows sign.
    static let document = Array(repeating: UInt8(ascii: "x"), count: 4096)

    /// Logs in on `base`.
    init(base: URL, transport: CurlTransport) async throws {
        client = CryptoProDSSClient(configuration: .init(baseURL: base), transport: transport)
        self.transport = transport
        let token = try await client.login(username: StandardSeed.username, password: Secret(StandardSeed.password))
        bearer = token.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        listingURL = base.absoluteString + "SignServer/rest/api/certificates"
        signingURL = base.absoluteString + "SignServer/rest/api/documents"
    }

    /// A detached CAdES-BES signature of ``document`` made by the server.
    @Sendable func sign() async throws {
        _ = try await client.sign(
            document: Self.document,
            certificateID: StandardSeed.certificateID,
            pin: Secret(StandardSeed.certificatePIN)
        )
    }

    /// The sign request's JSON body, as the client sends it (the emulator's published test PIN).
    var signBody: String {
        #"{"Content":"\#(Data(Self.document).base64EncodedString())","Signature":{"CertificateId":\#(StandardSeed.certificateID),"Parameters":{"CADESType":"BES","Hash":"False","IsDetached":"True"},"PinCode":"\#(StandardSeed.certificatePIN)","Type":"CAdES"}}"#
    }
}

extension CryptoProBenchSession: BearerBenchSession {
    static let name = "cryptopro"
    static let noteName = "CryptoPro"
    static let listing = (label: "CryptoPro certificates()", route: "certificates")
    static let signing = (label: "CryptoPro sign (detached CAdES-BES P-256, 4 KiB)", route: "documents")
    static let listingParsing = (
        what: "JSON + 2 Certificate parses", detail: " (the client caches parsed certificates)"
    )

    func list() async throws { _ = try await client.certificates() }

    /// The body's JSON and each certificate in it.
    func parseListing(_ body: [UInt8]) throws {
        for entry in try JSONValue(parsing: body).arrayValue ?? [] {
            _ = try Certificate(
                derEncoded: Array(Data(base64Encoded: entry["CertificateBase64"]?.stringValue ?? "") ?? Data())
            )
        }
    }

    func describe(_ emulator: BenchEmulator) -> String {
        "CryptoPro: emulator \(emulator.placement) on \(emulator.base.absoluteString); client = CryptoProDSSClient "
            + "over CurlTransport; certificates lists 2"
    }
}

/// `certsign-bench --profile cryptopro-sign|cryptopro-certificates [--tls] [--count N] [--in-flight N]`: N
/// CryptoPro round trips (``runRemoteProfileLoop(_:_:listingName:options:)``); `cryptopro-body` builds N
/// sign request bodies, no network.
/// - Returns: false when `name` is not one of these profiles.
func runCryptoProProfileLoop(_ name: String, options: BenchOptions) async throws -> Bool {
    if name == "cryptopro-body" {
        try profileRequestBodies(count: options.count)
        return true
    }
    return try await runRemoteProfileLoop(
        name,
        CryptoProBenchSession.self,
        listingName: "certificates",
        options: options
    )
}

/// `certsign-bench --profile SUITE-sign|SUITE-LISTING [--tls] [--count N] [--in-flight N]` (`cryptopro-sign`,
/// `csc-list`, …): N round trips of a remote session's sign or listing call against an emulator in its
/// own process (``BenchEmulator``), for perf to look at (`perf record -p` the client, or filter by pid:
/// the emulator is a child process); prints this process's CPU per round trip.
/// - Returns: false when `name` is not one of the session's profiles.
func runRemoteProfileLoop<Session: RemoteBenchSession>(
    _ name: String,
    _ session: Session.Type,
    listingName: String,
    options: BenchOptions
) async throws -> Bool {
    let signs = name == Session.name + "-sign"
    guard signs || name == Session.name + "-" + listingName else { return false }
    try await withProfileScratch { scratch in
        let emulator = try BenchEmulator(tls: options.tls, scratch: scratch, name: Session.name, options: options)
        defer { emulator.stop() }
        let session = try await Session(base: emulator.base, transport: emulator.transport)
        let operation: @Sendable () async throws -> Void
        if signs {
            operation = { try await session.sign() }
        } else {
            operation = { try await session.list() }
        }
        // This process only: the emulator is a child, and not waited for.
        try await runProfileRoundTrips(name, operation, transport: session.transport, options: options, clientCPU: true)
    }
    return true
}

/// N builds of the sign request's body (JSON with the base64 document and a PIN slot), no network.
private func profileRequestBodies(count: Int) throws {
    let pin = Secret(StandardSeed.certificatePIN)
    guard let url = URL(string: "http://127.0.0.1/SignServer/rest/api/documents") else { return }
    let before = processCPUSeconds()
    for _ in 0..<count {
        let slot = SecretSlot(pin)
        var request = HTTPRequest(method: .post, url: url)
        try request.setJSONBody(
            [
                "Content": .string(Data(CryptoProBenchSession.document).base64EncodedString()),
                "Signature": [
                    "Type": "CAdES", "Parameters": ["CADESType": "BES", "Hash": "False", "IsDetached": "True"],
                    "CertificateId": .integer(StandardSeed.certificateID), "PinCode": .string(slot.placeholder),
                ],
            ],
            secrets: [slot]
        )
    }
    let perBody = (processCPUSeconds() - before) / Double(count) * 1e6
    print("cryptopro-body: \(String(format: "%.2f", perBody)) µs CPU per body")
}

/// This process's user and system CPU time in seconds (`getrusage`).
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
