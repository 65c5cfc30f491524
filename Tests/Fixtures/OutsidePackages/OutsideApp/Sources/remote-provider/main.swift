// `remote-provider`: the example CSC provider of this target, written on the public products alone,
// against the package's emulator started in this process. It registers the provider, signs through
// the coordinator, verifies the signature, answers SAP's optional members from its state, and
// refuses a signature value the service got wrong. Each step prints one `name: value` line; any
// failure exits 1 with the error.

import CertificateProviders
import EmulatorKit
import Foundation
import RemoteProviderSupport
import SignatureJournal
import Signing

struct ExampleFailure: Error, CustomStringConvertible {
    let description: String
}

do {
    let emulator = try DSSEmulator(configuration: .init(faultsEnabled: true))
    let url = try emulator.start()
    defer { emulator.stop() }
    let parameters: ProviderParameters = [
        .url: .string(url.absoluteString),
        "clientID": .string(StandardSeed.username),
        "clientSecret": .secret(Secret(StandardSeed.password)),
        "credentialID": .string(CSCEmulatorCredentials.scal2CredentialID),
    ]

    // Registered by ID and used through the coordinator, as the package's own providers are.
    var registry = ProviderRegistry()
    try ExampleCSCProvider.register(in: &registry, parameters: parameters)
    let coordinator = SigningCoordinator(registry: registry, journal: try SignatureJournal.inMemory())
    let content = Array("Платёжное поручение № 12\n".utf8)
    let result = try await coordinator.sign(
        document: .bytes(content, name: "order.txt"),
        provider: ExampleCSCProvider.id
    )
    let verdict = CMSVerifier.verify(
        signature: result.signature,
        content: content,
        trustAnchors: [emulator.seed.certificateAuthority]
    )
    print("remote signed valid: \(verdict.isValid) \(verdict.failure.map(String.init(describing:)) ?? "")")
    print("remote records: \(try await coordinator.journal.count())")

    // SAP's optional members answer from the provider's state, on the concrete type.
    let provider = try ExampleCSCProvider.make(parameters: parameters, context: ProviderContext())
    print("members parameters: \(try provider.parameters.string("credentialID") ?? "none")")
    let identity = try await provider.initialize(options: [:])
    print("members stored matches: \(try provider.storedCertificate()?.certificate == identity.certificate)")
    try provider.setParameters(parameters.merging(["credentialID": .string("12831")]))
    print("members after set: \(try provider.parameters.string("credentialID") ?? "none")")
    print("members stored after set: \(try provider.storedCertificate() == nil ? "forgotten" : "kept")")

    // A value the service signed wrongly never reaches a signature.
    let faulty = try ExampleCSCProvider(
        parameters: parameters,
        additionalHeaders: [(DSSEmulator.Fault.headerName, DSSEmulator.Fault.wrongHash.headerValue)]
    )
    let key = try await faulty.initialize(options: [:]).key
    do {
        _ = try await key.signature(
            forDigest: DigestAlgorithm.sha256.hash(content),
            digestAlgorithm: .sha256,
            scheme: .rsaPKCS1v15
        )
        throw ExampleFailure(description: "a wrong signature value was accepted")
    } catch let error as CertificateProviderError {
        print("wrong value: \(error.code)")
    }
} catch {
    FileHandle.standardError.write(Data("remote-provider: \(error)\n".utf8))
    exit(1)
}
