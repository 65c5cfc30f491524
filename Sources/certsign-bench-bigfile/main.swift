// certsign-bench's big-file child: signs one file (detached CAdES-BES, SHA-256) with `CMSSigner` in a
// process that links only the Signing library, as an application would, and prints the signing time
// and its own peak RSS. certsign-bench runs it; the signer's test key and certificate are PEM files
// certsign-bench writes in its scratch directory (paths in the environment, no secret in argv).
import CertificateProviders
import Foundation
import Signing

/// This process image's peak RSS: `VmHWM` of /proc/self/status. Not `getrusage`'s `ru_maxrss`: Linux
/// carries the higher water mark across `execve`, and a child started with `posix_spawn` (vfork)
/// reports its parent's peak RSS there.
func peakRSSKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
    return line?.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } ?? -1
}

let environment = ProcessInfo.processInfo.environment
guard let file = environment["CERTSIGN_BENCH_BIG_FILE"], let keyPath = environment["CERTSIGN_BENCH_BIG_KEY"],
    let certificatePath = environment["CERTSIGN_BENCH_BIG_CERTIFICATE"]
else {
    FileHandle.standardError.write(
        Data("usage: CERTSIGN_BENCH_BIG_FILE, _KEY, _CERTIFICATE set (certsign-bench runs this)\n".utf8)
    )
    exit(64)
}
do {
    let identity = SigningIdentity(
        certificate: try Certificate(pemEncoded: String(contentsOfFile: certificatePath, encoding: .utf8)),
        chain: [],
        key: try LocalSigningKey(pemEncoded: String(contentsOfFile: keyPath, encoding: .utf8))
    )
    let start = DispatchTime.now().uptimeNanoseconds
    let chunkSize = environment["CERTSIGN_BENCH_BIG_CHUNK_KIB"].flatMap(Int.init).map { $0 * 1024 }
    let signature = try await CMSSigner.sign(
        fileAt: URL(fileURLWithPath: file),
        identity: identity,
        chunkSize: chunkSize ?? CMSSigner.defaultChunkSize
    )
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    print("SIGNING-CHILD seconds=\(seconds) peak_rss_kib=\(peakRSSKiB()) signature_bytes=\(signature.count)")
} catch {
    FileHandle.standardError.write(Data("certsign-bench-bigfile: \(error)\n".utf8))
    exit(1)
}
