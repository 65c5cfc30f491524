import CertificateProviders
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import TestSupport

/// A logged-in FMP client on an emulator with a short history (3 signatures, so `signs()` carries a
/// realistic body of ~9 KB), shared by the bench rows and the profile loops.
struct FMPBenchSession: Sendable {
    let client: FMPClient
    let transport: CurlTransport
    let token: String
    /// The `signs/` URL.
    let listingURL: String
    /// The `sign/` URL.
    let signingURL: String

    /// Logs in on `base` and tops the history up to 3 signatures.
    init(base: URL, transport: CurlTransport) async throws {
        client = try await loggedInSeedClient(base, transport, device: "bench-device")
        self.transport = transport
        guard let token = await client.exportSession()?.token else {
            throw BenchError("FMP bench: no token after login")
        }
        self.token = token
        let routes = base.absoluteString + "api/v1/dss/\(StandardSeed.environment)/\(StandardSeed.project)/"
        (listingURL, signingURL) = (routes + "signs/", routes + "sign/")
        // An emulator of an earlier run (`--url`) keeps its history.
        let history = try await client.signs().value.count
        for _ in history..<max(history, 3) { try await sign() }
    }

    /// The headers wrk and the C libcurl loop send.
    var headers: [String] { ["Authorization: Bearer \(token)", "X-Device-Id: bench-device"] }

    /// The sign call of the HHFWDss flow (CAdES-BES P-256 on the emulator).
    @Sendable func sign() async throws {
        _ = try await signSeedSample(client)
    }

    /// The sign request's JSON body, as the client sends it (the emulator's published test credentials).
    var signBody: String {
        #"{"resource":"GetBudgetPlanning","table":"ПланированиеБюджета","params":{},"column":"Номер","hhive_id":1,"password":"Saprun123","certificate_id":12831,"certificate_pin":"123"}"#
    }
}

extension FMPBenchSession: RemoteBenchSession {
    static let name = "fmp"
    static let noteName = "FMP"
    static let listing = (label: "FMP signs()", route: "signs/")
    static let signing = (label: "FMP sign (CAdES-BES P-256)", route: "sign/")

    /// Its body is parsed (``parseListing(_:)``) before any sign round, so it lists the same 3
    /// signatures the rows see.
    func list() async throws { _ = try await client.signs() }

    func describe(_ emulator: BenchEmulator) -> String {
        "FMP: emulator \(emulator.placement) (libmicrohttpd, thread per connection, GnuTLS for HTTPS) on "
            + "\(emulator.base.absoluteString); client = FMPClient over CurlTransport; signs() lists 3 signatures (~9 KB)"
    }
}

/// `certsign-bench --profile fmp-signs|fmp-sign|fmp-bare|fmp-json|fmp-decode [--tls] [--in-flight 8]
/// [--count N]`: N FMP
/// round trips (the client's `signs()`, its `sign`, or the bare transport's GET signs/) against the
/// in-process emulator, for perf / strace to look at; or, with no network, N parses of the signs/
/// body (`fmp-json`) or parses plus the client's decoding of it (`fmp-decode`). `fmp-serve` runs
/// only the emulator for N seconds and prints the signs/ URL and a token; `--url`
/// (its base URL, HTTP) points the other loops at it instead of an emulator in their own process.
/// `--executor transport` runs the loops on the transport's thread (`taskExecutor`);
/// `--executor op` runs each operation alone there (`withTaskExecutorPreference` around each call: a hop in and
/// out per operation). Without a URL the emulator runs in a process of its own (``BenchEmulator``),
/// which `perf stat` counts too unless pointed at the client's process only.
/// - Returns: false when `name` is not one of these profiles.
func runFMPProfileLoop(_ name: String, options: BenchOptions) async throws -> Bool {
    guard ["fmp-signs", "fmp-sign", "fmp-bare", "fmp-json", "fmp-decode", "fmp-serve"].contains(name) else {
        return false
    }
    try await withProfileScratch { scratch in
        // With `--url`, an emulator in another process (a `fmp-serve` run), so that the client's process
        // holds the client alone, as wrk's does.
        let emulator =
            try options.url == nil
            ? BenchEmulator(tls: options.tls, scratch: scratch, name: "fmp", options: options) : nil
        defer { emulator?.stop() }
        guard let base = emulator?.base ?? options.url else { throw BenchError("FMP profile: no emulator") }
        let session = try await FMPBenchSession(base: base, transport: emulator?.transport ?? CurlTransport())
        if name == "fmp-serve" {
            // Serves for COUNT seconds; prints the signs/ URL and a token for wrk and other clients.
            FileHandle.standardOutput.write(Data("\(session.listingURL) \(session.token)\n".utf8))
            try await Task.sleep(for: .seconds(options.count))
            return
        }
        let (client, transport) = (session.client, session.transport)
        let bare = try HTTPRequest(bare: session.listingRoute)
        let signsBody = try await transport.send(bare).body
        let operation: @Sendable () async throws -> Void
        switch name {
        case "fmp-json": operation = { _ = try JSONValue(parsing: signsBody) }
        case "fmp-decode": operation = { _ = try FMPClient.decodeSigns(try JSONValue(parsing: signsBody)) }
        case "fmp-signs": operation = { _ = try await client.signs() }
        case "fmp-sign": operation = session.sign
        default: operation = { _ = try await transport.send(bare) }
        }
        try await runProfileRoundTrips(name, operation, transport: transport, options: options, clientCPU: true)
    }
    return true
}

/// Runs `operation` as ``runProfileOperations(_:transport:options:)`` does and prints the result:
/// `NAME HTTP|HTTPS N in flight: COUNT round trips, RATE/s`, and with `clientCPU` this process's CPU
/// time per round trip.
func runProfileRoundTrips(
    _ name: String,
    _ operation: @escaping @Sendable () async throws -> Void,
    transport: CurlTransport,
    options: BenchOptions,
    clientCPU: Bool = false
) async throws {
    let cpuStart = processCPUSeconds()
    let rate = try await runProfileOperations(operation, transport: transport, options: options)
    let cpu = (processCPUSeconds() - cpuStart) / Double(options.count) * 1e6
    print(
        "\(name) \(options.tls ? "HTTPS" : "HTTP") \(options.inFlight) in flight: \(options.count) round trips, "
            + "\(String(format: "%.0f", rate))/s"
            + (clientCPU ? ", client CPU \(String(format: "%.1f", cpu)) µs per round trip" : "")
    )
}

/// Runs `operation` `options.count` times, `options.inFlight` at a time, and returns the rate.
/// `--executor transport` runs the loops on the transport's own thread; `--executor op` runs each
/// operation alone there (a hop in and out per operation).
func runProfileOperations(
    _ operation: @escaping @Sendable () async throws -> Void,
    transport: CurlTransport,
    options: BenchOptions
) async throws -> Double {
    let perOperation = options.executor == "op"
    let loopExecutor = transport.taskExecutor
    let step: @Sendable () async throws -> Void = {
        if perOperation {
            try await withTaskExecutorPreference(loopExecutor) { () async throws -> Void in try await operation() }
        } else {
            try await operation()
        }
    }
    let executor = benchExecutor(transport, options)
    let (count, inFlight) = (options.count, options.inFlight)
    let start = DispatchTime.now().uptimeNanoseconds
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<inFlight {
            group.addTask(executorPreference: executor) { for _ in 0..<(count / inFlight) { try await step() } }
        }
        try await group.waitForAll()
    }
    return Double(count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}
