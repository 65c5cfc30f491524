import Foundation

/// A plain C program on libcurl (an easy handle for one connection, a multi handle for more), built
/// with `cc` in the scratch directory when the bench runs: the baseline of the remote goal rows (our
/// client against libcurl itself on the same route). It ships nowhere.
struct LibcurlLoop {
    /// The built program.
    let path: String

    /// Builds the program, or notes why not (no `cc`, no libcurl headers) and returns nil.
    static func build(_ harness: BenchHarness) -> LibcurlLoop? {
        guard
            let path = harness.buildCProgram(
                "curlloop",
                source: libcurlLoopSource,
                libraries: ["-lcurl"],
                skipping: "C libcurl reference rows skipped"
            )
        else { return nil }
        harness.note(
            "remote baselines: a plain C program on libcurl (one easy handle for -c1, a multi handle with 8 "
                + "easy handles for -c8; same headers and body, answer discarded, HTTP 200 checked; it reports the "
                + "CPU time of its timed loop per request), built with cc at bench time"
        )
        return LibcurlLoop(path: path)
    }

    /// One run of one second on one route: its requests per second, and the CPU time (user and
    /// system) the program spent per request in its timed loop (set-up and connections before it
    /// left out), in microseconds.
    func once(
        _ harness: BenchHarness,
        connections: Int,
        route: RemoteRoute,
        bodyFile: String?,
        caFile: String?
    ) throws -> RoundResult {
        var arguments = [route.url, "1", String(connections)] + route.headers.flatMap { ["-H", $0] }
        if let bodyFile { arguments += ["-d", bodyFile, "-H", "Content-Type: application/json"] }
        if let caFile { arguments += ["--cacert", caFile] }
        let result = try harness.runCommand(path, arguments)
        func value(_ label: String) -> Double? {
            result.output.split(separator: "\n").first(where: { $0.hasPrefix(label) }).flatMap {
                Double($0.dropFirst(label.count).trimmingCharacters(in: .whitespaces))
            }
        }
        guard result.status == 0, let rate = value("Requests/sec:"), let cpu = value("CPU-us/request:") else {
            throw BenchError("the C libcurl loop failed on \(route.url): \(result.output) \(result.error)")
        }
        return RoundResult(rate: rate, cpuMicroseconds: cpu)
    }
}

extension BenchHarness {
    /// A C program built with `cc -O2` in the scratch directory (once per scratch directory): its path,
    /// or nil after noting `skipping` and why (no `cc`, missing headers).
    func buildCProgram(_ name: String, source: String, libraries: [String], skipping: String) -> String? {
        let sourceFile = scratch.appendingPathComponent(name + ".c")
        let program = scratch.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: program.path) { return program.path }
        do {
            try Data(source.utf8).write(to: sourceFile)
            let result = try runCommand("cc", ["-O2", "-o", program.path, sourceFile.path] + libraries)
            guard result.status == 0 else {
                note("\(skipping): cc failed: \(result.error.prefix(300))")
                return nil
            }
            return program.path
        } catch {
            note("\(skipping): \(error)")
            return nil
        }
    }
}

/// The C source of ``LibcurlLoop``.
private let libcurlLoopSource = #"""
    /* curlloop URL SECONDS CONNECTIONS [-H header]... [-d bodyfile] [--cacert file]: libcurl round trips
     * on URL for SECONDS, CONNECTIONS at a time; prints "Requests/sec: N" like wrk and the CPU time of
     * its timed loop per request ("CPU-us/request: N"); fails when an answer is not HTTP 200. */
    #include <curl/curl.h>
    #include <sys/resource.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <time.h>

    static size_t discard(char *data, size_t size, size_t count, void *user) {
        (void)data; (void)user;
        return size * count;
    }

    static double cpu(void) {
        struct rusage usage;
        getrusage(RUSAGE_SELF, &usage);
        return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
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
        double cpu_start = cpu(), start = now(), end = start + seconds;
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
        double elapsed = now() - start, cpu_used = cpu() - cpu_start;
        printf("Requests/sec: %.2f\nCPU-us/request: %.2f\nfailed: %ld\n", done / elapsed,
            done > 0 ? cpu_used * 1e6 / done : 0.0, failed);
        return failed > 0 ? 1 : 0;
    }
    """#
