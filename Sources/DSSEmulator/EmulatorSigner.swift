import CertificateProviders
import Dispatch
import Signing

/// How the emulator turns a cell value into a CAdES-BES signature; behind a protocol so tests or a
/// later CryptoPro DSS router can swap the format without touching the routes.
protocol EmulatorSigner: Sendable {
    /// An attached CAdES-BES SignedData (DER ContentInfo) over `content`, signed by `identity`.
    func signCAdES(content: [UInt8], identity: SigningIdentity) async throws -> [UInt8]
}

extension EmulatorSigner {
    /// Runs ``signCAdES(content:identity:)`` from a libmicrohttpd connection thread (not a Swift
    /// concurrency thread), blocking that thread until the signature is ready.
    func signCAdESBlocking(content: [UInt8], identity: SigningIdentity) throws -> [UInt8] {
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                box.result = .success(try await signCAdES(content: content, identity: identity))
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        guard let result = box.result else { throw CertificateProviderError(.cryptoFailure, "the signer returned nothing") }
        return try result.get()
    }
}

/// The package's `Signing` module: CAdES-BES (signing-certificate-v2), SHA-256, content attached,
/// signer certificate and chain included.
struct CMSEmulatorSigner: EmulatorSigner {
    func signCAdES(content: [UInt8], identity: SigningIdentity) async throws -> [UInt8] {
        try await CMSSigner.sign(content: content, identity: identity, format: .cadesBES, detached: false)
    }
}

/// Carries the signing result from the task to the blocked thread.
private final class ResultBox: @unchecked Sendable {
    // Written once by the task before `done.signal()`, read after `done.wait()`.
    var result: Result<[UInt8], any Error>?
}
