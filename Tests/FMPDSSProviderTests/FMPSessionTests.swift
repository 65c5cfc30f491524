import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import Synchronization
import TestSupport
import Testing

/// The provider owns its session, in a file other processes share.
@Suite struct FMPSessionTests {
    static func parameters(
        _ url: URL,
        store: TemporaryDirectory,
        user: String = StandardSeed.username,
        password: String = StandardSeed.password,
        dssPassword: String = StandardSeed.dssPassword
    ) -> ProviderParameters {
        [
            FMPDSSProvider.ParameterKey.host: .url(url),
            FMPDSSProvider.ParameterKey.environment: .string(StandardSeed.environment),
            FMPDSSProvider.ParameterKey.project: .string(StandardSeed.project),
            FMPDSSProvider.ParameterKey.device: .string("session-device"),
            FMPDSSProvider.ParameterKey.username: .string(user),
            FMPDSSProvider.ParameterKey.password: .secret(Secret(password)),
            FMPDSSProvider.ParameterKey.dssPassword: .secret(Secret(dssPassword)),
            FMPDSSProvider.ParameterKey.storeDirectory: .string(store.url.path),
        ]
    }

    @Test(
        "initialize logs in and selects; a fresh provider on the same store resumes it without a password, only for the same user"
    )
    func genericPath() async throws {
        try await withEmulator { _, url in
            let store = try TemporaryDirectory()
            var first = Self.parameters(url, store: store)
            first[FMPDSSProvider.ParameterKey.certificateID] = .integer(StandardSeed.certificateID)
            let identity = try await FMPDSSProvider(parameters: first).initialize(options: [:])
            let mode =
                try FileManager.default.attributesOfItem(atPath: store.path("fmp-session.json"))[.posixPermissions]
                as? NSNumber
            #expect(mode?.intValue == 0o600)

            let resumed = try FMPDSSProvider(parameters: [
                FMPDSSProvider.ParameterKey.storeDirectory: .string(store.url.path),
                FMPDSSProvider.ParameterKey.dssPassword: .secret(Secret(StandardSeed.dssPassword)),
                FMPDSSProvider.ParameterKey.certificateID: .integer(StandardSeed.certificateID),
                FMPDSSProvider.ParameterKey.pin: .secret(Secret(StandardSeed.certificatePIN)),
            ])
            #expect(try resumed.storedCertificate()?.certificate == identity.certificate)
            #expect(
                try await resumed.sign(
                    resource: StandardSeed.resource,
                    table: StandardSeed.table,
                    column: StandardSeed.column,
                    hhiveID: StandardSeed.row
                ).value == 121
            )
            #expect(try await resumed.signatures().map(\.id) == ["121"])

            // Maria's parameters do not get Leonid's session.
            var mariaParameters = Self.parameters(
                url,
                store: store,
                user: "Maria",
                password: "456456",
                dssPassword: "Qwerty456"
            )
            mariaParameters[FMPDSSProvider.ParameterKey.password] = nil
            let maria = try FMPDSSProvider(parameters: mariaParameters)
            #expect(try maria.storedCertificate() == nil)
            await expectError(.authenticationFailed) { try await maria.signatures() }
            // With her password she logs in, and sees her own (empty) history.
            // (Maria has a GOST certificate too: name her EC one.)
            let mariaIdentity = try await maria.initialize(options: [
                FMPDSSProvider.ParameterKey.password: .secret(Secret("456456")),
                FMPDSSProvider.ParameterKey.certificateID: .integer(12900),
            ])
            #expect(mariaIdentity.certificate.subject.contains("Мария"))
            #expect(try await maria.signatures().isEmpty)
        }
    }

    @Test("a session file others can read, or that is not a regular file, is ignored with a warning")
    func untrustedSessionFile() async throws {
        try await withEmulator { _, url in
            let store = try TemporaryDirectory()
            _ = try await FMPDSSProvider(parameters: Self.parameters(url, store: store)).login()
            let warnings = Mutex<[String]>([])
            let provider = try FMPDSSProvider(
                parameters: [FMPDSSProvider.ParameterKey.storeDirectory: .string(store.url.path)],
                warning: { message in warnings.withLock { $0.append(message) } }
            )
            #expect(try await provider.signatures().isEmpty)
            #expect(chmod(store.path("fmp-session.json"), 0o640) == 0)
            await expectError(.authenticationFailed) { try await provider.signatures() }
            #expect(warnings.withLock { $0 }.contains { $0.contains("ignoring the FMP session") })
        }
    }
}
