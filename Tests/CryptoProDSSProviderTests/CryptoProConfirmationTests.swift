import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// CryptoPro DSS signatures that wait for the user's confirmation (`confirmation=required`): the
/// emulator's transactions confirmed, declined, expired, and a provider restarted in the middle.
@Suite("CryptoPro DSS transactions wait for the user's confirmation")
struct CryptoProConfirmationTests {
    static let document = Array("Акт сверки № 12 от 07.12.2026\n".utf8)

    func parameters(_ url: URL, approvalTimeout: Int = 60) -> ProviderParameters {
        ProviderParameters([
            CryptoProDSSProvider.ParameterKey.url: .url(url),
            CryptoProDSSProvider.ParameterKey.username: .string(StandardSeed.username),
            CryptoProDSSProvider.ParameterKey.password: .secret(Secret(StandardSeed.password)),
            CryptoProDSSProvider.ParameterKey.pin: .secret(Secret(StandardSeed.certificatePIN)),
            CryptoProDSSProvider.ParameterKey.certificateID: .integer(StandardSeed.certificateID),
            CryptoProDSSProvider.ParameterKey.confirmation: .string("required"),
            CryptoProDSSProvider.ParameterKey.approvalTimeout: .integer(approvalTimeout),
        ])
    }

    /// A transaction started through the client, as the provider starts it.
    func startTransaction(_ url: URL) async throws -> String {
        let client = try await loggedInClient(url)
        return try await client.createTransaction(
            document: Self.document,
            certificateID: StandardSeed.certificateID,
            pin: Secret(StandardSeed.certificatePIN)
        )
    }

    @Test("confirmed: the transaction is pending until the user confirms, then its CAdES verifies with openssl")
    func confirm() async throws {
        try await withEmulator { emulator, url in
            let id = try await startTransaction(url)
            let provider = try CryptoProDSSProvider(parameters: parameters(url))
            #expect(try await provider.confirmedSignature(transactionID: id) == nil)
            #expect(emulator.approvalState(of: id) == .pending)
            try emulator.approve(operationID: id)
            let cms = try #require(try await provider.confirmedSignature(transactionID: id))
            try opensslVerify(cms, emulator: emulator, cades: true, detachedContent: Self.document)
        }
    }

    @Test("declined and expired: typed errors naming the transaction; a wrong PIN is refused before one is made")
    func declineAndExpire() async throws {
        try await withEmulator { emulator, url in
            let provider = try CryptoProDSSProvider(parameters: parameters(url))
            let declined = try await startTransaction(url)
            try emulator.decline(operationID: declined)
            let refusal = await expectError(.approvalDeclined) {
                try await provider.confirmedSignature(transactionID: declined)
            }
            #expect(refusal?.reason.contains(declined) == true)
            let client = try await loggedInClient(url)
            await expectError(.wrongPassword) {
                try await client.createTransaction(
                    document: Self.document,
                    certificateID: StandardSeed.certificateID,
                    pin: Secret("999")
                )
            }
            #expect(emulator.approvalOperationIDs == [declined])
        }
        try await withEmulator(.init(confirmationValidity: 1)) { emulator, url in
            let provider = try CryptoProDSSProvider(parameters: parameters(url))
            let expiring = try await startTransaction(url)
            try await Task.sleep(for: .milliseconds(1100))
            let expiry = await expectError(.approvalExpired) {
                try await provider.confirmedSignature(transactionID: expiring)
            }
            #expect(expiry?.reason.contains(expiring) == true)
        }
    }

    @Test(
        "signDocument waits: auto-confirmed it returns the CAdES; a timeout names the transaction a new provider finishes"
    )
    func signDocumentWaitsAndResumes() async throws {
        try await withEmulator(.init(autoApproveAfter: 1)) { emulator, url in
            let provider = try CryptoProDSSProvider(parameters: parameters(url))
            _ = try await provider.initialize(options: [:])
            let cms = try await provider.signDocument(DocumentSigningRequest(payload: .content(Self.document)))
            try opensslVerify(cms, emulator: emulator, cades: true, detachedContent: Self.document)
        }
        try await withEmulator { emulator, url in
            let first = try CryptoProDSSProvider(parameters: parameters(url, approvalTimeout: 1))
            _ = try await first.initialize(options: [:])
            let timeout = await expectError(.timeout) {
                try await first.signDocument(DocumentSigningRequest(payload: .content(Self.document)))
            }
            let id = try #require(emulator.approvalOperationIDs.last)
            #expect(timeout?.reason.contains(id) == true)
            try emulator.approve(operationID: id)
            let second = try CryptoProDSSProvider(parameters: parameters(url))
            let cms = try await second.waitForConfirmation(transactionID: id, timeout: .seconds(30))
            try opensslVerify(cms, emulator: emulator, cades: true, detachedContent: Self.document)
        }
    }
}
