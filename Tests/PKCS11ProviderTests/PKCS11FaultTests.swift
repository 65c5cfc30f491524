import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS11Provider
import Signing
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// What SoftHSM cannot do by itself, added by a small PKCS#11 module (FaultModule/fault-module.c,
/// compiled here with the system C compiler) that forwards every call to SoftHSM: a session limit
/// (`CKR_SESSION_COUNT` beyond 2 sessions) and a token pulled out and put back (`CKR_DEVICE_REMOVED`
/// after SoftHSM closed every session of the slot).
@Suite(
    "PKCS#11 session limit and token removal",
    .enabled(
        if: SoftHSMFixture.isAvailable && ExternalTool.isAvailable("cc"),
        "softhsm2 or a C compiler is missing"
    )
)
struct PKCS11FaultTests {
    /// The compiled fault module of this test process.
    static let module: Result<String, FixtureError> = {
        do {
            let directory = try TemporaryDirectory(prefix: "pkcs11-fault-module")
            let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "FaultModule/fault-module.c"
            ).path
            let output = "\(directory.path("fault-module.so"))"
            let result = try ExternalTool.run(
                "cc",
                ["-shared", "-fPIC", "-O1", "-I/usr/include/p11-kit-1", "-o", output, source, "-ldl", "-lpthread"]
            )
            guard result.succeeded else { return .failure(FixtureError("cc failed: \(result.errorOutput)")) }
            // The module stays loaded for the process: keep its directory (in the system temp folder) until exit.
            Self.keep.withLock { $0 = directory }
            return .success(output)
        } catch {
            return .failure(FixtureError("\(error)"))
        }
    }()
    static let keep = Mutex<TemporaryDirectory?>(nil)

    /// A test control exported by the fault module (already loaded by the provider).
    static func control<T>(_ name: String, as type: T.Type) throws -> T {
        let path = try module.get()
        guard let handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD), let symbol = dlsym(handle, name) else {
            throw FixtureError("the fault module is not loaded or has no \(name)")
        }
        return unsafeBitCast(symbol, to: type)
    }

    static func provider(_ uri: String) async throws -> (PKCS11CertificateProvider, SigningIdentity) {
        _ = try SoftHSMFixture.shared()
        let provider = try PKCS11CertificateProvider(parameters: [
            PKCS11CertificateProvider.ParameterKey.module: .string(try module.get())
        ])
        let identity = try await provider.initialize(options: [
            PKCS11CertificateProvider.ParameterKey.uri: .string(uri),
            PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret(SoftHSMFixture.pin)),
        ])
        return (provider, identity)
    }

    @Test("CKR_SESSION_COUNT: 8 threads × 4 signatures share at most 2 sessions and all succeed")
    func sessionLimit() async throws {
        let (provider, identity) = try await Self.provider("pkcs11:token=limited;object=rsakey")
        let key = try #require(identity.key as? PKCS11SigningKey)
        let digest = DigestAlgorithm.sha256.hash(Array("limited\n".utf8))
        let failures = Mutex<[String]>([])
        let signatures = Mutex<[[UInt8]]>([])
        let refusalCount = try Self.control("fault_session_count_refusals", as: (@convention(c) () -> Int32).self)
        // A round: 8 threads released together, 4 signatures each. On a loaded machine the threads
        // may still run one after another, so rounds repeat (at most 5) until a third session was
        // wanted at once and refused.
        var rounds = 0
        repeat {
            rounds += 1
            let gate = DispatchSemaphore(value: 0)
            let threads = (0..<8).map { _ in
                Thread {
                    gate.wait()
                    for _ in 0..<4 {
                        do {
                            let signature = try key.signSynchronously(
                                digest: digest,
                                digestAlgorithm: .sha256,
                                scheme: .rsaPKCS1v15
                            )
                            signatures.withLock { $0.append(signature) }
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                }
            }
            for thread in threads { thread.start() }
            for _ in threads { gate.signal() }
            while signatures.withLock({ $0.count }) + failures.withLock({ $0.count }) < 32 * rounds {
                try await Task.sleep(for: .milliseconds(20))
            }
        } while refusalCount() == 0 && rounds < 5
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(signatures.withLock { $0.count } == 32 * rounds)
        let maxOpen = try Self.control("fault_max_open_sessions", as: (@convention(c) () -> Int32).self)()
        #expect(maxOpen <= 2)
        // 8 threads in RSA signatures of milliseconds on a few cores: a third session is wanted at once.
        #expect(refusalCount() >= 1, "8 threads never wanted a third session at once in \(rounds) rounds")
        #expect(provider.connectionDiagnostics?.failedLogins == 0)
        // Every signature verifies with the certificate's key.
        let directory = try TemporaryDirectory()
        let certificate = try directory.write("cert.pem", text: identity.certificate.pemRepresentation)
        let digestPath = try directory.write("digest.bin", digest)
        for (index, signature) in signatures.withLock({ $0 }).enumerated() where index % 8 == 0 {
            let path = try directory.write("sig-\(index).der", signature)
            let verify = try ExternalTool.run(
                "openssl",
                [
                    "pkeyutl", "-verify", "-certin", "-inkey", certificate, "-in", digestPath, "-sigfile", path,
                    "-pkeyopt", "digest:sha256",
                ]
            )
            #expect(verify.succeeded, "\(verify.errorOutput)")
        }
    }

    @Test(
        "token pulled and put back (CKR_DEVICE_REMOVED, every session gone): one clean re-open, the signature succeeds"
    )
    func tokenPulled() async throws {
        let directory = try TemporaryDirectory()
        let (provider, identity) = try await Self.provider("pkcs11:token=pulled;object=eckey")
        let document = Array("pulled\n".utf8)
        _ = try await CMSSigner.sign(content: document, identity: identity, format: .cadesBES)
        try Self.control("fault_pull_token", as: (@convention(c) (UnsafePointer<CChar>) -> Void).self)(
            SoftHSMFixture.Token.pulled
        )
        let signature = try await CMSSigner.sign(content: document, identity: identity, format: .cadesBES)
        #expect(try PKCS11Testing.opensslVerifies(signature, content: document, in: directory).succeeded)
        let diagnostics = try #require(provider.connectionDiagnostics)
        #expect(diagnostics.reopens == 1)
        #expect(diagnostics.logins == 2 && diagnostics.failedLogins == 0)
    }
}
