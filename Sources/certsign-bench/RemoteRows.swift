import Foundation
import HTTPClient
import JSON

/// The goal the issues set for every remote route (sequential and 8 in flight, HTTP and HTTPS): our
/// client's CPU time per round trip at most 2× that of a plain C program on libcurl (``LibcurlLoop``)
/// doing the same request on the same emulator route in the same rounds, so the ratio (the loop's CPU
/// over ours) at least 0.5. The rate rows beside them (against the same loop, and wrk against the
/// loop) are information: on a shared 2-core machine a rate swings with the load and with how deeply
/// idle cores sleep.
let remoteClientCPUGoal = 0.5

/// A logged-in client of one remote provider on an emulator, as the remote suites measure it: a listing
/// call (a GET, or a POST of ``listingBody``) and a sign call (a POST), each beside the same request of
/// the C libcurl loop and wrk.
protocol RemoteBenchSession: Sendable {
    /// The suite's name (`fmp`), also the emulator's CA file prefix.
    static var name: String { get }
    /// The suite as its notes name it (`FMP`).
    static var noteName: String { get }
    /// Logs in on the emulator at `base`.
    init(base: URL, transport: CurlTransport) async throws
    /// The transport the client uses.
    var transport: CurlTransport { get }
    /// The headers every request sends (`Name: value`, the bearer token among them).
    var headers: [String] { get }

    /// The listing call as the rows name it (`FMP signs()`) and its route (`signs/`).
    static var listing: (label: String, route: String) { get }
    /// The listing route's full URL.
    var listingURL: String { get }
    /// The listing request's JSON body, as the client sends it, when the listing is a POST (nil: a GET).
    static var listingBody: String? { get }
    /// One listing call through the client.
    func list() async throws
    /// What ``parseListing(_:)`` does, as the note says it (`JSONValue parse`), and what the note adds
    /// after the rates (empty: nothing).
    static var listingParsing: (what: String, detail: String) { get }
    /// Parses the listing's body as the client does.
    func parseListing(_ body: [UInt8]) throws

    /// The sign call as the rows name it and its route.
    static var signing: (label: String, route: String) { get }
    /// The sign route's full URL.
    var signingURL: String { get }
    /// The sign request's JSON body, as the client sends it (test credentials only).
    var signBody: String { get }
    /// One sign call through the client.
    func sign() async throws

    /// The table note saying what ran.
    func describe(_ emulator: BenchEmulator) -> String
}

extension RemoteBenchSession {
    /// A GET listing.
    static var listingBody: String? { nil }

    /// The listing's body is parsed as JSON only.
    static var listingParsing: (what: String, detail: String) { (what: "JSONValue parse", detail: "") }

    /// Parses the listing's body as JSON (the client's decoding of it aside).
    func parseListing(_ body: [UInt8]) throws { _ = try JSONValue(parsing: body) }

    /// The listing: a GET (or a POST of ``listingBody``), at least 300 calls a round.
    var listingRoute: RemoteRoute {
        let session = self
        return RemoteRoute(
            Self.listing,
            Self.listingBody == nil ? "GET" : "POST",
            url: listingURL,
            headers: headers,
            body: Self.listingBody,
            leastCount: 300
        ) {
            try await session.list()
        }
    }

    /// The sign call: a POST of ``signBody``, at least 100 calls a round.
    var signingRoute: RemoteRoute {
        let session = self
        return RemoteRoute(
            Self.signing,
            "POST",
            url: signingURL,
            headers: headers,
            body: signBody,
            leastCount: 100
        ) {
            try await session.sign()
        }
    }
}

/// A session whose only request header is its bearer token.
protocol BearerBenchSession: RemoteBenchSession {
    /// The access token, as the client sends it after `Bearer`.
    var bearer: String { get }
}

extension BearerBenchSession {
    /// The headers wrk and the C libcurl loop send: the bearer token.
    var headers: [String] { ["Authorization: Bearer \(bearer)"] }
}

/// One remote suite over HTTP and then HTTPS: each route sequential and 8 in flight, our client against
/// the C libcurl loop (the CPU rows hold the goal) and wrk against the same loop (explanatory).
func runRemoteBenchmarks<Session: RemoteBenchSession>(_ harness: BenchHarness, _ session: Session.Type) async throws {
    for tls in [false, true] {
        let emulator = try BenchEmulator(
            tls: tls,
            scratch: harness.scratch,
            name: Session.name,
            options: harness.options
        )
        defer { emulator.stop() }
        let session = try await Session(base: emulator.base, transport: emulator.transport)
        let scheme = tls ? "HTTPS" : "HTTP"
        try await harness.noteWhereTheTimeGoes(
            on: session.listingRoute,
            transport: session.transport,
            suite: Session.noteName,
            scheme: scheme,
            parsing: Session.listingParsing.what,
            detail: Session.listingParsing.detail,
            parse: session.parseListing
        )
        guard let rows = RemoteRows(harness, emulator: emulator) else { return }
        // The listing first, before any sign round changes what it lists.
        try await rows.measure(session.listingRoute)
        try await rows.measureOptIn(session.listingRoute, transport: session.transport)
        try await rows.measure(session.signingRoute)
        harness.note(
            "\(scheme) " + session.describe(emulator) + "; " + benchExecutorNote(emulator.transport, harness.options)
        )
    }
}

/// One route of a remote provider as the bench measures it: our client's call, and the same HTTP
/// request for the C libcurl loop and wrk.
struct RemoteRoute {
    /// The client call, as the row names it (`FMP signs()`).
    var label: String
    /// `GET` or `POST`.
    var method: String
    /// The route, as the rows name it (`signs/`).
    var route: String
    /// The full URL.
    var url: String
    /// Request headers (`Name: value`), the bearer token among them.
    var headers: [String]
    /// The JSON body of a POST (the same bytes the client sends, test credentials only).
    var body: String?
    /// The least operations in one round of ours (a slow machine still finishes that many).
    var leastCount: Int
    /// One round trip through our client.
    var call: @Sendable () async throws -> Void

    /// A route named as a session names its calls: `name` holds the label and the route.
    init(
        _ name: (label: String, route: String),
        _ method: String,
        url: String,
        headers: [String],
        body: String? = nil,
        leastCount: Int,
        call: @escaping @Sendable () async throws -> Void
    ) {
        (label, route) = name
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.leastCount = leastCount
        self.call = call
    }
}

extension HTTPRequest {
    /// The route's request as wrk and the C libcurl loop send it (its method, URL, headers and JSON
    /// body): the bare transport's request beside a client's call.
    /// - Throws: `BenchError` for a URL that does not parse.
    init(bare route: RemoteRoute) throws {
        guard let requestURL = URL(string: route.url) else { throw BenchError("bad URL \(route.url)") }
        self.init(method: HTTPMethod(route.method), url: requestURL)
        for header in route.headers {
            let field = header.split(separator: ":", maxSplits: 1)
            setHeader(String(field[0]), field.dropFirst().joined().trimmingCharacters(in: .whitespaces))
        }
        if let body = route.body {
            self.body = Array(body.utf8)
            setHeader("Content-Type", "application/json")
        }
    }
}

extension BenchHarness {
    /// Notes where the time of a listing `route` goes, measured at one moment: the bare transport's
    /// sequential rate on the route's request (its URL and headers, 300 round trips) and the rate of
    /// `parse` over the body that request returns (300 runs).
    /// - Parameters:
    ///   - suite: the suite as the note names it (`FMP`).
    ///   - scheme: `HTTP` or `HTTPS`.
    ///   - parsing: what `parse` does, as the note says it (`JSONValue parse`).
    ///   - detail: said after the rates (empty: nothing).
    /// - Throws: what the transport or `parse` throws.
    func noteWhereTheTimeGoes(
        on route: RemoteRoute,
        transport: CurlTransport,
        suite: String,
        scheme: String,
        parsing: String,
        detail: String = "",
        parse: ([UInt8]) throws -> Void
    ) async throws {
        let request = try HTTPRequest(bare: route)
        let bareRate = try await time { for _ in 0..<300 { _ = try await transport.send(request) } }.rate(count: 300)
        let body = try await transport.send(request).body
        let parseRate = try await time { for _ in 0..<300 { try parse(body) } }.rate(count: 300)
        note(
            String(
                format: "%@ %@: bare CurlTransport %@ %@ %.0f/s sequential; %@ of its %d-byte body %.0f/s%@",
                suite,
                scheme,
                route.method,
                route.route,
                bareRate.median,
                parsing,
                body.count,
                parseRate.median,
                detail
            )
        )
    }
}

/// Measures routes of one emulator, one scheme: per route, sequential and 8 in flight, our client against
/// the C libcurl loop (the goal rows), then wrk against the same loop (explanatory rows).
struct RemoteRows {
    let harness: BenchHarness
    /// `HTTP` or `HTTPS`.
    let scheme: String
    /// The emulator's CA file (HTTPS).
    let caFile: String?
    let libcurl: LibcurlLoop
    let executor: (any TaskExecutor)?
    let wrk: Bool
    /// Whether the client CPU rows are recorded: only with the emulator in its own process (in the
    /// bench's process, its CPU would count as the client's).
    let cpuRows: Bool

    /// Prepares the rows; nil (with a note) when the C libcurl loop cannot be built.
    init?(_ harness: BenchHarness, emulator: BenchEmulator) {
        guard let libcurl = LibcurlLoop.build(harness) else { return nil }
        self.harness = harness
        self.scheme = emulator.base.scheme == "https" ? "HTTPS" : "HTTP"
        self.caFile = emulator.caFile
        self.libcurl = libcurl
        self.executor = benchExecutor(emulator.transport, harness.options)
        self.wrk = wrkIsAvailable(harness)
        self.cpuRows = !emulator.runsInThisProcess
        if !wrk { harness.note("\(scheme): wrk is not installed (apt-get install wrk); no wrk rows") }
        if !cpuRows { harness.note("\(scheme): the emulator runs in the bench's process; no client CPU rows") }
    }

    /// A POST route's body as files in the scratch directory: for the C libcurl loop (`-d`) and a wrk
    /// script; both nil for a GET.
    private func bodyFiles(_ route: RemoteRoute) throws -> (body: String?, wrkScript: String?) {
        guard let body = route.body else { return (nil, nil) }
        let name = route.route.replacingOccurrences(of: "/", with: "")
        let file = harness.scratch.appendingPathComponent("\(name)-body.json")
        try Data(body.utf8).write(to: file)
        let lua = harness.scratch.appendingPathComponent("\(name).lua")
        let text =
            "wrk.method = \"POST\"\nwrk.body = [[\(body)]]\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
        try Data(text.utf8).write(to: lua)
        return (file.path, lua.path)
    }

    /// Records the goal rows (and the wrk rows) of `route`.
    func measure(_ route: RemoteRoute) async throws {
        let (bodyFile, script) = try bodyFiles(route)
        for connections in [1, 8] {
            let curl = {
                try libcurl.once(harness, connections: connections, route: route, bodyFile: bodyFile, caFile: caFile)
            }
            let ours = try await interleaved(
                harness,
                count: route.leastCount,
                inFlight: connections,
                executor: executor,
                route.call,
                baseline: curl
            )
            let flight = connections == 1 ? "sequential" : "\(connections) in flight"
            let baselineName = "C libcurl loop -c\(connections) \(route.method) \(route.route) \(scheme)"
            harness.record(
                "\(route.label) round trips, \(flight), \(scheme)",
                ours: ours.ours,
                baseline: ours.baseline,
                baselineName: baselineName,
                unit: .perSecond,
                higherIsBetter: true,
                pairedRatio: ours.pairedRatio
            )
            recordCPU(
                ours,
                "\(route.label) client CPU per round trip, \(flight), \(scheme)",
                baselineName,
                goal: remoteClientCPUGoal
            )
            guard wrk else { continue }
            let reference = try await pairs(harness) {
                try wrkOnce(harness, connections: connections, url: route.url, headers: route.headers, script: script)
            } baseline: {
                try curl().rate
            }
            harness.record(
                "reference: wrk -t1 -c\(connections) \(route.method) \(route.route) \(scheme)",
                ours: reference.ours,
                baseline: reference.baseline,
                baselineName: baselineName,
                unit: .perSecond,
                higherIsBetter: true,
                pairedRatio: reference.pairedRatio
            )
        }
    }

    /// An explanatory row without a goal (only when the goal rows run on the shared pool, the default):
    /// the same sequential calls by a caller that opts in to the transport's thread for its whole series
    /// (`withTaskExecutorPreference(transport.taskExecutor)`), so each round trip resumes on the thread
    /// that read the answer instead of waking a pool thread. Beside the default row it shows what the
    /// hand-over to the shared pool costs.
    func measureOptIn(_ route: RemoteRoute, transport: CurlTransport) async throws {
        guard executor == nil else { return }
        let bodyFile = try bodyFiles(route).body
        let result = try await interleaved(
            harness,
            count: route.leastCount,
            executor: transport.taskExecutor,
            route.call
        ) {
            try libcurl.once(harness, connections: 1, route: route, bodyFile: bodyFile, caFile: caFile)
        }
        let name = "\(route.label) round trips, sequential, \(scheme), caller on the transport's taskExecutor (opt-in)"
        let baselineName = "C libcurl loop -c1 \(route.method) \(route.route) \(scheme)"
        harness.record(
            name,
            ours: result.ours,
            baseline: result.baseline,
            baselineName: baselineName,
            unit: .perSecond,
            higherIsBetter: true,
            pairedRatio: result.pairedRatio
        )
        recordCPU(result, name.replacingOccurrences(of: "round trips", with: "client CPU per round trip"), baselineName)
    }

    /// The row beside a rate row: the CPU time (user and system) per round trip of our client's
    /// process and of the C libcurl loop in the same rounds (lower is better), with `goal` on the
    /// goal routes (``remoteClientCPUGoal``). On a quiet 2-core VM a sequential rate swings with how
    /// deeply idle cores sleep; CPU per round trip is what our layers add on top of libcurl.
    private func recordCPU(_ result: InterleavedResult, _ name: String, _ baselineName: String, goal: Double? = nil) {
        guard cpuRows else { return }
        harness.record(
            name,
            ours: result.oursCPU,
            baseline: result.baselineCPU,
            baselineName: baselineName,
            unit: .microseconds,
            goal: goal,
            higherIsBetter: false,
            pairedRatio: result.pairedCPURatio
        )
    }
}

/// One `wrk` run of one second on one URL: its Requests/sec.
func wrkOnce(
    _ harness: BenchHarness,
    connections: Int,
    url: String,
    headers: [String],
    script: String? = nil
) throws -> Double {
    var arguments = ["-t1", "-c\(connections)", "-d1s"] + headers.flatMap { ["-H", $0] }
    if let script { arguments += ["-s", script] }
    let result = try harness.runCommand("wrk", arguments + [url])
    guard let line = result.output.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
        let rate = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces))
    else {
        throw BenchError("wrk printed no Requests/sec: \(result.output) \(result.error)")
    }
    guard !result.output.contains("Non-2xx") else {
        throw BenchError("wrk got non-2xx answers from \(url): \(result.output)")
    }
    return rate
}

/// Whether `wrk` can be run.
func wrkIsAvailable(_ harness: BenchHarness) -> Bool {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk")
        || (try? harness.runCommand("which", ["wrk"]).status) == 0
}

/// The executor our client rounds run on: the shared cooperative pool, which is what a caller gets
/// unless it opts in, or with `--executor transport` the transport's own thread
/// (`CurlTransport.taskExecutor`, a series of calls without a thread hand-over per request). On a quiet
/// machine (2026-12-01) neither was ahead on every row, so the rows measure the default.
func benchExecutor(_ transport: CurlTransport, _ options: BenchOptions) -> (any TaskExecutor)? {
    options.executor == "transport" ? transport.taskExecutor : nil
}

/// How ``benchExecutor(_:_:)`` ran our rounds, for the table's notes.
func benchExecutorNote(_ transport: CurlTransport, _ options: BenchOptions) -> String {
    benchExecutor(transport, options) == nil
        ? "our rounds run on the shared cooperative pool (--executor transport: the transport's taskExecutor)"
        : "our rounds run under withTaskExecutorPreference(transport.taskExecutor) (--executor transport)"
}

/// How long one round of ours runs: as long as one wrk or libcurl-loop run (one second), so that both
/// sides of a pair are exposed to the same stretch of a shared machine's load.
let roundSeconds = 1.0

/// One round of a remote row: operations per second, and CPU microseconds (user and system) per
/// operation.
struct RoundResult {
    var rate: Double
    var cpuMicroseconds: Double
}

/// Both sides of a remote row: rates, CPU per round trip, and the medians of the per-pair ratios
/// (rates: ours over the baseline; CPU: the baseline over ours, so higher is better for both).
struct InterleavedResult {
    var ours: Sample
    var baseline: Sample
    var pairedRatio: Double
    var oursCPU: Sample
    var baselineCPU: Sample
    var pairedCPURatio: Double
}

/// Our client and a baseline measured in alternating rounds (ours, then the baseline,
/// `harness.repetitions` times after one warm-up of each), so both sides see the same load on a
/// shared machine. A round of ours runs for ``roundSeconds`` and counts the operations finished;
/// its CPU is this process's (the emulator runs in its own).
/// - Parameters:
///   - count: the least operations per round of ours (a slow machine still finishes that many).
///   - inFlight: how many tasks run them, each one operation after another.
///   - executor: the executor the tasks prefer (``benchExecutor(_:_:)``), nil for the shared pool.
///   - operation: one client round trip.
///   - baseline: one baseline run (the C libcurl loop): its rate and CPU per request.
/// - Returns: both sides, and the medians of the ratios of the pairs (ours and the baseline run
///   right after it), which drifting load disturbs less than the ratio of medians.
func interleaved(
    _ harness: BenchHarness,
    count: Int,
    inFlight: Int = 1,
    executor: (any TaskExecutor)? = nil,
    _ operation: @escaping @Sendable () async throws -> Void,
    baseline: () throws -> RoundResult
) async throws -> InterleavedResult {
    func round() async throws -> RoundResult {
        let cpuStart = processCPUSeconds()
        let start = DispatchTime.now().uptimeNanoseconds
        let end = start + UInt64(roundSeconds * 1e9)
        let least = max(1, count / inFlight)
        let done = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<inFlight {
                group.addTask(executorPreference: executor) {
                    var finished = 0
                    while finished < least || DispatchTime.now().uptimeNanoseconds < end {
                        try await operation()
                        finished += 1
                    }
                    return finished
                }
            }
            return try await group.reduce(0, +)
        }
        return RoundResult(
            rate: Double(done) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9),
            cpuMicroseconds: (processCPUSeconds() - cpuStart) * 1e6 / Double(max(1, done))
        )
    }
    let (ours, others) = try await alternating(harness, round, baseline: baseline)
    let pairs = zip(ours, others)
    return InterleavedResult(
        ours: Sample(values: ours.map(\.rate)),
        baseline: Sample(values: others.map(\.rate)),
        pairedRatio: Sample(values: pairs.map { $0.rate / $1.rate }).median,
        oursCPU: Sample(values: ours.map(\.cpuMicroseconds)),
        baselineCPU: Sample(values: others.map(\.cpuMicroseconds)),
        pairedCPURatio: Sample(values: pairs.map { $1.cpuMicroseconds / $0.cpuMicroseconds }).median
    )
}

/// Two rates measured in alternating rounds, `harness.repetitions` times after one warm-up of each.
/// - Returns: both rates and the median of the ratios of the pairs (measured over baseline).
func pairs(
    _ harness: BenchHarness,
    _ measured: () async throws -> Double,
    baseline: () throws -> Double
) async throws -> (ours: Sample, baseline: Sample, pairedRatio: Double) {
    let (ours, others) = try await alternating(harness, measured, baseline: baseline)
    let ratios = zip(ours, others).map { $0 / $1 }
    return (Sample(values: ours), Sample(values: others), Sample(values: ratios).median)
}

/// Runs `measured`, then `baseline`, `harness.repetitions` times after one warm-up of each, so both
/// sides see the same load on a shared machine.
/// - Returns: the results of the timed rounds of each side, in order (the warm-ups are dropped).
func alternating<Result>(
    _ harness: BenchHarness,
    _ measured: () async throws -> Result,
    baseline: () throws -> Result
) async throws -> (ours: [Result], baseline: [Result]) {
    _ = try await measured()
    _ = try baseline()
    var ours: [Result] = []
    var others: [Result] = []
    for _ in 0..<harness.repetitions {
        ours.append(try await measured())
        others.append(try baseline())
    }
    return (ours, others)
}
