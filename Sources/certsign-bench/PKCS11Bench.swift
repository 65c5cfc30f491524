import CertificateProviders
import Foundation
import PKCS11Provider
import Signing

/// PKCS#11 on SoftHSM2: signatures per second through the provider (pool of sessions, DigestInfo /
/// DER encoding, SigningKey) beside python-pkcs11's raw `C_Sign` rate on the same key, in the same run.
func runPKCS11Benchmarks(_ harness: BenchHarness) async throws {
    let token = try BenchToken(harness)
    try token.makeKeys()
    for (label, name) in [("rsakey", "RSA-2048, PKCS#1 v1.5"), ("eckey", "EC P-256, ECDSA")] {
        try await measureKey(harness, token, label: label, name: name)
    }
    harness.note(
        "pkcs11: SoftHSM2 \(BenchToken.module); the provider hashes in-process and signs with CKM_RSA_PKCS over a "
            + "DigestInfo / CKM_ECDSA; python-pkcs11 uses CKM_SHA256_RSA_PKCS / CKM_ECDSA on one session"
    )
}

/// A SoftHSM2 token in the scratch directory, with an RSA and an EC key and their certificates, made by
/// softhsm2-util, pkcs11-tool and openssl.
private struct BenchToken {
    static let module = "/usr/lib/softhsm/libsofthsm2.so"
    let harness: BenchHarness
    let directory: URL
    let pin = "1234"
    let environment: [String: String]

    init(_ harness: BenchHarness) throws {
        guard FileManager.default.fileExists(atPath: Self.module) else {
            throw BenchError("SoftHSM2 is not installed (\(Self.module))")
        }
        self.harness = harness
        directory = harness.scratch.appendingPathComponent("pkcs11", isDirectory: true)
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("tokens"),
            withIntermediateDirectories: true
        )
        let config = directory.appendingPathComponent("softhsm2.conf").path
        let tokens = directory.appendingPathComponent("tokens").path
        try "directories.tokendir = \(tokens)\nobjectstore.backend = file\nlog.level = ERROR\n".write(
            toFile: config,
            atomically: true,
            encoding: .utf8
        )
        // SoftHSM reads this at C_Initialize, which happens once in this process: set it before.
        setenv("SOFTHSM2_CONF", config, 1)
        environment = ["SOFTHSM2_CONF": config, "PIN": pin]
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Runs a tool with the token's environment; its output.
    func run(_ tool: String, _ arguments: [String], extra: [String: String] = [:]) throws -> String {
        let result = try harness.runCommand(tool, arguments, environment: environment.merging(extra) { _, new in new })
        guard result.status == 0 else {
            throw BenchError("\(tool) \(arguments.prefix(3).joined(separator: " ")) failed: \(result.error)")
        }
        return result.output
    }

    /// The token, a CA, and per key (`rsakey` id 01, `eckey` id 02) the key pair and its certificate.
    func makeKeys() throws {
        _ = try run("softhsm2-util", ["--init-token", "--free", "--label", "bench", "--pin", pin, "--so-pin", "5678"])
        _ = try run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                path("ca.key"), "-out", path("ca.pem"), "-subj", "/CN=Bench Token CA", "-days", "30",
            ]
        )
        let token = ["--module", Self.module, "--token-label", "bench"]
        for (id, label, type) in [("01", "rsakey", "rsa:2048"), ("02", "eckey", "EC:prime256v1")] {
            let object = ["--id", id, "--label", label]
            _ = try run(
                "pkcs11-tool",
                token + ["--login", "--pin", "env:PIN", "--keypairgen", "--key-type", type] + object
            )
            _ = try run(
                "pkcs11-tool",
                token + ["--read-object", "--type", "pubkey", "--id", id, "-o", path("\(id).pub")]
            )
            _ = try run(
                "openssl",
                [
                    "x509", "-new", "-subj", "/CN=Bench \(label)", "-force_pubkey", path("\(id).pub"), "-keyform",
                    "DER", "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-days", "30", "-outform", "DER", "-out",
                    path("\(id).der"),
                ]
            )
            _ = try run(
                "pkcs11-tool",
                token + ["--login", "--pin", "env:PIN", "--write-object", path("\(id).der"), "--type", "cert"] + object
            )
        }
    }
}

/// One key's rows: the provider's signatures against python-pkcs11's raw `C_Sign` on the same key, and
/// (RSA) whole CAdES-BES signatures from 8 tasks.
private func measureKey(_ harness: BenchHarness, _ token: BenchToken, label: String, name: String) async throws {
    let signatures = 200
    let document = Array(repeating: UInt8(0x61), count: 4096)
    let provider = try PKCS11CertificateProvider(parameters: [
        PKCS11CertificateProvider.ParameterKey.module: .string(BenchToken.module)
    ])
    defer { try? provider.deleteStoredCertificate() }
    let identity = try await provider.initialize(options: [
        PKCS11CertificateProvider.ParameterKey.uri: .string("pkcs11:token=bench;object=\(label)"),
        PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret(token.pin)),
    ])
    let ours = try await harness.time {
        for _ in 0..<signatures {
            _ = try await identity.key.signature(
                for: document,
                digestAlgorithm: .sha256,
                scheme: identity.key.defaultScheme
            )
        }
    }
    let pythonScript = """
        import os, sys, time, hashlib, pkcs11
        from pkcs11 import ObjectClass, Mechanism
        token = pkcs11.lib(os.environ["MODULE"]).get_token(token_label="bench")
        n = int(os.environ["N"]); runs = int(os.environ["RUNS"])
        data = b"a" * 4096
        with token.open(user_pin=os.environ["PIN"]) as session:
            key = session.get_key(object_class=ObjectClass.PRIVATE_KEY, label=os.environ["LABEL"])
            mechanism = Mechanism.SHA256_RSA_PKCS if os.environ["LABEL"] == "rsakey" else Mechanism.ECDSA
            for run in range(runs + 1):
                start = time.perf_counter()
                for _ in range(n):
                    payload = data if mechanism == Mechanism.SHA256_RSA_PKCS else hashlib.sha256(data).digest()
                    key.sign(payload, mechanism=mechanism)
                if run > 0: print(time.perf_counter() - start)
        """
    let output = try token.run(
        "python3",
        ["-c", pythonScript],
        extra: [
            "MODULE": BenchToken.module, "LABEL": label, "N": String(signatures), "RUNS": String(harness.repetitions),
        ]
    )
    let pythonRuns = output.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    guard !pythonRuns.isEmpty else { throw BenchError("python-pkcs11 printed no timings: \(output)") }
    let baseline = Sample(values: pythonRuns).rate(count: Double(signatures))
    harness.record(
        "PKCS#11 sign \(signatures)×, provider (\(name))",
        ours: ours.rate(count: Double(signatures)),
        baseline: baseline,
        baselineName: "python-pkcs11 raw C_Sign, same key",
        unit: .perSecond,
        goal: 0.8,
        higherIsBetter: true
    )
    guard label == "rsakey" else { return }
    // Whole CAdES-BES signatures (CMS built here, signed on the token), 8 tasks at once.
    let concurrent = try await harness.time {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<(signatures / 8) {
                        _ = try await CMSSigner.sign(content: document, identity: identity, format: .cadesBES)
                    }
                }
            }
            try await group.waitForAll()
        }
    }
    harness.record(
        "PKCS#11 CAdES-BES \(signatures)×, 8 tasks (\(name))",
        ours: concurrent.rate(count: Double(signatures)),
        baseline: baseline,
        baselineName: "python-pkcs11 raw C_Sign, same key",
        unit: .perSecond,
        goal: 0.5,
        higherIsBetter: true
    )
}
