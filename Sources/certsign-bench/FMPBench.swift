import CertificateProviders
import DSSEmulator
import FMPDSSProvider
import Foundation
import RemoteSigning

/// FMP DSS round trips against the in-process emulator, beside `wrk` on the same routes in the same
/// run: `signs()` sequential (wrk -c1) and 8 in flight (wrk -c8), and sign (wrk -c1 with a POST script).
func runFMPBenchmarks(_ harness: BenchHarness) async throws {
    let emulator = try DSSEmulator(configuration: .init(connectionLimit: 128, requestLogLimit: 0))
    let base = try emulator.start()
    defer { emulator.stop() }
    let client = FMPClient(configuration: .init(host: base, environment: StandardSeed.environment, project: StandardSeed.project,
                                                device: "bench-device"))
    _ = try await client.auth(username: StandardSeed.username, password: Secret(StandardSeed.password))
    guard let token = await client.exportSession()?.token else { throw BenchError("FMP bench: no token after login") }
    let dssPassword = Secret(StandardSeed.dssPassword), pin = Secret(StandardSeed.certificatePIN)
    func sign() async throws {
        _ = try await client.sign(resource: StandardSeed.resource, table: StandardSeed.table, column: StandardSeed.column,
                                  hhiveID: StandardSeed.row, dssPassword: dssPassword, certificateID: StandardSeed.certificateID,
                                  certificatePIN: pin)
    }
    // A short history, so signs() carries a realistic body (3 signatures, ~5 KB of JSON).
    for _ in 0..<3 { try await sign() }

    let signsURL = base.absoluteString + "api/v1/dss/\(StandardSeed.environment)/\(StandardSeed.project)/signs/"
    let headers = ["-H", "Authorization: Bearer \(token)", "-H", "X-Device-Id: bench-device"]
    let wrkAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk") || (try? harness.runCommand("which", ["wrk"]).status) == 0

    func wrk(connections: Int, url: String, script: String? = nil) throws -> Sample {
        var values: [Double] = []
        for _ in 0..<harness.repetitions {
            var arguments = ["-t1", "-c\(connections)", "-d2s"] + headers
            if let script { arguments += ["-s", script] }
            let result = try harness.runCommand("wrk", arguments + [url])
            guard let line = result.output.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
                  let rate = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces)) else {
                throw BenchError("wrk printed no Requests/sec: \(result.output) \(result.error)")
            }
            let non2xx = result.output.contains("Non-2xx")
            guard !non2xx else { throw BenchError("wrk got non-2xx answers from \(url): \(result.output)") }
            values.append(rate)
        }
        return Sample(values: values)
    }

    // signs(): sequential.
    let sequentialCount = 300
    let sequential = try await harness.time {
        for _ in 0..<sequentialCount { _ = try await client.signs() }
    }.rate(count: Double(sequentialCount))

    // Where the time goes: the bare transport on the same route, and JSON parsing of the body.
    guard let signsRequestURL = URL(string: signsURL) else { throw BenchError("FMP bench: bad URL \(signsURL)") }
    var bare = HTTPRequest(url: signsRequestURL)
    bare.setHeader("Authorization", "Bearer \(token)")
    bare.setHeader("X-Device-Id", "bench-device")
    let transport = URLSessionTransport()
    let bareRate = try await harness.time { for _ in 0..<sequentialCount { _ = try await transport.send(bare) } }.rate(count: Double(sequentialCount))
    let bodyBytes = try await transport.send(bare).body
    let parseRate = try await harness.time { for _ in 0..<sequentialCount { _ = try JSONValue(parsing: bodyBytes) } }.rate(count: Double(sequentialCount))
    harness.note(String(format: "FMP: bare URLSessionTransport GET signs/ %.0f/s sequential; JSONValue parse of its %d-byte body %.0f/s", bareRate.median, bodyBytes.count, parseRate.median))

    // signs(): 8 in flight on one client.
    let parallelCount = 800
    let parallel = try await harness.time {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<(parallelCount / 8) { _ = try await client.signs() } }
            }
            try await group.waitForAll()
        }
    }.rate(count: Double(parallelCount))

    guard wrkAvailable else {
        harness.note("FMP: wrk is not installed (apt-get install wrk); FMPClient signs(): \(Int(sequential.median))/s sequential, \(Int(parallel.median))/s 8 in flight")
        return
    }
    // Measured before any sign benchmark adds signatures, so both sides list the same 3.
    let wrkSequential = try wrk(connections: 1, url: signsURL)
    let wrkParallel = try wrk(connections: 8, url: signsURL)

    // sign: sequential (each adds one signature; nothing lists them afterwards).
    let signCount = 60
    let signs = try await harness.time {
        for _ in 0..<signCount { try await sign() }
    }.rate(count: Double(signCount))
    harness.record("FMP signs() round trips, sequential", ours: sequential, baseline: wrkSequential,
                   baselineName: "wrk -t1 -c1 GET signs/", unit: .perSecond, higherIsBetter: true)
    harness.record("FMP signs() round trips, 8 in flight", ours: parallel, baseline: wrkParallel,
                   baselineName: "wrk -t1 -c8 GET signs/", unit: .perSecond, higherIsBetter: true)

    let body = #"{"resource":"GetBudgetPlanning","table":"ПланированиеБюджета","params":{},"column":"Номер","hhive_id":1,"password":"Saprun123","certificate_id":12831,"certificate_pin":"123"}"#
    let script = harness.scratch.appendingPathComponent("fmp-sign.lua")
    let lua = "wrk.method = \"POST\"\nwrk.body = [[\(body)]]\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
    try Data(lua.utf8).write(to: script)
    let signURL = base.absoluteString + "api/v1/dss/\(StandardSeed.environment)/\(StandardSeed.project)/sign/"
    let wrkSign = try wrk(connections: 1, url: signURL, script: script.path)
    harness.record("FMP sign round trips (CAdES-BES P-256), sequential", ours: signs, baseline: wrkSign,
                   baselineName: "wrk -t1 -c1 POST sign/", unit: .perSecond, higherIsBetter: true)
    harness.note("FMP: emulator in-process (libmicrohttpd, thread per connection) on \(base.absoluteString); client = FMPClient over URLSessionTransport; signs() lists 3 signatures (~9 KB)")
}
