// What an app's tests do with this package's testing products, built outside the package from its
// products alone: `testing-walkthrough FILE.p12 ROOT.pem STORE_DIRECTORY`, the file's password in
// SIGNER_P12_PASSWORD, run in an empty working directory (the caller checks it stays empty). Each step
// prints one `name: value` line; any failure exits 1 with the error.

import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import PKCS12Provider
import RemoteProviderSupport
import SignatureJournal
import Signing

struct WalkthroughFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// An in-memory journal, both ways: the name SQLite gives it (`:memory:`, which must not become a
/// file in the working directory) and `inMemory()`; then the testing coordinator, which uses one.
func inMemoryJournal(identity: SigningIdentity) async throws {
    let named = try SignatureJournal(url: URL(fileURLWithPath: ":memory:"))
    print("memory-name in memory: \(named.isInMemory)")
    let coordinator = try SigningCoordinator.makeForTesting(
        providers: [InMemoryCertificateProvider(id: "test.signer", identity: identity)]
    )
    _ = try await coordinator.sign(
        document: .bytes(Array("Акт сверки\n".utf8), name: "act.txt"),
        provider: "test.signer"
    )
    print("testing coordinator journal in memory: \(coordinator.journal.isInMemory)")
    print("testing coordinator records: \(try await coordinator.journal.count())")
}

/// A scripted `initialize` held at a gate: the signing call waits until the gate opens, and a call
/// cancelled while it waits ends as cancelled, with nothing recorded.
func gatedCalls(identity: SigningIdentity) async throws {
    let gate = ScriptGate()
    let provider = ScriptedCertificateProvider(id: "test.scripted", identity: identity)
    provider.script(.initialize, .waitFor(gate, then: .succeed))
    let coordinator = try SigningCoordinator.makeForTesting(providers: [provider])
    let held = Task {
        try await coordinator.sign(document: .bytes([1, 2, 3], name: "held.bin"), provider: "test.scripted")
    }
    await gate.waitForArrivals(1)
    print("gate held records: \(try await coordinator.journal.count())")
    gate.release()
    _ = try await held.value
    print("gate released records: \(try await coordinator.journal.count())")

    let closed = ScriptGate()
    let waiting = ScriptedCertificateProvider(id: "test.waiting", identity: identity)
    waiting.script(.initialize, .waitFor(closed, then: .succeed))
    let second = try SigningCoordinator.makeForTesting(providers: [waiting])
    let cancelled = Task {
        try await second.sign(document: .bytes([4, 5], name: "cancelled.bin"), provider: "test.waiting")
    }
    await closed.waitForArrivals(1)
    cancelled.cancel()
    do {
        _ = try await cancelled.value
        throw WalkthroughFailure("a cancelled call held at the gate returned a signature")
    } catch let error as CertificateProviderError {
        print("gate cancelled: \(error.code) records: \(try await second.journal.count())")
    }
}

/// An identity imported into a PKCS#12 identity store, then named by `alias` and `storePassword` in
/// the parameters of one signing call: the coordinator's provider signs with it, no file needed.
func storedIdentity(pkcs12: URL, password: Secret, root: [Certificate], storeDirectory: URL) async throws {
    let store = PKCS12IdentityStore(directory: storeDirectory)
    let (identity, _) = try store.import(
        pkcs12Data: Array(try Data(contentsOf: pkcs12)),
        password: password,
        alias: "work",
        storePassword: Secret("хранилище-2026")
    )
    var registry = ProviderRegistry()
    let base: ProviderParameters = [PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(storeDirectory.path)]
    try registry.register(.pkcs12, description: "identity store") { try PKCS12CertificateProvider(parameters: base) }
    let coordinator = SigningCoordinator(registry: registry, journal: try SignatureJournal.inMemory())
    let content = Array("Договор № 7\n".utf8)
    let result = try await coordinator.sign(
        document: .bytes(content, name: "contract.txt"),
        provider: .pkcs12,
        parameters: [
            PKCS12CertificateProvider.ParameterKey.alias: .string("work"),
            PKCS12CertificateProvider.ParameterKey.storePassword: .secret(Secret("хранилище-2026")),
        ]
    )
    print("stored identity signer matches: \(result.signerCertificate == identity.certificate)")
    let verdict = CMSVerifier.verify(signature: result.signature, content: content, trustAnchors: root)
    print("stored identity valid: \(verdict.isValid) \(verdict.failure.map(String.init(describing:)) ?? "")")
}

// The long-term signing article's code, as written there.

/// B-LT (or B-LTA) with the TSA at `tsaURL`; `roots` are the signers' and the TSA's trust anchors.
func longTermOptions(
    level: SignatureLevel = .bLT,
    tsaURL: URL,
    roots: [Certificate],
    fetcher: TransportBinaryFetcher
) throws -> SigningOptions {
    let tsa = TimestampAuthorityClient(
        configuration: .init(url: tsaURL, trustAnchors: roots),
        fetcher: fetcher
    )
    let collector = ValidationDataCollector(
        cache: RevocationDataCache(fetcher: fetcher),
        trustAnchors: roots
    )
    let upgrade = try LongTermLevelUpgrade(level: level, authority: tsa, collector: collector)
    return SigningOptions(levelUpgrade: upgrade)
}

/// Signs at B-LT against in-process services, stops them, and verifies offline.
func longTermInATest() async throws {
    let services = try LongTermTestServices()
    defer { services.stop() }
    let signer = try services.issueSigner(subject: "CN=Тестовый подписант,O=ООО Ромашка")
    let coordinator = try SigningCoordinator.makeForTesting(
        providers: [InMemoryCertificateProvider(id: "test.signer", identity: signer)]
    )
    let fetcher = TransportBinaryFetcher(transport: CurlTransport())
    let options = try longTermOptions(tsaURL: services.timestampURL, roots: services.trustAnchors, fetcher: fetcher)
    let content = Array("Квартальный отчёт\n".utf8)
    let result = try await coordinator.sign(
        document: .bytes(content, name: "act.txt"),
        provider: "test.signer",
        options: options
    )
    let asked = Set(services.emulator.receivedRequests.map(\.path))
    services.stop()
    print("long-term asked: \(["/tsa", "/ocsp", "/crl"].filter { asked.contains($0) }.joined(separator: ","))")
    print("long-term level: \(try LongTermSignatureFacts(signature: result.signature).level)")
    let verdict = CMSVerifier.verify(signature: result.signature, content: content, trustAnchors: services.trustAnchors)
    print("long-term offline valid: \(verdict.isValid) \(verdict.failure.map(String.init(describing:)) ?? "")")
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let password = ProcessInfo.processInfo.environment["SIGNER_P12_PASSWORD"] else {
    FileHandle.standardError.write(
        Data("usage: SIGNER_P12_PASSWORD=… testing-walkthrough FILE.p12 ROOT.pem STORE_DIRECTORY\n".utf8)
    )
    exit(64)
}
do {
    let pkcs12 = URL(fileURLWithPath: arguments[1])
    let identity = try PKCS12File(data: Array(try Data(contentsOf: pkcs12)), password: Secret(password)).identity()
    try await inMemoryJournal(identity: identity)
    try await gatedCalls(identity: identity)
    let root = try Certificate.certificates(derOrPEM: Array(try Data(contentsOf: URL(fileURLWithPath: arguments[2]))))
    try await storedIdentity(
        pkcs12: pkcs12,
        password: Secret(password),
        root: root,
        storeDirectory: URL(fileURLWithPath: arguments[3])
    )
    try await longTermInATest()
} catch {
    FileHandle.standardError.write(Data("testing-walkthrough: \(error)\n".utf8))
    exit(1)
}
