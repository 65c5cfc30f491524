import CertificateProviders
import CertificateProvidersTesting
import DSSEmulator
import FMPDSSProvider
import Foundation
import RemoteSigning
import Testing

/// One seed (keys made once) shared by every emulator of this test target.
let sharedSeed: EmulatorSeed = {
    do { return try EmulatorSeed.standard() } catch { fatalError("cannot build the emulator seed: \(error)") }
}()

/// Starts an emulator on an ephemeral loopback port for the duration of `body`.
/// `keepSecrets` makes the request log keep passwords and PINs (for tests of the exact wire bytes).
func withEmulator<R>(
    faults: Bool = false,
    keepSecrets: Bool = false,
    _ body: (DSSEmulator, URL) async throws -> R
) async throws -> R {
    let emulator = try DSSEmulator(
        configuration: .init(faultsEnabled: faults, requestLogKeepsSecrets: keepSecrets),
        seed: sharedSeed
    )
    let url = try emulator.start()
    defer { emulator.stop() }
    return try await body(emulator, url)
}

/// A client configured for the standard seed.
func makeClient(
    _ url: URL,
    timeout: TimeInterval = 10,
    retryPolicy: RetryPolicy = .default,
    headers: [(name: String, value: String)] = []
) -> FMPClient {
    FMPClient(
        configuration: .init(
            host: url,
            environment: StandardSeed.environment,
            project: StandardSeed.project,
            device: "test-device-1",
            timeout: timeout,
            retryPolicy: retryPolicy,
            additionalHeaders: headers
        )
    )
}

/// A logged-in client.
func loggedInClient(
    _ url: URL,
    timeout: TimeInterval = 10,
    headers: [(name: String, value: String)] = []
) async throws -> FMPClient {
    let client = makeClient(url, timeout: timeout, headers: headers)
    _ = try await client.auth(username: StandardSeed.username, password: Secret(StandardSeed.password))
    return client
}

/// Signs the sample's cell with the sample's certificate.
func signSample(_ client: FMPClient) async throws -> FMPResult<Int> {
    try await client.sign(
        resource: StandardSeed.resource,
        table: StandardSeed.table,
        params: [:],
        column: StandardSeed.column,
        hhiveID: StandardSeed.row,
        dssPassword: Secret(StandardSeed.dssPassword),
        certificateID: StandardSeed.certificateID,
        certificatePIN: Secret(StandardSeed.certificatePIN)
    )
}

/// The requests of the log whose path ends with `suffix`.
func requests(_ emulator: DSSEmulator, endingWith suffix: String) -> [DSSEmulator.ReceivedRequest] {
    emulator.receivedRequests.filter { $0.path.hasSuffix(suffix) }
}

/// The route names of the log, in order (`obtain`, `refresh`, `signs`, `sign`, …).
func routeLog(_ emulator: DSSEmulator) -> [String] {
    emulator.receivedRequests.map { request in
        let parts = request.path.split(separator: "/")
        if request.method == "DELETE" { return "remove" }
        return parts.last.map(String.init) ?? ""
    }
}

/// Expects a `CertificateProviderError` with `code`.
@discardableResult
func expectError<R>(
    _ code: CertificateProviderError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> CertificateProviderError? {
    do {
        _ = try await body()
        Issue.record("expected \(code), but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as CertificateProviderError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected CertificateProviderError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Verifies an attached CAdES with `openssl cms -verify -binary -cades` against the emulator's CA;
/// returns the content.
func opensslVerify(_ cms: [UInt8], emulator: DSSEmulator) throws -> String {
    let directory = try TemporaryDirectory()
    let signature = try directory.write("signature.der", cms)
    let ca = try directory.write("ca.pem", text: emulator.certificateAuthorityPEM)
    let output = directory.path("content.txt")
    let result = try ExternalTool.run(
        "openssl",
        [
            "cms", "-verify", "-binary", "-cades", "-inform", "DER", "-in", signature,
            "-CAfile", ca, "-purpose", "any", "-out", output,
        ]
    )
    #expect(result.succeeded, "openssl cms -verify failed: \(result.errorOutput)")
    return String(decoding: try directory.read("content.txt"), as: UTF8.self)
}
