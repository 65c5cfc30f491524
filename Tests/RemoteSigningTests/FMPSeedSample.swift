import CertificateProviders
import EmulatorKit
import FMPDSSProvider

/// Signs the seed sample's cell (resource, table, column, row) with the sample's certificate and PIN:
/// the one FMP sign call the transport tests make.
func signSeedSample(_ client: FMPClient) async throws -> FMPResult<Int> {
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
