import Foundation

/// What one `certsign-bench` run measures and how: every setting is a command-line flag (the bench reads
/// no environment variable), and the flags a run was given are written into BENCHMARKS.md beside its
/// tables, so a table says how it was made.
///
/// `certsign-bench [RUNS] [--write FILE] [--suites LIST] [SIZES…] [--executor pool|transport]
/// [--emulator process|in-process] [--profile NAME [--count N] [--batch N] [--tls] [--in-flight N]
/// [--url URL] [--executor pool|transport|op]]`
struct BenchOptions: Sendable {
    /// Every suite, in the order `make bench` runs them.
    static let allSuites = [
        "signing", "pkcs12", "pkcs12-store", "fmp", "cryptopro", "csc", "pkcs11", "pdf", "gost", "verify", "vault",
        "journal",
        "longterm", "pdf-revisions", "verify-longterm", "pdf-appearance", "trusted-lists",
        "two-phase",
    ]

    /// Rounds a figure (the positional argument).
    var runs = 5
    /// `--write FILE`: BENCHMARKS.md, whose tables of the suites that ran are replaced.
    var write: URL?
    /// `--suites a,b`: the suites to run.
    var suites = Set(allSuites)
    /// `--signing-parts big,batch,cli`: the parts of the signing suite.
    var signingParts: Set<String> = ["big", "batch", "cli"]
    /// `--big-mib N`: the big file's size (signing suite).
    var bigMiB = 1024
    /// `--cli-documents N`: documents of the CLI batch row.
    var cliDocuments = 2000
    /// `--pdf-mib N`: the large PDF's size (pdf suite).
    var pdfMiB = 64
    /// `--verify-documents N` and `--verify-pdfs N`: the verify suite's counts.
    var verifyDocuments = 2000
    var verifyPDFs = 200
    /// `--appearance-pdfs N`: the PDFs the pdf-appearance suite signs.
    var appearancePDFs = 200
    /// `--two-phase-documents N` and `--two-phase-pdfs N`: the two-phase suite's counts.
    var twoPhaseDocuments = 2000
    var twoPhasePDFs = 200
    /// `--executor`: where our client rounds run: `pool` (the shared cooperative pool, the default),
    /// `transport` (the transport's own thread), or, for a profile loop only, `op` (each operation alone
    /// on the transport's thread).
    var executor = "pool"
    /// `--emulator in-process`: the remote rows' emulator in the bench's process instead of its own.
    var emulatorInProcess = false
    /// `--profile NAME`: a fixed loop for profilers instead of the tables (see ``runProfileLoop(_:)``).
    var profile: String?
    /// `--count N`: a profile loop's operations (or `fmp-serve`'s seconds).
    var count = 500
    /// `--batch N`: a batch profile's batch size (default: all `--count` documents at once).
    var batch: Int?
    /// `--tls`: a profile loop (or the emulator process) over HTTPS.
    var tls = false
    /// `--in-flight N`: a profile loop's concurrent operations.
    var inFlight = 1
    /// `--url URL`: a profile loop against an emulator already running there (`--profile fmp-serve`).
    var url: URL?
    /// Set by the bench for its own child processes: `--signing-child FILE`, `--pdf-child FILE`
    /// (sign FILE once and report), `--ca-out FILE` (the emulator process writes its CA there).
    var signingChild: String?
    var pdfChild: String?
    var caOut: String?
    /// The flags as given (for BENCHMARKS.md).
    var arguments: [String] = []

    /// Why the command line could not be read.
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    private typealias Setter = @Sendable (inout BenchOptions, String) throws -> Void

    private static let valueFlags: [String: Setter] = [
        "--write": { $0.write = URL(fileURLWithPath: $1) },
        "--suites": { $0.suites = try list($1, allowed: allSuites) },
        "--signing-parts": { $0.signingParts = try list($1, allowed: ["big", "batch", "cli"]) },
        "--big-mib": { $0.bigMiB = try number($1) },
        "--cli-documents": { $0.cliDocuments = try number($1) },
        "--pdf-mib": { $0.pdfMiB = try number($1) },
        "--verify-documents": { $0.verifyDocuments = try number($1) },
        "--verify-pdfs": { $0.verifyPDFs = try number($1) },
        "--appearance-pdfs": { $0.appearancePDFs = try number($1) },
        "--two-phase-documents": { $0.twoPhaseDocuments = try number($1) },
        "--two-phase-pdfs": { $0.twoPhasePDFs = try number($1) },
        "--executor": { $0.executor = try choice($1, ["pool", "transport", "op"]) },
        "--emulator": { $0.emulatorInProcess = try choice($1, ["process", "in-process"]) == "in-process" },
        "--profile": { $0.profile = $1 },
        "--count": { $0.count = try number($1) },
        "--batch": { $0.batch = try number($1) },
        "--in-flight": { $0.inFlight = try number($1) },
        "--url": {
            guard let url = URL(string: $1), url.scheme != nil else {
                throw UsageError(description: "--url: not a URL: \($1)")
            }
            $0.url = url
        },
        "--signing-child": { $0.signingChild = $1 },
        "--pdf-child": { $0.pdfChild = $1 },
        "--ca-out": { $0.caOut = $1 },
    ]

    /// The usage line printed on a bad command line.
    static let usage = """
        usage: certsign-bench [RUNS] [--write FILE] [--suites \(allSuites.joined(separator: ","))]
               [--signing-parts big,batch,cli] [--big-mib N] [--cli-documents N] [--pdf-mib N]
               [--verify-documents N] [--verify-pdfs N] [--appearance-pdfs N] [--two-phase-documents N]
               [--two-phase-pdfs N] [--executor pool|transport]
               [--emulator process|in-process]
               certsign-bench --profile NAME [--count N] [--batch N] [--tls] [--in-flight N] [--url URL]
               [--executor pool|transport|op]
        """

    /// Reads the command line (without the program name).
    static func parse(_ arguments: [String]) throws -> BenchOptions {
        var options = BenchOptions(arguments: arguments)
        var index = 0
        while index < arguments.count {
            var flag = arguments[index]
            var value: String?
            if let equals = flag.firstIndex(of: "="), flag.hasPrefix("--") {
                value = String(flag[flag.index(after: equals)...])
                flag = String(flag[..<equals])
            }
            index += 1
            if flag == "--tls" {
                options.tls = true
            } else if let setter = valueFlags[flag] {
                if value == nil {
                    guard index < arguments.count else { throw UsageError(description: "\(flag) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                try setter(&options, value ?? "")
            } else if let runs = Int(flag), runs > 0, index == 1 {
                options.runs = runs
            } else {
                throw UsageError(description: "unknown argument '\(flag)'")
            }
        }
        return options
    }

    /// The command as it was run, for BENCHMARKS.md: without `--write FILE` (a path on the machine that
    /// ran it, and the file the line is written into).
    var commandLine: String {
        var shown: [String] = []
        var skipNext = false
        for argument in arguments {
            if skipNext {
                skipNext = false
            } else if argument == "--write" {
                skipNext = true
            } else if !argument.hasPrefix("--write=") {
                shown.append(argument)
            }
        }
        return (["certsign-bench"] + shown).joined(separator: " ")
    }

    private static func number(_ text: String) throws -> Int {
        guard let value = Int(text), value > 0 else { throw UsageError(description: "not a positive number: \(text)") }
        return value
    }

    private static func choice(_ text: String, _ allowed: [String]) throws -> String {
        guard allowed.contains(text) else {
            throw UsageError(description: "'\(text)' is not one of \(allowed.joined(separator: ", "))")
        }
        return text
    }

    private static func list(_ text: String, allowed: [String]) throws -> Set<String> {
        let items = text.split(separator: ",").map(String.init)
        for item in items where !allowed.contains(item) {
            throw UsageError(description: "unknown '\(item)' (one of \(allowed.joined(separator: ", ")))")
        }
        return Set(items)
    }
}
