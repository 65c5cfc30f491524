import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import DSSEmulator
import Foundation
import RemoteSigning
import Testing

/// One seed (keys made once) shared by every emulator of this test target.
let sharedSeed: EmulatorSeed = {
    do { return try EmulatorSeed.standard() } catch { fatalError("cannot build the emulator seed: \(error)") }
}()

/// Starts an emulator on an ephemeral loopback port for the duration of `body`.
func withEmulator<R>(
    _ configuration: DSSEmulator.Configuration = .init(faultsEnabled: true),
    _ body: (DSSEmulator, URL) async throws -> R
) async throws -> R {
    let emulator = try DSSEmulator(configuration: configuration, seed: sharedSeed)
    let url = try emulator.start()
    defer { emulator.stop() }
    return try await body(emulator, url)
}

/// A client for the emulator (not logged in).
func makeClient(
    _ url: URL,
    timeout: TimeInterval = 10,
    renewalMargin: TimeInterval = 30,
    clientID: String = CryptoProEmulatorClients.publicClientID,
    clientSecret: Secret? = nil,
    headers: [(name: String, value: String)] = []
) -> CryptoProDSSClient {
    CryptoProDSSClient(
        configuration: .init(
            baseURL: url,
            clientID: clientID,
            clientSecret: clientSecret,
            timeout: timeout,
            renewalMargin: renewalMargin,
            additionalHeaders: headers
        )
    )
}

/// A client logged in as Leonid.
func loggedInClient(
    _ url: URL,
    timeout: TimeInterval = 10,
    headers: [(name: String, value: String)] = []
) async throws -> CryptoProDSSClient {
    let client = makeClient(url, timeout: timeout, headers: headers)
    try await client.login(username: StandardSeed.username, password: Secret(StandardSeed.password))
    return client
}

/// The emulator's received requests to a path suffix.
func requests(_ emulator: DSSEmulator, endingWith suffix: String) -> [DSSEmulator.ReceivedRequest] {
    emulator.receivedRequests.filter { $0.path.hasSuffix(suffix) }
}

/// Expects a `CertificateProviderError` with `code`.
@discardableResult
func expectError<R>(
    _ code: CertificateProviderError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> CertificateProviderError? {
    do {
        _ = try await body()
        Issue.record("expected \(code), but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as CertificateProviderError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected CertificateProviderError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Verifies a CMS with `openssl cms -verify -binary` (`-cades` when asked) against the emulator's CA,
/// with `content` for a detached signature; returns the verified content openssl wrote.
@discardableResult
func opensslVerify(
    _ cms: [UInt8],
    emulator: DSSEmulator,
    cades: Bool,
    detachedContent content: [UInt8]? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> [UInt8] {
    let directory = try TemporaryDirectory()
    let signature = try directory.write("signature.der", cms)
    let ca = try directory.write("ca.pem", text: emulator.certificateAuthorityPEM)
    let output = directory.path("content.out")
    var arguments = [
        "cms", "-verify", "-binary", "-inform", "DER", "-in", signature, "-CAfile", ca, "-purpose", "any", "-out",
        output,
    ]
    if cades { arguments.append("-cades") }
    if let content { arguments += ["-content", try directory.write("document.bin", content)] }
    let result = try ExternalTool.run("openssl", arguments)
    #expect(result.succeeded, "openssl cms -verify failed: \(result.errorOutput)", sourceLocation: sourceLocation)
    return (try? directory.read("content.out")) ?? []
}

/// Whether a DER CMS carries the content (openssl `cms -cmsout -print` shows eContent).
func isAttached(_ cms: [UInt8]) throws -> Bool {
    let directory = try TemporaryDirectory()
    let signature = try directory.write("signature.der", cms)
    let result = try ExternalTool.run("openssl", ["cms", "-cmsout", "-print", "-inform", "DER", "-in", signature])
    #expect(result.succeeded, "\(result.errorOutput)")
    return !result.output.contains("eContent: <ABSENT>")
}

/// Whether a DER CMS has the ESS signing-certificate-v2 attribute (CAdES-BES).
func hasSigningCertificateV2(_ cms: [UInt8]) throws -> Bool {
    let directory = try TemporaryDirectory()
    let signature = try directory.write("signature.der", cms)
    let result = try ExternalTool.run("openssl", ["cms", "-cmsout", "-print", "-inform", "DER", "-in", signature])
    return result.output.contains("signingCertificateV2") || result.output.contains("id-smime-aa-signingCertificateV2")
}

let document = Array("Бюджетный план 2026, версия 1\n".utf8)

/// The signer certificate of a CMS, as `openssl cms -verify -signer` writes it (no chain check).
func signerCertificate(_ cms: [UInt8]) throws -> Certificate {
    let directory = try TemporaryDirectory()
    let signature = try directory.write("signature.der", cms)
    let signer = directory.path("signer.pem")
    let result = try ExternalTool.run(
        "openssl",
        [
            "cms", "-verify", "-noverify", "-binary", "-inform", "DER", "-in", signature,
            "-content", try directory.write("document.bin", document), "-signer", signer, "-out", "/dev/null",
        ]
    )
    #expect(result.succeeded, "\(result.errorOutput)")
    return try Certificate(pemEncoded: String(decoding: try directory.read("signer.pem"), as: UTF8.self))
}
