// certsign-bench's big-file child: signs one file (detached CAdES-BES, SHA-256) with `CMSSigner` in a
// process that links only the Signing library, as an application would, and prints the signing time
// and its own peak RSS. certsign-bench runs it; the signer's test key and certificate are PEM files
// certsign-bench writes in its scratch directory (`certsign-bench-bigfile FILE KEY CERTIFICATE
// [--chunk-kib N]`: paths only, the key file is a throwaway test key).
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

var arguments = Array(CommandLine.arguments.dropFirst())
var chunkSize = CMSSigner.defaultChunkSize
if let flag = arguments.firstIndex(of: "--chunk-kib"), flag + 1 < arguments.count,
    let kibibytes = Int(arguments[flag + 1]), kibibytes > 0
{
    chunkSize = kibibytes * 1024
    arguments.removeSubrange(flag...(flag + 1))
}
guard arguments.count == 3 else {
    FileHandle.standardError.write(
        Data("usage: certsign-bench-bigfile FILE KEY CERTIFICATE [--chunk-kib N] (certsign-bench runs this)\n".utf8)
    )
    exit(64)
}
let (file, keyPath, certificatePath) = (arguments[0], arguments[1], arguments[2])
do {
    let identity = SigningIdentity(
        certificate: try Certificate(pemEncoded: String(contentsOfFile: certificatePath, encoding: .utf8)),
        chain: [],
        key: try LocalSigningKey(pemEncoded: String(contentsOfFile: keyPath, encoding: .utf8))
    )
    let start = DispatchTime.now().uptimeNanoseconds
    let signature = try await CMSSigner.sign(
        fileAt: URL(fileURLWithPath: file),
        identity: identity,
        chunkSize: chunkSize
    )
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    print("SIGNING-CHILD seconds=\(seconds) peak_rss_kib=\(peakRSSKiB()) signature_bytes=\(signature.count)")
} catch {
    FileHandle.standardError.write(Data("certsign-bench-bigfile: \(error)\n".utf8))
    exit(1)
}
