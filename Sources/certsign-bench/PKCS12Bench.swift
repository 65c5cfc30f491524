internal import COpenSSL
import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider

/// PKCS#12: opening a file against OpenSSL's own parse (the `openssl pkcs12` process, and
/// `PKCS12_parse` in this process), and signing many documents with one unlocked identity.
func runPKCS12Benchmarks(_ harness: BenchHarness) async throws {
    let directory = harness.scratch.appendingPathComponent("pkcs12", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let password = "bench-пароль"
    let environment = ["P12PASS": password]
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    // A key and certificate made by openssl, exported by openssl: default (PBES2, 2048 iterations) and -legacy.
    _ = try harness.runCommand(
        "openssl",
        [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("key.pem"), "-out", path("cert.pem"),
            "-subj", "/CN=PKCS12 Bench", "-days", "30",
        ]
    )
    for (name, extra) in [("default.p12", [String]()), ("legacy.p12", ["-legacy"])] {
        let result = try harness.runCommand(
            "openssl",
            [
                "pkcs12", "-export", "-in", path("cert.pem"), "-inkey", path("key.pem"),
                "-out", path(name), "-passout", "env:P12PASS",
            ] + extra,
            environment: environment
        )
        guard result.status == 0 else { throw BenchError("openssl pkcs12 -export failed: \(result.error)") }
    }

    let secret = Secret(password)
    for (name, label, flags) in [
        ("default.p12", "openssl default, PBES2 2048 it.", [String]()),
        ("legacy.p12", "openssl -legacy, RC2/3DES", ["-legacy"]),
    ] {
        try await measureOpening(harness, file: path(name), label: label, flags: flags, password: password)
    }
    try await measureSigning(harness, file: path("default.p12"), store: path("store"), secret: secret)
}

/// Opening one file: ours against the `openssl pkcs12` process, and against `PKCS12_parse` in this
/// process.
private func measureOpening(
    _ harness: BenchHarness,
    file: String,
    label: String,
    flags: [String],
    password: String
) async throws {
    let secret = Secret(password)
    let environment = ["P12PASS": password]
    let ours = try await harness.time { _ = try PKCS12File(contentsOf: file, password: secret).identity() }
    let process = try harness.timeCommand(
        "openssl",
        ["pkcs12", "-in", file, "-noout", "-passin", "env:P12PASS"] + flags,
        environment: environment
    )
    harness.record(
        "PKCS#12 open (\(label))",
        ours: ours,
        baseline: process,
        baselineName: "openssl pkcs12 -noout (process)",
        unit: .seconds,
        goal: 1 / 1.5,
        higherIsBetter: false
    )
    // In-process: alternate the two so that load from other processes hits both alike.
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    var oursValues: [Double] = []
    var baselineValues: [Double] = []
    for index in 0...(harness.repetitions * 4) {
        let start = DispatchTime.now().uptimeNanoseconds
        _ = try PKCS12File(data: bytes, password: secret).identity()
        let middle = DispatchTime.now().uptimeNanoseconds
        try openSSLParse(bytes, password: password)
        let end = DispatchTime.now().uptimeNanoseconds
        guard index > 0 else { continue }  // warm-up
        oursValues.append(Double(middle - start) / 1e9)
        baselineValues.append(Double(end - middle) / 1e9)
    }
    harness.record(
        "PKCS#12 open from memory (\(label))",
        ours: Sample(values: oursValues),
        baseline: Sample(values: baselineValues),
        baselineName: "PKCS12_parse in-process (interleaved)",
        unit: .seconds,
        goal: 1 / 1.5,
        higherIsBetter: false
    )
}

/// Signing N documents through the provider (the identity is unlocked once and kept in memory) against
/// reopening the stored PKCS#12 per document.
private func measureSigning(_ harness: BenchHarness, file: String, store: String, secret: Secret) async throws {
    let documents = 200
    let provider = try PKCS12CertificateProvider(parameters: [
        PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(store)
    ])
    _ = try await provider.initialize(options: [
        PKCS12CertificateProvider.ParameterKey.file: .string(file),
        PKCS12CertificateProvider.ParameterKey.password: .secret(secret),
    ])
    let document = Array(repeating: UInt8(0x61), count: 4096)
    let opensBefore = provider.pkcs12OpenCount
    let cached = try await harness.time(warmUp: false) {
        for _ in 0..<documents {
            guard let identity = try provider.storedCertificate() else { throw BenchError("nothing stored") }
            _ = try await identity.key.signature(
                for: document,
                digestAlgorithm: .sha256,
                scheme: identity.key.defaultScheme
            )
        }
    }
    let opens = provider.pkcs12OpenCount - opensBefore
    let storedBytes = try provider.store.pkcs12Data(alias: PKCS12CertificateProvider.defaultAlias) ?? []
    // A store entry costs 600 000-iteration derivations to open: reopening for a few documents
    // gives the per-document rate without minutes of PBKDF2.
    let reopened = 3
    let reopening = try await harness.time(warmUp: false) {
        for _ in 0..<reopened {
            let identity = try PKCS12File(data: storedBytes, password: secret).identity()
            _ = try await identity.key.signature(
                for: document,
                digestAlgorithm: .sha256,
                scheme: identity.key.defaultScheme
            )
        }
    }
    harness.record(
        "sign \(documents) docs, provider (RSA-2048)",
        ours: cached.rate(count: Double(documents)),
        baseline: reopening.rate(count: Double(reopened)),
        baselineName: "reopen the stored PKCS#12 per document",
        unit: .perSecond,
        goal: 2,
        higherIsBetter: true
    )
    harness.note(
        "pkcs12: initialize() opened the PKCS#12 \(opensBefore) time(s); the \(documents * harness.repetitions) "
            + "signatures after it "
            + "(storedCertificate() + sign each) opened it \(opens) more time(s); "
            + String(format: "%.3f ms per signature", cached.median / Double(documents) * 1000)
    )
}

/// OpenSSL's own one-call parse, for the in-process baseline.
private func openSSLParse(_ bytes: [UInt8], password: String) throws {
    let p12 = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
        var cursor = buffer.baseAddress
        return d2i_PKCS12(nil, &cursor, buffer.count)
    }
    guard let p12 else { throw BenchError("d2i_PKCS12 failed") }
    defer { PKCS12_free(p12) }
    var key: OpaquePointer?
    var certificate: OpaquePointer?
    guard PKCS12_parse(p12, password, &key, &certificate, nil) == 1 else { throw BenchError("PKCS12_parse failed") }
    EVP_PKEY_free(key)
    X509_free(certificate)
}

/// One unlock of an identity-store entry at the store's iteration count
/// (``PKCS12IdentityStore/entryEncoding``) against `openssl pkcs12` opening the same entry.
/// `--suites pkcs12-store` runs only this row.
func runPKCS12StoreUnlockBenchmark(_ harness: BenchHarness) async throws {
    do {
        let directory = harness.scratch.appendingPathComponent("pkcs12-store", isDirectory: true)
        let password = "bench-store-пароль"
        let store = PKCS12IdentityStore(directory: directory)
        let identity = try TestPKI(rootSubject: "CN=Bench Root").issueLeaf(subject: "CN=Store Bench", keyType: .rsa2048)
        try store.import(identity, alias: "bench", storePassword: Secret(password))
        let entry = directory.appendingPathComponent("identities/bench/identity.p12").path
        let ours = try await harness.time { _ = try store.identity(alias: "bench", password: Secret(password)) }
        // `-nodes -out /dev/null` decrypts the key as the unlock does (`-noout` only checks a MAC,
        // which store entries no longer have).
        let openssl = try harness.timeCommand(
            "openssl",
            ["pkcs12", "-in", entry, "-nodes", "-out", "/dev/null", "-passin", "env:P12PASS"],
            environment: ["P12PASS": password]
        )
        let iterations = PKCS12IdentityStore.entryEncoding.iterations
        harness.record(
            "unlock one store entry (PBKDF2-SHA256 \(iterations) it.)",
            ours: ours,
            baseline: openssl,
            baselineName: "openssl pkcs12 -nodes (process), same entry",
            unit: .seconds,
            goal: 1 / 1.5,
            higherIsBetter: false
        )
    } catch {
        harness.note("pkcs12-store benchmark could not run: \(error)")
    }
}
