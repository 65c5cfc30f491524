import CertificateProviders
import DSSEmulator
import FMPDSSProvider
import Foundation
import RemoteSigning

/// A logged-in FMP client on an emulator with a short history (3 signatures, so `signs()` carries a
/// realistic body of ~9 KB), shared by the bench rows and the profile loops.
struct FMPBenchSession: Sendable {
    let client: FMPClient
    let transport: CurlTransport
    let token: String
    /// The `signs/` and `sign/` URLs.
    let signsURL: String
    let signURL: String

    /// Logs in on `base` and tops the history up to 3 signatures.
    init(base: URL, transport: CurlTransport) async throws {
        client = FMPClient(
            configuration: .init(
                host: base,
                environment: StandardSeed.environment,
                project: StandardSeed.project,
                device: "bench-device"
            ),
            transport: transport
        )
        self.transport = transport
        _ = try await client.auth(username: StandardSeed.username, password: Secret(StandardSeed.password))
        guard let token = await client.exportSession()?.token else {
            throw BenchError("FMP bench: no token after login")
        }
        self.token = token
        let routes = base.absoluteString + "api/v1/dss/\(StandardSeed.environment)/\(StandardSeed.project)/"
        (signsURL, signURL) = (routes + "signs/", routes + "sign/")
        // An emulator of an earlier run (`--url`) keeps its history.
        let history = try await client.signs().value.count
        for _ in history..<max(history, 3) { try await sign() }
    }

    /// The headers wrk and the C libcurl loop send.
    var headers: [String] { ["Authorization: Bearer \(token)", "X-Device-Id: bench-device"] }

    /// The sign call of the HHFWDss flow (CAdES-BES P-256 on the emulator).
    @Sendable func sign() async throws {
        _ = try await client.sign(
            resource: StandardSeed.resource,
            table: StandardSeed.table,
            column: StandardSeed.column,
            hhiveID: StandardSeed.row,
            dssPassword: Secret(StandardSeed.dssPassword),
            certificateID: StandardSeed.certificateID,
            certificatePIN: Secret(StandardSeed.certificatePIN)
        )
    }

    /// The sign request's JSON body, as the client sends it (the emulator's published test credentials).
    static let signBody =
        #"{"resource":"GetBudgetPlanning","table":"ПланированиеБюджета","params":{},"column":"Номер","hhive_id":1,"password":"Saprun123","certificate_id":12831,"certificate_pin":"123"}"#

    /// A bare transport request on `url` with the session's headers.
    func bareRequest(_ url: String, body: String? = nil) throws -> HTTPRequest {
        guard let requestURL = URL(string: url) else { throw BenchError("FMP bench: bad URL \(url)") }
        var request = HTTPRequest(method: body == nil ? .get : .post, url: requestURL, body: Array((body ?? "").utf8))
        if body != nil { request.setHeader("Content-Type", "application/json") }
        request.setHeader("Authorization", "Bearer \(token)")
        request.setHeader("X-Device-Id", "bench-device")
        return request
    }
}

/// FMP DSS round trips against the emulator (``BenchEmulator``) over HTTP and then HTTPS, each route
/// sequential and 8 in flight beside the C libcurl loop (the goal) and wrk (explanatory): `signs()`
/// (GET signs/) and sign (POST sign/).
func runFMPBenchmarks(_ harness: BenchHarness) async throws {
    for tls in [false, true] { try await runFMPBenchmarks(harness, tls: tls) }
}

private func runFMPBenchmarks(_ harness: BenchHarness, tls: Bool) async throws {
    let emulator = try BenchEmulator(tls: tls, scratch: harness.scratch, name: "fmp", options: harness.options)
    defer { emulator.stop() }
    let session = try await FMPBenchSession(base: emulator.base, transport: emulator.transport)
    let scheme = tls ? "HTTPS" : "HTTP"
    try await noteWhereTheTimeGoes(harness, session, scheme: scheme)
    guard let rows = RemoteRows(harness, emulator: emulator) else { return }
    let client = session.client
    // signs() before any sign round adds signatures, so every side lists the same 3.
    let signs = RemoteRoute(
        label: "FMP signs()",
        method: "GET",
        route: "signs/",
        url: session.signsURL,
        headers: session.headers,
        leastCount: 300
    ) { _ = try await client.signs() }
    try await rows.measure(signs)
    try await rows.measureOptIn(signs, transport: session.transport)
    try await rows.measure(
        RemoteRoute(
            label: "FMP sign (CAdES-BES P-256)",
            method: "POST",
            route: "sign/",
            url: session.signURL,
            headers: session.headers,
            body: FMPBenchSession.signBody,
            leastCount: 100,
            call: session.sign
        )
    )
    harness.note(
        "FMP \(scheme): emulator \(emulator.placement) (libmicrohttpd, thread per connection\(tls ? ", GnuTLS" : "")) "
            + "on \(emulator.base.absoluteString); client = FMPClient over CurlTransport; signs() lists 3 signatures "
            + "(~9 KB); " + benchExecutorNote(emulator.transport, harness.options)
    )
}

/// Notes the bare transport's rate on both routes, the client's sign rate and JSON parsing of the
/// signs/ body, measured at the same moment.
private func noteWhereTheTimeGoes(_ harness: BenchHarness, _ session: FMPBenchSession, scheme: String) async throws {
    let transport = session.transport
    let bare = try session.bareRequest(session.signsURL)
    let bareRate = try await harness.time { for _ in 0..<300 { _ = try await transport.send(bare) } }.rate(count: 300)
    let bodyBytes = try await transport.send(bare).body
    let parseRate = try await harness.time { for _ in 0..<300 { _ = try JSONValue(parsing: bodyBytes) } }
        .rate(count: 300)
    let bareSign = try session.bareRequest(session.signURL, body: FMPBenchSession.signBody)
    let bareSignRate = try await harness.time { for _ in 0..<100 { _ = try await transport.send(bareSign) } }
        .rate(count: 100)
    let clientSignRate = try await harness.time { for _ in 0..<100 { try await session.sign() } }.rate(count: 100)
    harness.note(
        String(
            format: "FMP %@: bare CurlTransport GET signs/ %.0f/s (JSONValue parse of its %d-byte body %.0f/s), "
                + "POST sign/ %.0f/s; FMPClient.sign %.0f/s; sequential, same moment",
            scheme,
            bareRate.median,
            bodyBytes.count,
            parseRate.median,
            bareSignRate.median,
            clientSignRate.median
        )
    )
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
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("certsign-profile-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    // With `--url`, an emulator in another process (a `fmp-serve` run), so that the client's process
    // holds the client alone, as wrk's does.
    let emulator =
        try options.url == nil ? BenchEmulator(tls: options.tls, scratch: scratch, name: "fmp", options: options) : nil
    defer { emulator?.stop() }
    guard let base = emulator?.base ?? options.url else { throw BenchError("FMP profile: no emulator") }
    let session = try await FMPBenchSession(base: base, transport: emulator?.transport ?? CurlTransport())
    if name == "fmp-serve" {
        // Serves for COUNT seconds; prints the signs/ URL and a token for wrk and other clients.
        FileHandle.standardOutput.write(Data("\(session.signsURL) \(session.token)\n".utf8))
        try await Task.sleep(for: .seconds(options.count))
        return true
    }
    let (client, transport) = (session.client, session.transport)
    let bare = try session.bareRequest(session.signsURL)
    let signsBody = try await transport.send(bare).body
    let operation: @Sendable () async throws -> Void
    switch name {
    case "fmp-json": operation = { _ = try JSONValue(parsing: signsBody) }
    case "fmp-decode": operation = { _ = try FMPClient.decodeSigns(try JSONValue(parsing: signsBody)) }
    case "fmp-signs": operation = { _ = try await client.signs() }
    case "fmp-sign": operation = session.sign
    default: operation = { _ = try await transport.send(bare) }
    }
    let rate = try await runProfileOperations(operation, transport: transport, options: options)
    print(
        "\(name) \(options.tls ? "HTTPS" : "HTTP") \(options.inFlight) in flight: \(options.count) round trips, "
            + "\(String(format: "%.0f", rate))/s"
    )
    return true
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
