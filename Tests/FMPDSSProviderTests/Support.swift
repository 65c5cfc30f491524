import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

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
            retryPolicy: retryPolicy
        ).withAdditionalHeaders(headers)
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

/// Verifies an attached CAdES with `openssl cms -verify -binary -cades` against the emulator's CA;
/// returns the content.
func opensslVerify(_ cms: [UInt8], emulator: DSSEmulator) throws -> String {
    let ca = try Certificate(pemEncoded: emulator.certificateAuthorityPEM)
    let result = try OpenSSLCMS.verify(cms, trust: [ca], cades: true, anyPurpose: true)
    #expect(result.succeeded, "openssl cms -verify failed: \(result.errorOutput)")
    return String(decoding: result.content, as: UTF8.self)
}
