import CSCProvider
import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport
import SignatureJournal
import Signing
import TestSupport
import Testing

@Suite("CSCProvider and the signing coordinator against the emulator")
struct CSCProviderTests {
    /// A coordinator with one `csc` provider made with `parameters` (and `headers` on every request).
    func coordinator(
        _ parameters: ProviderParameters,
        headers: [(name: String, value: String)] = [],
        journal directory: TemporaryDirectory
    ) throws -> SigningCoordinator {
        var registry = ProviderRegistry()
        try registry.register(.csc, description: "CSC") {
            try CSCProvider(parameters: parameters, additionalHeaders: headers)
        }
        return SigningCoordinator(
            registry: registry,
            journal: try SignatureJournal(url: directory.url.appendingPathComponent("journal.sqlite"))
        )
    }

    func documents(_ count: Int) -> [Document] {
        (1...count).map { .bytes(Array("Счёт № \($0) от 30.11.2026\n".utf8), name: "invoice-\($0).txt") }
    }

    @Test("a bad parameter is refused alike at init, setParameters and initialize(options:)")
    func validationMoment() async throws {
        let reason = try await expectRefusedAtEveryMoment([CSCProvider.ParameterKey.url: .string("csc.example")]) {
            try CSCProvider(parameters: $0)
        }
        #expect(reason == "parameter 'url' must be a URL such as https://host/path, not 'csc.example'")
    }

    @Test("SCAL 1 with a PIN (EC): one authorize without hashes, one signHash; the CAdES verifies with openssl")
    func scal1PIN() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let directory = try TemporaryDirectory()
            let coordinator = try coordinator(
                cscParameters(url, credentialID: pinCredential, pin: StandardSeed.certificatePIN),
                journal: directory
            )
            let content = Array("Бюджетный план 2026\n".utf8)
            let result = try await coordinator.sign(document: .bytes(content, name: "plan.txt"), provider: .csc)
            try opensslVerify(result.signature, content: content)
            #expect(result.signerCertificate == sharedSeed.users[0].certificates[0].identity.certificate)
            let authorize = try members(requests(emulator, "credentials/authorize").first)
            #expect(
                authorize["numSignatures"] == 1 && authorize["hashes"] == nil && authorize["hashAlgorithmOID"] == nil
            )
            #expect(requests(emulator, "signatures/signHash").count == 1)
        }
    }

    @Test("SCAL 2 (RSA): authorize is bound to exactly the hash signHash signs; the CAdES verifies with openssl")
    func scal2() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let directory = try TemporaryDirectory()
            let coordinator = try coordinator(cscParameters(url, credentialID: scal2Credential), journal: directory)
            let content = Array("RSA, SCAL 2\n".utf8)
            let result = try await coordinator.sign(
                document: .bytes(content, name: "scal2.txt"),
                provider: .csc,
                options: SigningOptions(digestAlgorithm: .sha512)
            )
            try opensslVerify(result.signature, content: content)
            let authorize = try members(requests(emulator, "credentials/authorize").first)
            let signHash = try members(requests(emulator, "signatures/signHash").first)
            #expect(authorize["hashes"] != nil && authorize["hashes"] == signHash["hashes"])
            #expect(
                authorize["hashAlgorithmOID"] == "2.16.840.1.101.3.4.2.3"
                    && signHash["signAlgo"] == "1.2.840.113549.1.1.13"
            )
            #expect(authorize["authData"] == nil, "an implicit credential gets no authData")
        }
    }

    @Test(
        "PIN and OTP (the only credential of Maria, chosen without credentialID); missing OTP is passwordRequired, wrong PIN wrongPassword"
    )
    func pinAndOTP() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let directory = try TemporaryDirectory()
            let parameters = cscParameters(
                url,
                client: "Maria",
                secret: "456456",
                pin: "456",
                otp: CSCEmulatorCredentials.otp
            )
            let content = Array("PIN + OTP\n".utf8)
            let result = try await coordinator(parameters, journal: directory).sign(
                document: .bytes(content, name: "otp.txt"),
                provider: .csc
            )
            try opensslVerify(result.signature, content: content)
            #expect(result.signerCertificate == sharedSeed.users[1].certificates[0].identity.certificate)
            #expect(
                try members(requests(emulator, "credentials/authorize").first)["authData"]
                    == [["id": "PIN", "value": "456"], ["id": "OTP", "value": .string(CSCEmulatorCredentials.otp)]]
            )

            let noOTP = cscParameters(url, client: "Maria", secret: "456456", pin: "456")
            let missing = await expectError(.passwordRequired) {
                try await coordinator(noOTP, journal: directory).sign(
                    document: .bytes(content, name: "x"),
                    provider: .csc
                )
            }
            #expect(missing?.reason.contains("'otp'") == true)
            let wrongPIN = cscParameters(
                url,
                client: "Maria",
                secret: "456456",
                pin: "999",
                otp: CSCEmulatorCredentials.otp
            )
            await expectError(.wrongPassword) {
                try await coordinator(wrongPIN, journal: directory).sign(
                    document: .bytes(content, name: "x"),
                    provider: .csc
                )
            }
        }
    }

    @Test(
        "a batch of 20 documents: exactly one authorize (numSignatures 20) and one signHash with 20 hashes; all 20 verify",
        arguments: [pinCredential, scal2Credential]
    )
    func batchOfTwenty(credentialID: String) async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let directory = try TemporaryDirectory()
            let output = try TemporaryDirectory()
            let coordinator = try coordinator(
                cscParameters(url, credentialID: credentialID, pin: credentialID == pinCredential ? "123" : nil),
                journal: directory
            )
            let batch = documents(20)
            let results = try await coordinator.sign(documents: batch, provider: .csc, outputDirectory: output.url)
            #expect(results.count == 20)
            let authorizations = requests(emulator, "credentials/authorize")
            let signings = requests(emulator, "signatures/signHash")
            #expect(authorizations.count == 1)
            #expect(signings.count == 1)
            let authorize = try members(authorizations.first)
            #expect(authorize["numSignatures"] == 20)
            #expect(try members(signings.first)["hashes"]?.arrayValue?.count == 20)
            if credentialID == scal2Credential { #expect(authorize["hashes"]?.arrayValue?.count == 20) }
            for document in batch {
                guard case .bytes(let content) = document.source else { continue }
                try opensslVerify(
                    signatureFile: output.path(document.name + ".p7s"),
                    contentFile: try output.write(document.name, content)
                )
            }
            #expect(try await coordinator.journal.records().count == 20)
        }
    }

    @Test("a batch larger than the credential's multisign is split: 101 documents, two authorizations (100 + 1)")
    func batchOverMultisign() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let directory = try TemporaryDirectory()
            let coordinator = try coordinator(
                cscParameters(url, credentialID: pinCredential, pin: "123"),
                journal: directory
            )
            let batch = documents(CSCEmulatorCredentials.multisign + 1)
            let results = try await coordinator.sign(documents: batch, provider: .csc)
            #expect(results.count == batch.count)
            #expect(
                try requests(emulator, "credentials/authorize").map { try members($0)["numSignatures"] } == [
                    .integer(CSCEmulatorCredentials.multisign), 1,
                ]
            )
            #expect(requests(emulator, "signatures/signHash").count == 2)
            for index in [0, CSCEmulatorCredentials.multisign - 1, CSCEmulatorCredentials.multisign] {
                guard case .bytes(let content) = batch[index].source else { continue }
                try opensslVerify(results[index].signature, content: content)
            }
        }
    }

    @Test(
        "faults → typed errors, nothing written: wrong-hash → invalidServerSignature, sad-expired → authorizationExpired, expired-token → authenticationFailed",
        arguments: [DSSEmulator.Fault.wrongHash, .sadExpired, .expiredToken]
    )
    func faults(fault: DSSEmulator.Fault) async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let expected: CertificateProviderError.Code =
                switch fault {
                case .wrongHash: .invalidServerSignature
                case .sadExpired: .authorizationExpired
                default: .authenticationFailed
                }
            let parameters = cscParameters(url, credentialID: scal2Credential)
            // The identity is resolved without the fault; the fault hits the signing calls.
            let provider = try CSCProvider(parameters: parameters, additionalHeaders: faultHeader(fault))
            let clean = try CSCProvider(parameters: parameters)
            #expect(
                try await clean.initialize(options: [:]).certificate
                    == sharedSeed.users[0].certificates[1].identity.certificate
            )
            var registry = ProviderRegistry()
            try registry.register(.csc, description: "CSC") { provider }
            let directory = try TemporaryDirectory()
            let output = try TemporaryDirectory()
            let coordinator = SigningCoordinator(
                registry: registry,
                journal: try SignatureJournal(url: directory.url.appendingPathComponent("j.sqlite"))
            )
            let single = output.url.appendingPathComponent("single.p7s")
            if fault == .expiredToken {
                // The token expires on every request: the provider cannot even initialize.
                await expectError(expected) {
                    try await coordinator.sign(
                        document: .bytes([1, 2, 3], name: "single"),
                        provider: .csc,
                        output: single
                    )
                }
            } else {
                await expectError(expected) {
                    try await coordinator.sign(
                        document: .bytes([1, 2, 3], name: "single"),
                        provider: .csc,
                        output: single
                    )
                }
                await expectError(expected) {
                    try await coordinator.sign(documents: documents(5), provider: .csc, outputDirectory: output.url)
                }
                #expect(requests(emulator, "signatures/signHash").count == 2)
            }
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: output.url.path).isEmpty,
                "no signature file was written"
            )
            #expect(try await coordinator.journal.records().isEmpty)
        }
    }

    @Test(
        "credential selection: several credentials without credentialID, or an unknown one, is invalidParameter naming them"
    )
    func selection() async throws {
        try await withEmulator(.faultsAndSecrets) { _, url in
            let several = await expectError(.invalidParameter) {
                try await CSCProvider(parameters: cscParameters(url)).initialize(options: [:])
            }
            #expect(several?.reason.contains("\(pinCredential), \(scal2Credential)") == true)
            let unknown = await expectError(.invalidParameter) {
                try await CSCProvider(parameters: cscParameters(url, credentialID: "404")).initialize(options: [:])
            }
            #expect(unknown?.reason.contains("the client has: \(pinCredential), \(scal2Credential)") == true)
            let provider = try CSCProvider(parameters: cscParameters(url, credentialID: pinCredential))
            #expect(try provider.storedCertificate() == nil)
            let identity = try await provider.initialize(options: [:])
            #expect(identity.chain == [sharedSeed.certificateAuthority])
            #expect(try provider.storedCertificate()?.certificate == identity.certificate)
            try provider.deleteStoredCertificate()
            #expect(try provider.storedCertificate() == nil)
            #expect(provider.providerID == .csc)
            #expect(!provider.parameters.description.contains(StandardSeed.password))
            #expect(throws: CertificateProviderError.self) { try provider.setParameters(["username": .string("x")]) }
        }
    }

    @Test("trustedCAFile: the emulator over HTTPS is trusted through its CA file, and untrusted without it")
    func trustedCAFile() async throws {
        try await withEmulator(.init(tls: .init())) { _, url in
            let directory = try TemporaryDirectory()
            let ca = try directory.write("ca.pem", text: sharedSeed.certificateAuthority.pemRepresentation)
            var parameters = cscParameters(url, credentialID: pinCredential)
            await expectError(.untrustedServerCertificate) {
                try await CSCProvider(parameters: parameters).initialize(options: [:])
            }
            parameters[CSCProvider.ParameterKey.trustedCAFile] = .string(ca)
            let identity = try await CSCProvider(parameters: parameters).initialize(options: [:])
            #expect(identity.certificate == sharedSeed.users[0].certificates[0].identity.certificate)
        }
    }

    @Test(
        "clientIdentity: a service that demands a TLS client certificate gets the one the alias names; none is clientCertificateRejected"
    )
    func clientIdentity() async throws {
        let clients = try TestPKI(rootSubject: "CN=CSC Client CA")
        let identity = try clients.issueLeaf(subject: "CN=certsign client")
        try await withEmulator(.init(tls: .init(clientCertificateAuthorities: [clients.root.certificate]))) { _, url in
            let directory = try TemporaryDirectory()
            var parameters = cscParameters(url, credentialID: pinCredential)
            parameters[CSCProvider.ParameterKey.trustedCAFile] = .string(
                try directory.write("ca.pem", text: sharedSeed.certificateAuthority.pemRepresentation)
            )
            let resolver: ClientIdentityLookup = { alias, password in
                guard alias == "client", password == Secret("store-pw") else {
                    throw CertificateProviderError(.notStored, "no identity '\(alias)' with that password")
                }
                return identity
            }
            await expectError(.clientCertificateRejected) {
                try await CSCProvider(parameters: parameters, clientIdentityLookup: resolver).initialize(options: [:])
            }
            parameters[CSCProvider.ParameterKey.clientIdentity] = .string("client")
            parameters[CSCProvider.ParameterKey.clientIdentityPassword] = .secret(Secret("store-pw"))
            let signer = try await CSCProvider(parameters: parameters, clientIdentityLookup: resolver).initialize(
                options: [:])
            #expect(signer.certificate == sharedSeed.users[0].certificates[0].identity.certificate)
            await expectError(.invalidParameter) {
                try await CSCProvider(parameters: parameters).initialize(options: [:])
            }
        }
    }
}
