import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import SignatureJournal
import Signing

/// `certsign-bench --profile cms-rsa|cms-p256 [--count N] [--batch N]`: signs
/// N 1 KiB documents with CMSSigner in a loop, for a profiler to look at; `batch-rsa|batch-p256`
/// signs them with one `SigningCoordinator.sign(documents:)` call (the bench's batch row).
/// `emulator-serve` is the emulator process of the remote rows (``BenchEmulator``).
func runProfileLoop(_ name: String, options: BenchOptions) async throws {
    if name == "emulator-serve" { try await BenchEmulator.serve(options) }  // the emulator process of the remote rows
    let count = options.count
    if try await runFMPProfileLoop(name, options: options) { return }
    if try await runCryptoProProfileLoop(name, options: options) { return }
    if try await runRemoteProfileLoop(name, CSCBenchSession.self, listingName: "list", options: options) { return }
    let keyType: LocalSigningKey.GenerationParameters
    switch name {
    case "cms-rsa", "batch-rsa": keyType = .rsa2048
    case "cms-p256", "batch-p256": keyType = .p256
    default:
        throw BenchError(
            "unknown profile '\(name)' (cms-rsa, cms-p256, batch-rsa, batch-p256, fmp-signs, fmp-sign, fmp-bare, "
                + "fmp-json, fmp-decode, fmp-serve, emulator-serve, cryptopro-sign, cryptopro-certificates, csc-sign, csc-list)"
        )
    }
    let identity = try TestPKI().issueLeaf(subject: "CN=Profile", keyType: keyType)
    let document = [UInt8](repeating: 0x41, count: 1024)
    var start = DispatchTime.now().uptimeNanoseconds
    var cpuStart = processCPUSeconds()
    if name.hasPrefix("batch-") {
        var registry = ProviderRegistry()
        try registry.register(.pkcs12, description: "profile identity") {
            InMemoryCertificateProvider(id: .pkcs12, identity: identity, storedFromStart: true)
        }
        try await withProfileScratch { journal in
            let coordinator = SigningCoordinator(
                registry: registry,
                journal: try SignatureJournal(url: journal.appendingPathComponent("journal.sqlite"))
            )
            // --batch N: batches of N documents, as the bench's batch row (2000) signs them.
            let size = options.batch ?? count
            let batch = (0..<max(1, min(size, count))).map { Document.bytes(document, name: "doc \($0)") }
            start = DispatchTime.now().uptimeNanoseconds
            cpuStart = processCPUSeconds()
            for _ in 0..<(count / batch.count) { _ = try await coordinator.sign(documents: batch, provider: .pkcs12) }
        }
    } else {
        for _ in 0..<count { _ = try await CMSSigner.sign(content: document, identity: identity) }
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let cpu = processCPUSeconds() - cpuStart
    // Per CPU second too: on a loaded machine the wall-clock rate says little.
    print(
        "\(name): \(count) signatures, \(String(format: "%.0f", Double(count) / seconds))/s, "
            + "\(String(format: "%.0f", Double(count) / cpu)) per CPU second"
    )
}

/// Runs `body` with a scratch directory of this process's own for a profile loop
/// (`certsign-profile-PID` in the temporary directory), removed afterwards.
/// - Throws: when the directory cannot be made; what `body` throws.
func withProfileScratch<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("certsign-profile-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    return try await body(scratch)
}
