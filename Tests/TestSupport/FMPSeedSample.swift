import CertificateProviders
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient

/// Signs the seed sample's cell (resource, table, column, row) with the sample's certificate and PIN:
/// the one FMP sign call the transport tests make.
package func signSeedSample(_ client: FMPClient) async throws -> FMPResult<Int> {
    try await client.sign(
        resource: StandardSeed.resource,
        table: StandardSeed.table,
        column: StandardSeed.column,
        hhiveID: StandardSeed.row,
        dssPassword: Secret(StandardSeed.dssPassword),
        certificateID: StandardSeed.certificateID,
        certificatePIN: Secret(StandardSeed.certificatePIN)
    )
}

/// A client of the seed's environment and project on `base`, as device `device`.
package func seedClient(_ base: URL, _ transport: any HTTPTransport, device: String) -> FMPClient {
    FMPClient(
        configuration: .init(
            host: base,
            environment: StandardSeed.environment,
            project: StandardSeed.project,
            device: device
        ),
        transport: transport
    )
}

/// ``seedClient(_:_:device:)``, logged in as the seed's user.
package func loggedInSeedClient(_ base: URL, _ transport: any HTTPTransport, device: String) async throws -> FMPClient {
    let client = seedClient(base, transport, device: device)
    _ = try await client.auth(username: StandardSeed.username, password: Secret(StandardSeed.password))
    return client
}
