import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing

/// The GOST figure: CAdES-BES signing of 1 KiB documents with a GOST R 34.10-2012
/// 256-bit key (Streebog-256) through the gost engine.
///
/// `openssl speed` (OpenSSL 3.0, with or without `-engine gost`) has no GOST signature test, and
/// `openssl dgst -sign` signs one file per process, so the nearest openssl figure is its single-core
/// ECDSA P-256 sign rate: a signature of the same size on a 256-bit prime curve. The two are
/// measured alternately in the same run. Skipped with a note when the engine is not installed.
func runGOSTBenchmarks(_ harness: BenchHarness) async throws {
    guard GOSTEngine.isAvailable else {
        harness.note("GOST: the gost engine (\(GOSTEngine.packageName)) is not installed; no GOST figure")
        return
    }
    let pki = try TestPKI(rootSubject: "CN=Bench GOST Root", keyType: .gost256)
    let identity = try pki.issueLeaf(subject: "CN=Bench GOST-256 Signer", keyType: .gost256)
    let documents = (0..<64).map { index in (0..<1024).map { UInt8(truncatingIfNeeded: $0 &+ index) } }
    let count = 500
    func rate() async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        for index in 0..<count {
            _ = try await CMSSigner.sign(content: documents[index % documents.count], identity: identity)
        }
        return Double(count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    _ = try await rate()
    var ours: [Double] = []
    var baseline: [Double] = []
    for _ in 0..<max(5, harness.repetitions) {
        baseline.append(try SigningBench.opensslSignRate(harness, "ecdsap256"))
        ours.append(try await rate())
    }
    harness.record(
        "CMSSigner.sign 1 KiB GOST-256 (CAdES, Streebog-256)",
        ours: Sample(values: ours),
        baseline: Sample(values: baseline),
        baselineName: "openssl speed ecdsap256 sign/s (no GOST in openssl speed)",
        unit: .perSecond,
        higherIsBetter: true
    )
}
