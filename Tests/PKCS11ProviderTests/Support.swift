import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS11Provider
import TestSupport
import Testing

/// Helpers shared by the PKCS#11 suites.
enum PKCS11Testing {
    /// A provider initialised with `uri` on the shared SoftHSM fixture (module loaded directly).
    static func provider(
        _ uri: String,
        pin: String? = SoftHSMFixture.pin
    ) async throws -> (PKCS11CertificateProvider, SigningIdentity) {
        _ = try SoftHSMFixture.shared()
        let provider = try PKCS11CertificateProvider(parameters: [
            PKCS11CertificateProvider.ParameterKey.module: .string(SoftHSMFixture.softHSMModule)
        ])
        var options: ProviderParameters = [PKCS11CertificateProvider.ParameterKey.uri: .string(uri)]
        if let pin { options[PKCS11CertificateProvider.ParameterKey.pin] = .secret(Secret(pin)) }
        let identity = try await provider.initialize(options: options)
        return (provider, identity)
    }

    /// Runs `body` and returns the `CertificateProviderError` it throws (records an issue otherwise).
    static func error(_ body: () async throws -> Void) async -> CertificateProviderError? {
        do {
            try await body()
            Issue.record("expected an error, got success")
            return nil
        } catch let error as CertificateProviderError {
            return error
        } catch {
            Issue.record("expected a CertificateProviderError, got \(error)")
            return nil
        }
    }

    /// `openssl cms -verify` of a detached DER signature over `content` against the fixture's CA.
    static func opensslVerifies(
        _ signature: [UInt8],
        content: [UInt8],
        in directory: TemporaryDirectory
    ) throws -> ExternalTool.Result {
        let fixture = try SoftHSMFixture.shared()
        let signaturePath = try directory.write("signature-\(UUID().uuidString).p7s", signature)
        let contentPath = try directory.write("content-\(UUID().uuidString).txt", content)
        return try OpenSSLCMS.verify(
            signatureFile: signaturePath,
            contentFile: contentPath,
            caFile: fixture.caPath,
            anyPurpose: true
        )
    }

    /// The `openssl cms -cmsout -print` dump of a signature (to check its attributes and algorithms).
    static func opensslPrint(_ signature: [UInt8], in directory: TemporaryDirectory) throws -> String {
        let path = try directory.write("print-\(UUID().uuidString).p7s", signature)
        return try ExternalTool.run("openssl", ["cms", "-cmsout", "-print", "-inform", "DER", "-in", path]).output
    }
}
