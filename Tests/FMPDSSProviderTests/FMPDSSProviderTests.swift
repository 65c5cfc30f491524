import CertificateProviders
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import RemoteProviderSupport
import TestSupport
import Testing

@Suite("FMPDSSProvider: the SAP contract over the FMP DSS API")
struct FMPDSSProviderTests {
    private func parameters(_ url: URL, certificateID: Int? = StandardSeed.certificateID) -> ProviderParameters {
        var parameters: ProviderParameters = [
            FMPDSSProvider.ParameterKey.url: .url(url),
            FMPDSSProvider.ParameterKey.environment: .string(StandardSeed.environment),
            FMPDSSProvider.ParameterKey.project: .string(StandardSeed.project),
            FMPDSSProvider.ParameterKey.device: .string("provider-device"),
            FMPDSSProvider.ParameterKey.username: .string(StandardSeed.username),
            FMPDSSProvider.ParameterKey.password: .secret(Secret(StandardSeed.password)),
            FMPDSSProvider.ParameterKey.dssPassword: .secret(Secret(StandardSeed.dssPassword)),
        ]
        if let certificateID { parameters[FMPDSSProvider.ParameterKey.certificateID] = .string(String(certificateID)) }
        return parameters
    }

    @Test("a bad parameter is refused alike at init, setParameters and initialize(options:)")
    func validationMoment() async throws {
        let reason = try await expectRefusedAtEveryMoment([FMPDSSProvider.ParameterKey.timeout: .integer(0)]) {
            try FMPDSSProvider(parameters: $0)
        }
        #expect(reason == "parameter 'timeout' must be a positive whole number of seconds, not 0")
    }

    @Test("initialize returns the server's certificate with a remote key; stored until deleted")
    func initialize() async throws {
        try await withEmulator { _, url in
            let provider = try FMPDSSProvider(parameters: parameters(url))
            #expect(provider.providerID == .fmpDSS)
            #expect(try provider.storedCertificate() == nil)
            let identity = try await provider.initialize(options: [:])
            let server = try #require(sharedSeed.users.first?.certificates.first)
            #expect(identity.certificate == server.identity.certificate)
            #expect(identity.key.matches(identity.certificate))
            #expect(identity.key.publicKeyAlgorithm == .ecP256)
            let error = await expectError(.unsupportedOperation) {
                try await identity.key.signature(for: Array("x".utf8), digestAlgorithm: .sha256, scheme: .ecdsa)
            }
            #expect(error?.reason.contains("FMPClient.sign") == true)
            #expect(try provider.storedCertificate()?.certificate == identity.certificate)
            try provider.deleteStoredCertificate()
            #expect(try provider.storedCertificate() == nil)
            try provider.deleteStoredCertificate()
        }
    }

    @Test("signature history: signatures() lists and removeSignature(id:) removes; unknown id → .notStored")
    func history() async throws {
        try await withEmulator { emulator, url in
            let provider = try FMPDSSProvider(
                parameters: parameters(url, certificateID: StandardSeed.secondCertificateID)
            )
            await expectError(.authenticationFailed) { try await provider.signatures() }
            let identity = try await provider.initialize(options: [:])
            #expect(identity.key.publicKeyAlgorithm == .rsa)
            #expect(try await provider.signatures().isEmpty)
            try provider.setParameters(
                provider.parameters.merging([
                    FMPDSSProvider.ParameterKey.certificateID: .integer(StandardSeed.certificateID),
                    FMPDSSProvider.ParameterKey.pin: .secret(Secret(StandardSeed.certificatePIN)),
                ])
            )
            #expect(
                try await provider.sign(
                    resource: StandardSeed.resource,
                    table: StandardSeed.table,
                    column: StandardSeed.column,
                    hhiveID: StandardSeed.row
                ).value == 121
            )
            let records = try await provider.signatures()
            let record = try #require(records.first)
            #expect(record.id == "121")
            #expect(record.certificateID == "12831")
            #expect(record.summary == "GetBudgetPlanning / ПланированиеБюджета / Номер / row 1")
            #expect(try opensslVerify(try #require(record.signature), emulator: emulator) == StandardSeed.cellValue)
            await expectError(.notStored) { try await provider.removeSignature(id: "999") }
            await expectError(.invalidParameter) { try await provider.removeSignature(id: "abc") }
            try await provider.removeSignature(id: "121")
            #expect(try await provider.signatures().isEmpty)
        }
    }

    @Test(
        "parameter checks: unknown key, wrong type, several certificates, foreign certificate id, http:// to a remote host"
    )
    func parameterChecks() async throws {
        try await withEmulator { _, url in
            let provider = try FMPDSSProvider()
            expectError(.invalidParameter) { try provider.setParameters(["colour": .string("red")]) }
            expectError(.invalidParameter) {
                try provider.setParameters([FMPDSSProvider.ParameterKey.certificateID: .string("twelve")])
            }
            #expect(provider.parameters.isEmpty)
            try provider.setParameters(parameters(url, certificateID: nil))
            let several = await expectError(.invalidParameter) { try await provider.initialize(options: [:]) }
            #expect(several?.reason.contains("12831, 12832") == true)
            await expectError(.invalidParameter) {
                try await provider.initialize(options: [FMPDSSProvider.ParameterKey.certificateID: .integer(12900)])
            }
            await expectError(.wrongPassword) {
                try await provider.initialize(options: [
                    FMPDSSProvider.ParameterKey.certificateID: .integer(12831),
                    FMPDSSProvider.ParameterKey.dssPassword: .secret(Secret("nope")),
                ])
            }
            await expectError(.invalidParameter) {
                try await provider.initialize(options: [
                    FMPDSSProvider.ParameterKey.url: .string("http://fmp.example.com/")
                ])
            }
            await expectError(.invalidParameter) {
                try await FMPDSSProvider().initialize(options: [FMPDSSProvider.ParameterKey.url: .url(url)])
            }
            #expect(
                try await provider.initialize(options: [FMPDSSProvider.ParameterKey.certificateID: .integer(12831)])
                    .certificate.subject
                    .contains("Леонид")
            )
            #expect(provider.parameters.description.contains(StandardSeed.password) == false)
        }
    }
}
