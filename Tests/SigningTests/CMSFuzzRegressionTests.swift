import CertificateProviders
import Foundation
import Signing
import TestSupport
import Testing

/// Inputs `make fuzz` found in the `cms-verify` target; each is also in the fuzz corpus under
/// `Tests/Fuzz/Regressions/cms-verify/`.
@Suite("CMS verification fuzz regressions")
struct CMSFuzzRegressionTests {
    static func regression(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Regressions/cms-verify/\(name)")
        return Array(try Data(contentsOf: url))
    }

    /// A seed signature (`openssl cms -sign`, EC, detached) whose SignedData digestAlgorithms SET
    /// names an unknown OID (2.16.841.1.101.3.4.2.1, one digit off SHA-256), found by a
    /// `cms-verify` run from the seeds alone. `CMS_dataInit` fails on it, and OpenSSL 3.0's
    /// `CMS_verify` then leaks the read-only copy it made of a memory content BIO (one BIO, 272
    /// bytes in 5 allocations: openssl/openssl#30471, fixed upstream by #30535 in 2026, after
    /// 3.0.19). The verifier no longer calls `CMS_verify`: it streams the content through
    /// `CMS_dataInit` itself and frees every BIO it gets back, so nothing leaks (`make fuzz` and
    /// `make test-asan` check leaks with LeakSanitizer).
    @Test(
        "An unknown digest in digestAlgorithms is malformed (detached), contentMissing without content, and leaks nothing"
    )
    func unknownDigestAlgorithm() throws {
        let signature = try Self.regression("unknown-digest-algorithm-detached.p7s")
        let content = Array("certsign fuzz content\n".utf8)
        for _ in 0..<3 {
            let detached = CMSVerifier.verify(signature: signature, content: content, trustAnchors: [])
            #expect(detached.failure?.code == .malformed, "\(detached)")
            #expect(detached.signers.count == 1)
            #expect(detached.signerCertificate?.subject == "CN=Fuzz EC signer")
            let withoutContent = CMSVerifier.verify(signature: signature, content: nil, trustAnchors: [])
            #expect(withoutContent.failure?.code == .contentMissing, "\(withoutContent)")
        }
    }
}
