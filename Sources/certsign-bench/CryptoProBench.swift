import CertificateProviders
import CryptoProDSSProvider
import DSSEmulator
import Foundation
import RemoteSigning

/// CryptoPro DSS round trips against the in-process emulator, beside `wrk` on the same routes in the
/// same run: `certificates()` (GET, wrk -c1) and sign (detached CAdES-BES P-256, POST, wrk -c1 with a
/// Lua script carrying the same body the client sends).
func runCryptoProBenchmarks(_ harness: BenchHarness) async throws {
    let emulator = try DSSEmulator(configuration: .init(connectionLimit: 128, requestLogLimit: 0))
    let base = try emulator.start()
    defer { emulator.stop() }
    let client = CryptoProDSSClient(configuration: .init(baseURL: base))
    let token = try await client.login(username: StandardSeed.username, password: Secret(StandardSeed.password))
    let bearer = token.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    let pin = Secret(StandardSeed.certificatePIN)
    let document = Array(repeating: UInt8(ascii: "x"), count: 4096)

    let certificatesCount = 300
    let certificates = try await harness.time {
        for _ in 0..<certificatesCount { _ = try await client.certificates() }
    }.rate(count: Double(certificatesCount))
    // Where the time goes: the bare transport on the same route, and parsing its body.
    guard let certificatesRequestURL = URL(string: base.absoluteString + "SignServer/rest/api/certificates") else {
        throw BenchError("CryptoPro bench: bad base URL \(base)")
    }
    var bare = HTTPRequest(url: certificatesRequestURL)
    bare.setHeader("Authorization", "Bearer \(token.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })")
    let transport = URLSessionTransport()
    let bareRate = try await harness.time { for _ in 0..<certificatesCount { _ = try await transport.send(bare) } }.rate(count: Double(certificatesCount))
    let listBody = try await transport.send(bare).body
    let parseRate = try await harness.time {
        for _ in 0..<certificatesCount {
            for entry in try JSONValue(parsing: listBody).arrayValue ?? [] {
                _ = try Certificate(derEncoded: Array(Data(base64Encoded: entry["CertificateBase64"]?.stringValue ?? "") ?? Data()))
            }
        }
    }.rate(count: Double(certificatesCount))
    harness.note(String(format: "CryptoPro: bare URLSessionTransport GET certificates %.0f/s sequential; JSON + 2 Certificate parses of its %d-byte body %.0f/s",
                        bareRate.median, listBody.count, parseRate.median))
    let signCount = 60
    let signs = try await harness.time {
        for _ in 0..<signCount { _ = try await client.sign(document: document, certificateID: StandardSeed.certificateID, pin: pin) }
    }.rate(count: Double(signCount))

    let wrkAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk") || (try? harness.runCommand("which", ["wrk"]).status) == 0
    guard wrkAvailable else {
        harness.note("CryptoPro: wrk is not installed (apt-get install wrk); certificates() \(Int(certificates.median))/s, sign \(Int(signs.median))/s sequential")
        return
    }
    func wrk(url: String, script: String? = nil) throws -> Sample {
        var values: [Double] = []
        for _ in 0..<harness.repetitions {
            var arguments = ["-t1", "-c1", "-d2s", "-H", "Authorization: Bearer \(bearer)"]
            if let script { arguments += ["-s", script] }
            let result = try harness.runCommand("wrk", arguments + [url])
            guard let line = result.output.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
                  let rate = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces)) else {
                throw BenchError("wrk printed no Requests/sec: \(result.output) \(result.error)")
            }
            guard !result.output.contains("Non-2xx") else { throw BenchError("wrk got non-2xx answers from \(url): \(result.output)") }
            values.append(rate)
        }
        return Sample(values: values)
    }
    let certificatesURL = base.absoluteString + "SignServer/rest/api/certificates"
    let wrkCertificates = try wrk(url: certificatesURL)
    harness.record("CryptoPro certificates() round trips, sequential", ours: certificates, baseline: wrkCertificates,
                   baselineName: "wrk -t1 -c1 GET certificates", unit: .perSecond, higherIsBetter: true)

    let body = #"{"Content":"\#(Data(document).base64EncodedString())","Signature":{"CertificateId":\#(StandardSeed.certificateID),"Parameters":{"CADESType":"BES","Hash":"False","IsDetached":"True"},"PinCode":"\#(StandardSeed.certificatePIN)","Type":"CAdES"}}"#
    let script = harness.scratch.appendingPathComponent("cryptopro-sign.lua")
    let lua = "wrk.method = \"POST\"\nwrk.body = [[\(body)]]\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
    try Data(lua.utf8).write(to: script)
    let wrkSign = try wrk(url: base.absoluteString + "SignServer/rest/api/documents", script: script.path)
    harness.record("CryptoPro sign round trips (detached CAdES-BES P-256, 4 KiB), sequential", ours: signs, baseline: wrkSign,
                   baselineName: "wrk -t1 -c1 POST documents", unit: .perSecond, higherIsBetter: true)
    harness.note("CryptoPro: emulator in-process on \(base.absoluteString); client = CryptoProDSSClient over URLSessionTransport; certificates lists 2")
}
