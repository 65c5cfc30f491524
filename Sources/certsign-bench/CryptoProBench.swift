import CertificateProviders
import CryptoProDSSProvider
import EmulatorKit
import Foundation
import JSON
import RemoteSigning

/// CryptoPro DSS round trips against the emulator (``BenchEmulator``), beside `wrk` on the same routes in the
/// same run, over HTTP and then HTTPS: `certificates()` (GET, wrk -c1, and 8 in flight beside wrk -c8)
/// and sign (detached CAdES-BES P-256, POST, wrk -c1 with a Lua script carrying the same body the
/// client sends).
func runCryptoProBenchmarks(_ harness: BenchHarness) async throws {
    for tls in [false, true] { try await runCryptoProBenchmarks(harness, tls: tls) }
}

private func runCryptoProBenchmarks(_ harness: BenchHarness, tls: Bool) async throws {
    let scheme = tls ? "HTTPS" : "HTTP"
    let emulator = try BenchEmulator(tls: tls, scratch: harness.scratch, name: "cryptopro")
    defer { emulator.stop() }
    let (base, transport) = (emulator.base, emulator.transport)
    let client = CryptoProDSSClient(configuration: .init(baseURL: base), transport: transport)
    let token = try await client.login(username: StandardSeed.username, password: Secret(StandardSeed.password))
    let bearer = token.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    let pin = Secret(StandardSeed.certificatePIN)
    let document = Array(repeating: UInt8(ascii: "x"), count: 4096)

    // Where the time goes: the bare transport on the same route, and parsing its body.
    let certificatesCount = 300
    guard let certificatesRequestURL = URL(string: base.absoluteString + "SignServer/rest/api/certificates") else {
        throw BenchError("CryptoPro bench: bad base URL \(base)")
    }
    var bare = HTTPRequest(url: certificatesRequestURL)
    bare.setHeader("Authorization", "Bearer \(bearer)")
    let bareRate = try await harness.time { for _ in 0..<certificatesCount { _ = try await transport.send(bare) } }
        .rate(count: Double(certificatesCount))
    let listBody = try await transport.send(bare).body
    let parseRate = try await harness.time {
        for _ in 0..<certificatesCount {
            for entry in try JSONValue(parsing: listBody).arrayValue ?? [] {
                _ = try Certificate(
                    derEncoded: Array(Data(base64Encoded: entry["CertificateBase64"]?.stringValue ?? "") ?? Data())
                )
            }
        }
    }.rate(count: Double(certificatesCount))
    harness.note(
        String(
            format:
                "CryptoPro %@: bare CurlTransport GET certificates %.0f/s sequential; JSON + 2 Certificate parses of "
                + "its %d-byte body %.0f/s (the client caches parsed certificates)",
            scheme,
            bareRate.median,
            listBody.count,
            parseRate.median
        )
    )

    guard wrkIsAvailable(harness) else {
        harness.note("CryptoPro \(scheme): wrk is not installed (apt-get install wrk); no client rows")
        return
    }
    let headers = ["Authorization: Bearer \(bearer)"]
    let certificatesURL = certificatesRequestURL.absoluteString
    let certificatesCall: @Sendable () async throws -> Void = { _ = try await client.certificates() }
    let executor = benchExecutor(transport)
    let sequential = try await interleaved(harness, count: certificatesCount, executor: executor, certificatesCall) {
        try wrkOnce(harness, connections: 1, url: certificatesURL, headers: headers)
    }
    let parallel = try await interleaved(harness, count: 800, inFlight: 8, executor: executor, certificatesCall) {
        try wrkOnce(harness, connections: 8, url: certificatesURL, headers: headers)
    }
    harness.record(
        "CryptoPro certificates() round trips, sequential, \(scheme)",
        ours: sequential.ours,
        baseline: sequential.wrk,
        baselineName: "wrk -t1 -c1 GET certificates \(scheme)",
        unit: .perSecond,
        goal: remoteRoundTripGoal,
        higherIsBetter: true,
        pairedRatio: sequential.pairedRatio
    )
    harness.record(
        "CryptoPro certificates() round trips, 8 in flight, \(scheme)",
        ours: parallel.ours,
        baseline: parallel.wrk,
        baselineName: "wrk -t1 -c8 GET certificates \(scheme)",
        unit: .perSecond,
        goal: remoteRoundTripGoal,
        higherIsBetter: true,
        pairedRatio: parallel.pairedRatio
    )

    try await recordOptInRow(
        harness,
        transport,
        name: "CryptoPro certificates() round trips, sequential, \(scheme), caller on the transport's taskExecutor "
            + "(opt-in)",
        baselineName: "wrk -t1 -c1 GET certificates \(scheme)",
        certificatesCall
    ) { try wrkOnce(harness, connections: 1, url: certificatesURL, headers: headers) }

    if let libcurl = LibcurlLoop.build(harness) {
        try libcurl.recordRows(
            harness,
            route: "certificates",
            url: certificatesURL,
            headers: headers,
            caFile: emulator.caFile,
            scheme: scheme
        )
    }

    let body =
        #"{"Content":"\#(Data(document).base64EncodedString())","Signature":{"CertificateId":\#(StandardSeed.certificateID),"Parameters":{"CADESType":"BES","Hash":"False","IsDetached":"True"},"PinCode":"\#(StandardSeed.certificatePIN)","Type":"CAdES"}}"#
    let script = harness.scratch.appendingPathComponent("cryptopro-sign.lua")
    let lua = "wrk.method = \"POST\"\nwrk.body = [[\(body)]]\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
    try Data(lua.utf8).write(to: script)
    let signs = try await interleaved(
        harness,
        count: 100,
        executor: executor,
        {
            _ = try await client.sign(document: document, certificateID: StandardSeed.certificateID, pin: pin)
        },
        wrk: {
            try wrkOnce(
                harness,
                connections: 1,
                url: base.absoluteString + "SignServer/rest/api/documents",
                headers: headers,
                script: script.path
            )
        }
    )
    harness.record(
        "CryptoPro sign round trips (detached CAdES-BES P-256, 4 KiB), sequential, \(scheme)",
        ours: signs.ours,
        baseline: signs.wrk,
        baselineName: "wrk -t1 -c1 POST documents \(scheme)",
        unit: .perSecond,
        goal: remoteRoundTripGoal,
        higherIsBetter: true,
        pairedRatio: signs.pairedRatio
    )
    harness.note(
        "CryptoPro \(scheme): emulator \(emulator.placement) on \(base.absoluteString); client = CryptoProDSSClient over "
            + "CurlTransport; certificates lists 2; " + benchExecutorNote(transport)
    )
}

/// `CERTSIGN_BENCH_PROFILE=cryptopro-sign|cryptopro-certificates [CERTSIGN_BENCH_PROFILE_TLS=1]
/// [CERTSIGN_BENCH_PROFILE_COUNT=N] certsign-bench`: N sequential CryptoPro round trips (the bench's
/// detached CAdES-BES sign of 4 KiB, or `certificates()`) against an emulator in its own process
/// (``BenchEmulator``), for perf to look at (`perf record -p` the client, or filter by pid: the
/// emulator is a child process).
/// - Returns: false when `name` is not one of these profiles.
func runCryptoProProfileLoop(_ name: String, count: Int) async throws -> Bool {
    guard ["cryptopro-sign", "cryptopro-certificates", "cryptopro-body"].contains(name) else { return false }
    if name == "cryptopro-body" {
        // No network: N builds of the sign request's body (JSON with the base64 document and a PIN slot).
        let document = Array(repeating: UInt8(ascii: "x"), count: 4096)
        let pin = Secret(StandardSeed.certificatePIN)
        guard let url = URL(string: "http://127.0.0.1/SignServer/rest/api/documents") else { return true }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let before = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        for _ in 0..<count {
            let slot = SecretSlot(pin)
            var request = HTTPRequest(method: .post, url: url)
            try request.setJSONBody(
                [
                    "Content": .string(Data(document).base64EncodedString()),
                    "Signature": [
                        "Type": "CAdES", "Parameters": ["CADESType": "BES", "Hash": "False", "IsDetached": "True"],
                        "CertificateId": .integer(StandardSeed.certificateID), "PinCode": .string(slot.placeholder),
                    ],
                ],
                secrets: [slot]
            )
        }
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let after = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        print("cryptopro-body: \(String(format: "%.2f", (after - before) / Double(count) * 1e6)) µs user CPU per body")
        return true
    }
    let tls = ProcessInfo.processInfo.environment["CERTSIGN_BENCH_PROFILE_TLS"] == "1"
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("certsign-profile-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let emulator = try BenchEmulator(tls: tls, scratch: scratch, name: "cryptopro")
    defer { emulator.stop() }
    let client = CryptoProDSSClient(configuration: .init(baseURL: emulator.base), transport: emulator.transport)
    _ = try await client.login(username: StandardSeed.username, password: Secret(StandardSeed.password))
    let pin = Secret(StandardSeed.certificatePIN)
    let document = Array(repeating: UInt8(ascii: "x"), count: 4096)
    func cpuSeconds() -> Double {  // this process only: the emulator is a child, and not waited for
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
    let cpuStart = cpuSeconds()
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<count {
        if name == "cryptopro-sign" {
            _ = try await client.sign(document: document, certificateID: StandardSeed.certificateID, pin: pin)
        } else {
            _ = try await client.certificates()
        }
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let cpu = (cpuSeconds() - cpuStart) / Double(count) * 1e6
    print(
        "\(name) \(tls ? "HTTPS" : "HTTP"): \(count) round trips, \(String(format: "%.0f", Double(count) / seconds))/s, "
            + "client CPU \(String(format: "%.1f", cpu)) µs per round trip"
    )
    return true
}
