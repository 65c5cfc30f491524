import CSCProvider
import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import SignatureJournal
import Signing
import TestSupport
import Testing

/// Leonid's EC credential: SCAL 1, PIN `123`.
let pinCredential = String(StandardSeed.certificateID)
/// Leonid's RSA credential: SCAL 2, no PIN.
let scal2Credential = CSCEmulatorCredentials.scal2CredentialID
/// Maria's EC credential: SCAL 1, PIN `456` and OTP.
let otpCredential = CSCEmulatorCredentials.otpCredentialID

/// Provider parameters for a client of the emulator (Leonid unless told).
func cscParameters(
    _ url: URL,
    credentialID: String? = nil,
    client: String = StandardSeed.username,
    secret: String = StandardSeed.password,
    pin: String? = nil,
    otp: String? = nil
) -> ProviderParameters {
    var parameters = ProviderParameters([
        CSCProvider.ParameterKey.url: .url(url),
        CSCProvider.ParameterKey.clientID: .string(client),
        CSCProvider.ParameterKey.clientSecret: .secret(Secret(secret)),
    ])
    if let credentialID { parameters[CSCProvider.ParameterKey.credentialID] = .string(credentialID) }
    if let pin { parameters[CSCProvider.ParameterKey.pin] = .secret(Secret(pin)) }
    if let otp { parameters[CSCProvider.ParameterKey.otp] = .secret(Secret(otp)) }
    return parameters
}

/// A client of the emulator as Leonid (or `client` / `secret`).
func makeClient(
    _ url: URL,
    client: String = StandardSeed.username,
    secret: String = StandardSeed.password,
    renewalMargin: TimeInterval = 30,
    headers: [(name: String, value: String)] = []
) -> CSCClient {
    CSCClient(
        configuration: .init(
            baseURL: url,
            clientID: client,
            clientSecret: Secret(secret),
            timeout: 10,
            renewalMargin: renewalMargin
        ).withAdditionalHeaders(headers)
    )
}

/// The fault header for `fault`.
func faultHeader(_ fault: DSSEmulator.Fault) -> [(name: String, value: String)] {
    [(DSSEmulator.Fault.headerName, fault.headerValue)]
}

/// The emulator's received requests to a CSC method (`credentials/authorize`) or to `oauth2/token`.
func requests(_ emulator: DSSEmulator, _ method: String) -> [DSSEmulator.ReceivedRequest] {
    emulator.receivedRequests.filter {
        $0.path == "/csc/v2/\(method)" || ($0.path == "/\(method)" && method == "oauth2/token")
    }
}

/// The members of a received JSON body.
func members(
    _ request: DSSEmulator.ReceivedRequest?,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> [String: JSONValue] {
    guard case .object(let members)? = request?.json else {
        Issue.record("the body is not a JSON object: \(request?.text ?? "no request")", sourceLocation: sourceLocation)
        return [:]
    }
    return members
}

/// Verifies a detached CAdES-BES with `openssl cms -verify -binary -cades` against the emulator's CA.
func opensslVerify(_ cms: [UInt8], content: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
    let directory = try TemporaryDirectory()
    let signature = try directory.write("signature.der", cms)
    try opensslVerify(
        signatureFile: signature,
        contentFile: try directory.write("document.bin", content),
        sourceLocation: sourceLocation
    )
}

/// Verifies a detached CAdES-BES file against its content file with `openssl cms -verify`.
func opensslVerify(signatureFile: String, contentFile: String, sourceLocation: SourceLocation = #_sourceLocation) throws
{
    let directory = try TemporaryDirectory()
    let result = try OpenSSLCMS.verify(
        signatureFile: signatureFile,
        contentFile: contentFile,
        caFile: try directory.write("ca.pem", text: sharedSeed.certificateAuthority.pemRepresentation),
        cades: true,
        anyPurpose: true
    )
    #expect(result.succeeded, "openssl cms -verify failed: \(result.errorOutput)", sourceLocation: sourceLocation)
}

/// The base64 of bytes, as CSC sends them.
func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

extension DSSEmulator.Configuration {
    /// Faults on, secrets kept in the request log (for tests of the exact wire bytes): this target's default.
    static var faultsAndSecrets: Self { .init(faultsEnabled: true, requestLogKeepsSecrets: true) }
}

/// A signing coordinator with the CSC provider made from `parameters` and a journal in `directory`.
func makeCoordinator(_ parameters: ProviderParameters, _ directory: TemporaryDirectory) throws -> SigningCoordinator {
    var registry = ProviderRegistry()
    try registry.register(.csc, description: "CSC") { try CSCProvider(parameters: parameters) }
    return SigningCoordinator(
        registry: registry,
        journal: try SignatureJournal(url: directory.url.appendingPathComponent("journal.sqlite"))
    )
}

/// The key of a freshly initialized provider made from asynchronous `parameters` (a new client, as a
/// restarted process has).
func approvalKey(_ parameters: ProviderParameters) async throws -> any ApprovalSigningKey {
    let identity = try await CSCProvider(parameters: parameters).initialize(options: ProviderParameters())
    let key = try #require(identity.key as? any ApprovalSigningKey)
    #expect(key.waitsForApproval)
    return key
}

/// Leonid's SCAL 2 authorization of `digest` (SHA-256) on an emulator whose implicit credentials wait
/// for the user: what `credentials/authorize` answered and the handle.
func startWaitingAuthorization(
    _ client: CSCClient,
    digest: [UInt8]
) async throws -> (CSCClient.AuthorizationResult, String) {
    let started = try await client.startAuthorization(
        credentialID: scal2Credential,
        numSignatures: 1,
        hashes: [digest],
        hashAlgorithm: .sha256
    )
    guard case .pending(let handle) = started else {
        Issue.record("the authorization did not wait for the user: \(started)")
        throw CancellationError()
    }
    return (started, handle)
}

/// Waits on a thread of its own for the emulator's first operation that waits for a person, and runs
/// `decide` with its ID there as soon as it appears (it looks every 10 ms): under a whole suite's
/// load a task of the test process's shared pool can resume minutes late, later than a `certsign`
/// process's own approval timeout, which would then give up before the decision came.
/// - Returns: what `decide` returned.
/// - Throws: what `decide` throws; `.timeout` when no operation appears within `seconds`.
func decideFirstOperation<T: Sendable>(
    of emulator: DSSEmulator,
    within seconds: TimeInterval = 120,
    _ decide: @escaping @Sendable (String) throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(seconds)
            while emulator.approvalOperationIDs.isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            guard let id = emulator.approvalOperationIDs.first else {
                continuation.resume(
                    throwing: CertificateProviderError(.timeout, "no operation waits for a person after \(seconds) s")
                )
                return
            }
            continuation.resume(with: Result { try decide(id) })
        }
    }
}
