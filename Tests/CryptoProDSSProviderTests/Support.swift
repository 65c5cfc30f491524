import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import Foundation
import HTTPClient
import TestSupport
import Testing

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
            renewalMargin: renewalMargin
        ).withAdditionalHeaders(headers)
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
    let ca = try Certificate(pemEncoded: emulator.certificateAuthorityPEM)
    let result = try OpenSSLCMS.verify(cms, content: content, trust: [ca], cades: cades, anyPurpose: true)
    #expect(result.succeeded, "openssl cms -verify failed: \(result.errorOutput)", sourceLocation: sourceLocation)
    return result.content
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

extension DSSEmulator.Configuration {
    /// Faults on: this target's default.
    static var faults: Self { .init(faultsEnabled: true) }
}
