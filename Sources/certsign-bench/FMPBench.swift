import CertificateProviders
import EmulatorKit
import FMPDSSProvider
import Foundation
import JSON
import RemoteSigning

/// The goal the transport issue sets for every client round-trip row: at least 0.8× wrk on the same
/// emulator route, same connection count, same scheme.
let remoteRoundTripGoal = 0.8

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

/// How long one round of ours runs: as long as one wrk run (`-d1s`), so that both sides of a pair
/// are exposed to the same stretch of a shared machine's load.
let roundSeconds = 1.0

/// Our client and wrk measured in alternating rounds (ours, then wrk, `harness.repetitions` times
/// after one warm-up of ours), so both sides see the same load on a shared machine. A round of
/// ours runs for ``roundSeconds`` (as wrk does) and counts the operations finished.
/// - Parameters:
///   - count: the least operations per round of ours (a slow machine still finishes that many).
///   - inFlight: how many tasks run them, each one operation after another.
///   - executor: the executor the tasks prefer (``benchExecutor(_:)``), nil for the shared pool.
///   - operation: one client round trip.
///   - wrk: one wrk run, returning Requests/sec.
/// - Returns: the rates of ours and of wrk, and the median of the ratios of the pairs (ours over
///   the wrk run right after it), which drifting load disturbs less than the ratio of medians.
func interleaved(
    _ harness: BenchHarness,
    count: Int,
    inFlight: Int = 1,
    executor: (any TaskExecutor)? = nil,
    _ operation: @escaping @Sendable () async throws -> Void,
    wrk: () throws -> Double
) async throws -> (ours: Sample, wrk: Sample, pairedRatio: Double) {
    func round() async throws -> Double {
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
        return Double(done) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    _ = try await round()
    var ours: [Double] = []
    var baseline: [Double] = []
    for _ in 0..<harness.repetitions {
        ours.append(try await round())
        baseline.append(try wrk())
    }
    let ratios = zip(ours, baseline).map { $0 / $1 }
    return (Sample(values: ours), Sample(values: baseline), Sample(values: ratios).median)
}

/// The executor our client rounds run on: the shared cooperative pool, which is what a caller gets
/// unless it opts in, or with `CERTSIGN_BENCH_EXECUTOR=1` the transport's own thread
/// (`CurlTransport.taskExecutor`, a series of calls without a thread hand-over per request). On a quiet
/// machine (2026-12-01) neither was ahead on every row, so the rows measure the default.
func benchExecutor(_ transport: CurlTransport) -> (any TaskExecutor)? {
    ProcessInfo.processInfo.environment["CERTSIGN_BENCH_EXECUTOR"] == "1" ? transport.taskExecutor : nil
}

/// How ``benchExecutor(_:)`` ran our rounds, for the table's notes.
func benchExecutorNote(_ transport: CurlTransport) -> String {
    benchExecutor(transport) == nil
        ? "our rounds run on the shared cooperative pool (CERTSIGN_BENCH_EXECUTOR=1: the transport's taskExecutor)"
        : "our rounds run under withTaskExecutorPreference(transport.taskExecutor) (CERTSIGN_BENCH_EXECUTOR=1)"
}

/// An explanatory row without a goal (only when the goal rows run on the shared pool, the default):
/// the same sequential calls by a caller that opts in to the transport's thread for its whole series
/// (`withTaskExecutorPreference(transport.taskExecutor)`), so each round trip resumes on the thread
/// that read the answer instead of waking a pool thread. Beside the default row it shows what the
/// hand-over to the shared pool costs.
func recordOptInRow(
    _ harness: BenchHarness,
    _ transport: CurlTransport,
    name: String,
    baselineName: String,
    _ operation: @escaping @Sendable () async throws -> Void,
    wrk: () throws -> Double
) async throws {
    guard benchExecutor(transport) == nil else { return }
    let result = try await interleaved(harness, count: 300, executor: transport.taskExecutor, operation, wrk: wrk)
    harness.record(
        name,
        ours: result.ours,
        baseline: result.wrk,
        baselineName: baselineName,
        unit: .perSecond,
        higherIsBetter: true,
        pairedRatio: result.pairedRatio
    )
}

/// A plain C program on libcurl (an easy handle for one connection, a multi handle for more), built
/// with `cc` in the scratch directory when the bench runs: a reference row beside wrk that shows
/// how close libcurl itself gets on the same route. It is not ours and has no goal; it ships nowhere.
struct LibcurlLoop {
    /// The built program.
    let path: String

    /// Builds the program, or notes why not (no `cc`, no libcurl headers) and returns nil.
    static func build(_ harness: BenchHarness) -> LibcurlLoop? {
        let source = harness.scratch.appendingPathComponent("curlloop.c")
        let program = harness.scratch.appendingPathComponent("curlloop")
        if FileManager.default.isExecutableFile(atPath: program.path) { return LibcurlLoop(path: program.path) }
        do {
            try Data(libcurlLoopSource.utf8).write(to: source)
            let result = try harness.runCommand("cc", ["-O2", "-o", program.path, source.path, "-lcurl"])
            guard result.status == 0 else {
                harness.note("C libcurl reference rows skipped: cc failed: \(result.error.prefix(300))")
                return nil
            }
            harness.note(
                "reference rows: a plain C program on libcurl (one easy handle for -c1, a multi handle with 8 "
                    + "easy handles for -c8; same headers, body discarded, HTTP 200 checked), built with cc at bench "
                    + "time; not ours, so no goal: they show how close libcurl itself gets to wrk on the route"
            )
            return LibcurlLoop(path: program.path)
        } catch {
            harness.note("C libcurl reference rows skipped: \(error)")
            return nil
        }
    }

    /// One run of one second on one URL: its requests per second.
    func once(
        _ harness: BenchHarness,
        connections: Int,
        url: String,
        headers: [String],
        caFile: String? = nil
    ) throws -> Double {
        var arguments = [url, "1", String(connections)] + headers.flatMap { ["-H", $0] }
        if let caFile { arguments += ["--cacert", caFile] }
        let result = try harness.runCommand(path, arguments)
        guard result.status == 0,
            let line = result.output.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
            let rate = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces))
        else {
            throw BenchError("the C libcurl loop failed on \(url): \(result.output) \(result.error)")
        }
        return rate
    }

    /// Records the reference rows for a GET route, sequential (-c1) and 8 in flight (-c8), each run
    /// in alternating rounds with wrk as our rows are.
    func recordRows(
        _ harness: BenchHarness,
        route: String,
        url: String,
        headers: [String],
        caFile: String?,
        scheme: String
    ) throws {
        for connections in [1, 8] {
            _ = try once(harness, connections: connections, url: url, headers: headers, caFile: caFile)
            var ours: [Double] = []
            var baseline: [Double] = []
            for _ in 0..<harness.repetitions {
                ours.append(try once(harness, connections: connections, url: url, headers: headers, caFile: caFile))
                baseline.append(try wrkOnce(harness, connections: connections, url: url, headers: headers))
            }
            let ratios = zip(ours, baseline).map { $0 / $1 }
            harness.record(
                "reference: C libcurl loop, \(connections == 1 ? "sequential" : "\(connections) in flight"), "
                    + "GET \(route) \(scheme)",
                ours: Sample(values: ours),
                baseline: Sample(values: baseline),
                baselineName: "wrk -t1 -c\(connections) GET \(route) \(scheme)",
                unit: .perSecond,
                higherIsBetter: true,
                pairedRatio: Sample(values: ratios).median
            )
        }
    }
}

/// The C source of ``LibcurlLoop``.
private let libcurlLoopSource = #"""
    /* curlloop URL SECONDS CONNECTIONS [-H header]... [-d bodyfile] [--cacert file]: libcurl round trips
     * on URL for SECONDS, CONNECTIONS at a time; prints "Requests/sec: N" like wrk; fails when an answer
     * is not HTTP 200. */
    #include <curl/curl.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <time.h>

    static size_t discard(char *data, size_t size, size_t count, void *user) {
        (void)data; (void)user;
        return size * count;
    }

    static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
    }

    int main(int argc, char **argv) {
        if (argc < 4) { fprintf(stderr, "usage: curlloop URL SECONDS CONNECTIONS [-H h]... [-d file] [--cacert f]\n"); return 64; }
        const char *url = argv[1];
        double seconds = atof(argv[2]);
        int connections = atoi(argv[3]);
        struct curl_slist *headers = NULL;
        char *body = NULL; long body_length = 0;
        const char *cacert = NULL;
        for (int i = 4; i + 1 < argc; i += 2) {
            if (strcmp(argv[i], "-H") == 0) headers = curl_slist_append(headers, argv[i + 1]);
            else if (strcmp(argv[i], "--cacert") == 0) cacert = argv[i + 1];
            else if (strcmp(argv[i], "-d") == 0) {
                FILE *file = fopen(argv[i + 1], "rb");
                if (!file) { perror(argv[i + 1]); return 1; }
                fseek(file, 0, SEEK_END); body_length = ftell(file); fseek(file, 0, SEEK_SET);
                body = malloc(body_length + 1);
                if (fread(body, 1, body_length, file) != (size_t)body_length) { fclose(file); return 1; }
                fclose(file);
            }
        }
        curl_global_init(CURL_GLOBAL_DEFAULT);
        CURL *easy[64];
        if (connections < 1 || connections > 64) return 64;
        for (int i = 0; i < connections; i++) {
            easy[i] = curl_easy_init();
            curl_easy_setopt(easy[i], CURLOPT_URL, url);
            curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, discard);
            curl_easy_setopt(easy[i], CURLOPT_HTTPHEADER, headers);
            if (cacert) curl_easy_setopt(easy[i], CURLOPT_CAINFO, cacert);
            if (body) {
                curl_easy_setopt(easy[i], CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(easy[i], CURLOPT_POSTFIELDSIZE, body_length);
            }
        }
        long done = 0, failed = 0;
        double start = now(), end = start + seconds;
        if (connections == 1) {
            while (now() < end) {
                long status = 0;
                if (curl_easy_perform(easy[0]) == CURLE_OK
                    && curl_easy_getinfo(easy[0], CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status == 200) done++;
                else failed++;
            }
        } else {
            CURLM *multi = curl_multi_init();
            for (int i = 0; i < connections; i++) curl_multi_add_handle(multi, easy[i]);
            int running = connections;
            while (running > 0) {
                curl_multi_perform(multi, &running);
                CURLMsg *message; int left;
                while ((message = curl_multi_info_read(multi, &left))) {
                    if (message->msg != CURLMSG_DONE) continue;
                    CURL *handle = message->easy_handle;
                    long status = 0;
                    if (message->data.result == CURLE_OK
                        && curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status == 200) done++;
                    else failed++;
                    curl_multi_remove_handle(multi, handle);
                    if (now() < end) { curl_multi_add_handle(multi, handle); running++; }
                }
                if (running > 0) curl_multi_poll(multi, NULL, 0, 1000, NULL);
            }
        }
        double elapsed = now() - start;
        printf("Requests/sec: %.2f\nfailed: %ld\n", done / elapsed, failed);
        return failed > 0 ? 1 : 0;
    }
    """#

/// Whether `wrk` can be run.
func wrkIsAvailable(_ harness: BenchHarness) -> Bool {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk")
        || (try? harness.runCommand("which", ["wrk"]).status) == 0
}

/// FMP DSS round trips against the emulator (``BenchEmulator``), beside `wrk` on the same routes in the same
/// run, over HTTP and then HTTPS: `signs()` sequential (wrk -c1) and 8 in flight (wrk -c8), and sign
/// (wrk -c1 with a POST script).
func runFMPBenchmarks(_ harness: BenchHarness) async throws {
    for tls in [false, true] { try await runFMPBenchmarks(harness, tls: tls) }
}

private func runFMPBenchmarks(_ harness: BenchHarness, tls: Bool) async throws {
    let scheme = tls ? "HTTPS" : "HTTP"
    let emulator = try BenchEmulator(tls: tls, scratch: harness.scratch, name: "fmp")
    defer { emulator.stop() }
    let (base, transport) = (emulator.base, emulator.transport)
    let client = FMPClient(
        configuration: .init(
            host: base,
            environment: StandardSeed.environment,
            project: StandardSeed.project,
            device: "bench-device"
        ),
        transport: transport
    )
    _ = try await client.auth(username: StandardSeed.username, password: Secret(StandardSeed.password))
    guard let token = await client.exportSession()?.token else { throw BenchError("FMP bench: no token after login") }
    let dssPassword = Secret(StandardSeed.dssPassword)
    let pin = Secret(StandardSeed.certificatePIN)
    @Sendable func sign() async throws {
        _ = try await client.sign(
            resource: StandardSeed.resource,
            table: StandardSeed.table,
            column: StandardSeed.column,
            hhiveID: StandardSeed.row,
            dssPassword: dssPassword,
            certificateID: StandardSeed.certificateID,
            certificatePIN: pin
        )
    }
    // A short history, so signs() carries a realistic body (3 signatures, ~5 KB of JSON).
    for _ in 0..<3 { try await sign() }

    let signsURL = base.absoluteString + "api/v1/dss/\(StandardSeed.environment)/\(StandardSeed.project)/signs/"
    let headers = ["Authorization: Bearer \(token)", "X-Device-Id: bench-device"]

    // Where the time goes: the bare transport on the same route, and JSON parsing of the body.
    let sequentialCount = 300
    guard let signsRequestURL = URL(string: signsURL) else { throw BenchError("FMP bench: bad URL \(signsURL)") }
    var bare = HTTPRequest(url: signsRequestURL)
    bare.setHeader("Authorization", "Bearer \(token)")
    bare.setHeader("X-Device-Id", "bench-device")
    let bareRate = try await harness.time { for _ in 0..<sequentialCount { _ = try await transport.send(bare) } }.rate(
        count: Double(sequentialCount)
    )
    let bodyBytes = try await transport.send(bare).body
    let parseRate = try await harness.time { for _ in 0..<sequentialCount { _ = try JSONValue(parsing: bodyBytes) } }
        .rate(count: Double(sequentialCount))
    harness.note(
        String(
            format:
                "FMP %@: bare CurlTransport GET signs/ %.0f/s sequential; JSONValue parse of its %d-byte body %.0f/s",
            scheme,
            bareRate.median,
            bodyBytes.count,
            parseRate.median
        )
    )

    guard wrkIsAvailable(harness) else {
        harness.note("FMP \(scheme): wrk is not installed (apt-get install wrk); no client rows")
        return
    }
    // signs() (sequential, then 8 in flight on one client) before any sign round adds signatures,
    // so both sides list the same 3.
    let signsCall: @Sendable () async throws -> Void = { _ = try await client.signs() }
    let executor = benchExecutor(transport)
    let sequential = try await interleaved(harness, count: sequentialCount, executor: executor, signsCall) {
        try wrkOnce(harness, connections: 1, url: signsURL, headers: headers)
    }
    let parallel = try await interleaved(harness, count: 800, inFlight: 8, executor: executor, signsCall) {
        try wrkOnce(harness, connections: 8, url: signsURL, headers: headers)
    }
    harness.record(
        "FMP signs() round trips, sequential, \(scheme)",
        ours: sequential.ours,
        baseline: sequential.wrk,
        baselineName: "wrk -t1 -c1 GET signs/ \(scheme)",
        unit: .perSecond,
        goal: remoteRoundTripGoal,
        higherIsBetter: true,
        pairedRatio: sequential.pairedRatio
    )
    harness.record(
        "FMP signs() round trips, 8 in flight, \(scheme)",
        ours: parallel.ours,
        baseline: parallel.wrk,
        baselineName: "wrk -t1 -c8 GET signs/ \(scheme)",
        unit: .perSecond,
        goal: remoteRoundTripGoal,
        higherIsBetter: true,
        pairedRatio: parallel.pairedRatio
    )

    try await recordOptInRow(
        harness,
        transport,
        name: "FMP signs() round trips, sequential, \(scheme), caller on the transport's taskExecutor (opt-in)",
        baselineName: "wrk -t1 -c1 GET signs/ \(scheme)",
        signsCall
    ) { try wrkOnce(harness, connections: 1, url: signsURL, headers: headers) }

    if let libcurl = LibcurlLoop.build(harness) {
        try libcurl.recordRows(
            harness,
            route: "signs/",
            url: signsURL,
            headers: headers,
            caFile: emulator.caFile,
            scheme: scheme
        )
    }

    let body =
        #"{"resource":"GetBudgetPlanning","table":"ПланированиеБюджета","params":{},"column":"Номер","hhive_id":1,"password":"Saprun123","certificate_id":12831,"certificate_pin":"123"}"#
    let script = harness.scratch.appendingPathComponent("fmp-sign.lua")
    let lua = "wrk.method = \"POST\"\nwrk.body = [[\(body)]]\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
    try Data(lua.utf8).write(to: script)
    let signURL = base.absoluteString + "api/v1/dss/\(StandardSeed.environment)/\(StandardSeed.project)/sign/"
    // Where the time goes: the same POST over the bare transport.
    guard let signRequestURL = URL(string: signURL) else { throw BenchError("FMP bench: bad URL \(signURL)") }
    var bareSign = HTTPRequest(method: .post, url: signRequestURL, body: Array(body.utf8))
    bareSign.setHeader("Content-Type", "application/json")
    bareSign.setHeader("Authorization", "Bearer \(token)")
    bareSign.setHeader("X-Device-Id", "bench-device")
    let bareSignRate = try await harness.time { for _ in 0..<100 { _ = try await transport.send(bareSign) } }.rate(
        count: 100
    )
    let clientSignRate = try await harness.time { for _ in 0..<100 { try await sign() } }.rate(count: 100)
    harness.note(
        String(
            format: "FMP %@: bare CurlTransport POST sign/ %.0f/s, FMPClient.sign %.0f/s sequential (same moment)",
            scheme,
            bareSignRate.median,
            clientSignRate.median
        )
    )
    let signs = try await interleaved(harness, count: 100, executor: executor, sign) {
        try wrkOnce(harness, connections: 1, url: signURL, headers: headers, script: script.path)
    }
    harness.record(
        "FMP sign round trips (CAdES-BES P-256), sequential, \(scheme)",
        ours: signs.ours,
        baseline: signs.wrk,
        baselineName: "wrk -t1 -c1 POST sign/ \(scheme)",
        unit: .perSecond,
        goal: remoteRoundTripGoal,
        higherIsBetter: true,
        pairedRatio: signs.pairedRatio
    )
    harness.note(
        "FMP \(scheme): emulator \(emulator.placement) (libmicrohttpd, thread per connection\(tls ? ", GnuTLS" : "")) "
            + "on \(base.absoluteString); client = FMPClient over CurlTransport; signs() lists 3 signatures (~9 KB); "
            + benchExecutorNote(transport)
    )
}

/// `CERTSIGN_BENCH_PROFILE=fmp-signs|fmp-sign|fmp-bare|fmp-json|fmp-decode [CERTSIGN_BENCH_PROFILE_TLS=1]
/// [CERTSIGN_BENCH_PROFILE_IN_FLIGHT=8] [CERTSIGN_BENCH_PROFILE_COUNT=N] certsign-bench`: N FMP
/// round trips (the client's `signs()`, its `sign`, or the bare transport's GET signs/) against the
/// in-process emulator, for perf / strace to look at; or, with no network, N parses of the signs/
/// body (`fmp-json`) or parses plus the client's decoding of it (`fmp-decode`). `fmp-serve` runs
/// only the emulator for N seconds and prints the signs/ URL and a token; `CERTSIGN_BENCH_PROFILE_URL`
/// (its base URL, HTTP) points the other loops at it instead of an emulator in their own process.
/// `CERTSIGN_BENCH_PROFILE_EXECUTOR=1` runs the loops on the transport's thread (`taskExecutor`);
/// `=op` runs each operation alone there (`withTaskExecutorPreference` around each call: a hop in and
/// out per operation). Without a URL the emulator runs in a process of its own (``BenchEmulator``),
/// which `perf stat` counts too unless pointed at the client's process only.
/// - Returns: false when `name` is not one of these profiles.
func runFMPProfileLoop(_ name: String, count: Int) async throws -> Bool {
    guard ["fmp-signs", "fmp-sign", "fmp-bare", "fmp-json", "fmp-decode", "fmp-serve"].contains(name) else {
        return false
    }
    let environment = ProcessInfo.processInfo.environment
    let tls = environment["CERTSIGN_BENCH_PROFILE_TLS"] == "1"
    let inFlight = max(1, environment["CERTSIGN_BENCH_PROFILE_IN_FLIGHT"].flatMap(Int.init) ?? 1)
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("certsign-profile-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    // An emulator in another process (a `fmp-serve` run), so that the client's process holds the
    // client alone, as wrk's does.
    let external = environment["CERTSIGN_BENCH_PROFILE_URL"].flatMap { URL(string: $0) }
    let emulator: BenchEmulator?
    let base: URL
    let transport: CurlTransport
    if let external {
        (emulator, base, transport) = (nil, external, CurlTransport())
    } else {
        let started = try BenchEmulator(tls: tls, scratch: scratch, name: "fmp")
        (emulator, base, transport) = (started, started.base, started.transport)
    }
    defer { emulator?.stop() }
    let client = FMPClient(
        configuration: .init(
            host: base,
            environment: StandardSeed.environment,
            project: StandardSeed.project,
            device: "bench-device"
        ),
        transport: transport
    )
    _ = try await client.auth(username: StandardSeed.username, password: Secret(StandardSeed.password))
    guard let token = await client.exportSession()?.token else { throw BenchError("FMP profile: no token") }
    let dssPassword = Secret(StandardSeed.dssPassword)
    let pin = Secret(StandardSeed.certificatePIN)
    @Sendable func sign() async throws {
        _ = try await client.sign(
            resource: StandardSeed.resource,
            table: StandardSeed.table,
            column: StandardSeed.column,
            hhiveID: StandardSeed.row,
            dssPassword: dssPassword,
            certificateID: StandardSeed.certificateID,
            certificatePIN: pin
        )
    }
    // The bench's history of 3 signatures (an external emulator keeps it from an earlier run).
    let history = external == nil ? 0 : try await client.signs().value.count
    for _ in history..<max(history, 3) { try await sign() }
    let signsURL = base.absoluteString + "api/v1/dss/\(StandardSeed.environment)/\(StandardSeed.project)/signs/"
    if name == "fmp-serve" {
        // Serves for COUNT seconds; prints the signs/ URL and a token for wrk and other clients.
        FileHandle.standardOutput.write(Data("\(signsURL) \(token)\n".utf8))
        try await Task.sleep(for: .seconds(count))
        return true
    }
    guard let url = URL(string: signsURL) else { throw BenchError("FMP profile: bad URL \(signsURL)") }
    var bare = HTTPRequest(url: url)
    bare.setHeader("Authorization", "Bearer \(token)")
    bare.setHeader("X-Device-Id", "bench-device")
    let plain: @Sendable () async throws -> Void
    let signsBody = try await transport.send(bare).body
    switch name {
    case "fmp-json": plain = { _ = try JSONValue(parsing: signsBody) }
    case "fmp-decode":
        plain = { _ = try FMPClient.decodeSigns(try JSONValue(parsing: signsBody)) }
    case "fmp-signs": plain = { _ = try await client.signs() }
    case "fmp-sign": plain = sign
    default: plain = { [bare] in _ = try await transport.send(bare) }
    }
    // CERTSIGN_BENCH_PROFILE_EXECUTOR=op: each operation alone on the transport's thread (a hop in
    // and out per operation).
    let perOperation = environment["CERTSIGN_BENCH_PROFILE_EXECUTOR"] == "op"
    let loopExecutor = transport.taskExecutor
    let operation: @Sendable () async throws -> Void = {
        if perOperation {
            try await withTaskExecutorPreference(loopExecutor) { () async throws -> Void in try await plain() }
        } else {
            try await plain()
        }
    }
    // CERTSIGN_BENCH_PROFILE_EXECUTOR=1: the loops run on the transport's own thread.
    let executor = environment["CERTSIGN_BENCH_PROFILE_EXECUTOR"] == "1" ? transport.taskExecutor : nil
    let start = DispatchTime.now().uptimeNanoseconds
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<inFlight {
            group.addTask(executorPreference: executor) { for _ in 0..<(count / inFlight) { try await operation() } }
        }
        try await group.waitForAll()
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    print(
        "\(name) \(tls ? "HTTPS" : "HTTP") \(inFlight) in flight: \(count) round trips, "
            + "\(String(format: "%.0f", Double(count) / seconds))/s"
    )
    return true
}
