import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

/// The `uploadMode` parameter, and sessions that serve only the parameters
/// they were made for (two emulator users, several certificates).
@Suite struct UploadModeTests {
    static func parameters(
        _ url: URL,
        user: String = StandardSeed.username,
        password: String = StandardSeed.password,
        certificateID: Int = StandardSeed.secondCertificateID
    ) -> ProviderParameters {
        [
            CryptoProDSSProvider.ParameterKey.url: .url(url), CryptoProDSSProvider.ParameterKey.username: .string(user),
            CryptoProDSSProvider.ParameterKey.password: .secret(Secret(password)),
            CryptoProDSSProvider.ParameterKey.certificateID: .integer(certificateID),
        ]
    }

    /// The `Hash` flag and the base64 `Content` of the last documents request the emulator received.
    static func lastUpload(_ emulator: DSSEmulator) throws -> (hash: String?, content: [UInt8]) {
        let request = try #require(requests(emulator, endingWith: "/documents").last)
        let json = try JSONValue(parsing: request.body)
        let hash = json["Signature"]?["Parameters"]?["Hash"]?.stringValue
        let text = try #require(json["Content"]?.stringValue)
        let content = try #require(Data(base64Encoded: text))
        return (hash, Array(content))
    }

    @Test(
        "auto sends the document up to maxUploadBytes and its digest above; content and hash force one; the result verifies"
    )
    func uploadModes() async throws {
        try await withEmulator(.faults) { emulator, url in
            let directory = try TemporaryDirectory()
            let document = Array("Договор поставки № 12\n".utf8)
            let file = URL(fileURLWithPath: try directory.write("contract.txt", document))
            let digest = DigestAlgorithm.sha256.hash(document)
            let request = DocumentSigningRequest(payload: .digest(digest, .sha256), contentFile: file)

            let provider = try CryptoProDSSProvider(parameters: Self.parameters(url))
            _ = try await provider.initialize(options: [:])
            var signature = try await provider.signDocument(request)
            var upload = try Self.lastUpload(emulator)
            #expect(upload.hash == "False")
            #expect(upload.content == document)
            _ = try opensslVerify(signature, emulator: emulator, cades: true, detachedContent: document)

            try provider.setParameters(
                Self.parameters(url).merging([CryptoProDSSProvider.ParameterKey.maxUploadBytes: .integer(8)])
            )
            signature = try await provider.signDocument(request)
            upload = try Self.lastUpload(emulator)
            #expect(upload.hash == "True")
            #expect(upload.content == digest)
            _ = try opensslVerify(signature, emulator: emulator, cades: true, detachedContent: document)

            try provider.setParameters(
                Self.parameters(url).merging([CryptoProDSSProvider.ParameterKey.uploadMode: .string("hash")])
            )
            _ = try await provider.signDocument(DocumentSigningRequest(payload: .content(document)))
            #expect(try Self.lastUpload(emulator).hash == "True")
            #expect(try Self.lastUpload(emulator).content == digest)

            try provider.setParameters(
                Self.parameters(url).merging([
                    CryptoProDSSProvider.ParameterKey.uploadMode: .string("content"),
                    CryptoProDSSProvider.ParameterKey.maxUploadBytes: .integer(8),
                ])
            )
            await expectError(.invalidParameter) { try await provider.signDocument(request) }
            await expectError(.invalidParameter) {
                try await provider.signDocument(DocumentSigningRequest(payload: .digest(digest, .sha256)))
            }
            expectError(.invalidParameter) {
                try provider.setParameters([CryptoProDSSProvider.ParameterKey.uploadMode: .string("sometimes")])
            }
        }
    }

    @Test(
        "a stored session serves only its own user, certificate and server; the PIN given is used with a cached session"
    )
    func sessionsFollowParameters() async throws {
        try await withEmulator(.faults) { _, url in
            let store = try TemporaryDirectory()
            let withStore: ProviderParameters = [
                CryptoProDSSProvider.ParameterKey.storeDirectory: .string(store.url.path)
            ]
            let leonid = try CryptoProDSSProvider(parameters: withStore.merging(Self.parameters(url)))
            _ = try await leonid.initialize(options: [:])

            // A new process asking for Maria's certificate must not get Leonid's cached one.
            let maria = try CryptoProDSSProvider(
                parameters: withStore.merging(
                    Self.parameters(url, user: "Maria", password: "456456", certificateID: 12900)
                )
            )
            #expect(try maria.storedCertificate() == nil)
            let other = try CryptoProDSSProvider(
                parameters: withStore.merging(Self.parameters(url, certificateID: StandardSeed.certificateID))
            )
            #expect(try other.storedCertificate() == nil)
            let elsewhere = try CryptoProDSSProvider(
                parameters: withStore.merging(Self.parameters(URL(string: "http://127.0.0.1:1/")!))
            )
            #expect(try elsewhere.storedCertificate() == nil)
            let same = try CryptoProDSSProvider(parameters: withStore.merging(Self.parameters(url)))
            #expect(try same.storedCertificate()?.certificate.subject.contains("RSA") == true)

            // setParameters to another user drops the session in memory too.
            try leonid.setParameters(
                withStore.merging(Self.parameters(url, user: "Maria", password: "456456", certificateID: 12900))
            )
            #expect(try leonid.storedCertificate() == nil)

            // PIN-protected: the cached session still sends the PIN of the parameters.
            var pinned = withStore.merging(Self.parameters(url, certificateID: StandardSeed.certificateID))
            pinned[CryptoProDSSProvider.ParameterKey.pin] = .secret(Secret(StandardSeed.certificatePIN))
            _ = try await CryptoProDSSProvider(parameters: pinned).initialize(options: [:])
            let resumed = try CryptoProDSSProvider(parameters: pinned)
            #expect(try resumed.storedCertificate() != nil)
            _ = try await resumed.signDocument(DocumentSigningRequest(payload: .content(Array("x".utf8))))
        }
    }
}
