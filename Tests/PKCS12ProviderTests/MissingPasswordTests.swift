import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import TestSupport
import Testing

@Suite("PKCS#12 import without any password: the message says which password is missing")
struct MissingPasswordTests {
    func provider(_ directory: TemporaryDirectory) throws -> PKCS12CertificateProvider {
        try PKCS12CertificateProvider(parameters: [
            PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(directory.path("store"))
        ])
    }

    @Test("a password-protected file without 'password' asks for the file's password, not a store password")
    func protectedFile() async throws {
        let directory = try TemporaryDirectory()
        let identity = try Fixtures.pki.issueLeaf(subject: "CN=Protected", keyType: .p256)
        let bytes = try Fixtures.opensslExport(identity, password: "file-secret", in: directory)
        let error = await expectError(.passwordRequired) {
            _ = try await provider(directory).initialize(options: [
                PKCS12CertificateProvider.ParameterKey.data: .data(bytes)
            ])
        }
        #expect(
            error?.reason.contains("the PKCS#12 file is protected by a password and none was given") == true,
            "\(error?.reason ?? "")"
        )
        #expect(error?.reason.contains("the file has none") == false)
    }

    @Test("a file without a password still asks for a store password")
    func unprotectedFile() async throws {
        let directory = try TemporaryDirectory()
        let identity = try Fixtures.pki.issueLeaf(subject: "CN=Open", keyType: .p256)
        let bytes = try Fixtures.opensslExport(identity, password: nil, in: directory)
        let error = await expectError(.passwordRequired) {
            _ = try await provider(directory).initialize(options: [
                PKCS12CertificateProvider.ParameterKey.data: .data(bytes)
            ])
        }
        #expect(
            error?.reason.contains("the file has none, so set parameter 'storePassword'") == true,
            "\(error?.reason ?? "")"
        )
    }
}
