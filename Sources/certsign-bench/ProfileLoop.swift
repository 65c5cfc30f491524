import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing

/// `CERTSIGN_BENCH_PROFILE=cms-rsa|cms-p256 [CERTSIGN_BENCH_PROFILE_COUNT=N] certsign-bench`: signs
/// N 1 KiB documents with CMSSigner in a loop, for a profiler to look at.
func runProfileLoop(_ name: String) async throws {
    let count = ProcessInfo.processInfo.environment["CERTSIGN_BENCH_PROFILE_COUNT"].flatMap(Int.init) ?? 500
    if try await runFMPProfileLoop(name, count: count) { return }
    let keyType: LocalSigningKey.GenerationParameters
    switch name {
    case "cms-rsa": keyType = .rsa2048
    case "cms-p256": keyType = .p256
    default:
        throw BenchError(
            "unknown profile '\(name)' (cms-rsa, cms-p256, fmp-signs, fmp-sign, fmp-bare, fmp-json, fmp-decode)"
        )
    }
    let identity = try TestPKI().issueLeaf(subject: "CN=Profile", keyType: keyType)
    let document = [UInt8](repeating: 0x41, count: 1024)
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<count { _ = try await CMSSigner.sign(content: document, identity: identity) }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    print("\(name): \(count) signatures, \(String(format: "%.0f", Double(count) / seconds))/s")
}
