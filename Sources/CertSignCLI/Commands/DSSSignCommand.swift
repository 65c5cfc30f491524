import CertificateProviders
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import PKCS12Provider

/// `certsign dss sign`: the server signs a resource cell (HHFWDss `signCertificate`).
extension Commands {
    /// `certsign dss sign --resource R --table T --column C --hhive-id N --certificate-id N …`.
    struct DSSSignOptions: CommandOptions {
        // Required options are always set by the parser; --params defaults to {}.
        var resource = ""
        var table = ""
        var params: JSONValue = [:]
        var column = ""
        var hhiveID = 0
        var certificateID = 0
        var dssPassword = SecretInput()
        var pin = SecretInput()

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                .value(
                    \.resource,
                    "--resource",
                    "R",
                    "the platform resource",
                    required: true,
                    convert: ValueConversions.nonEmpty("--resource")
                ),
                .value(
                    \.table,
                    "--table",
                    "T",
                    "the resource's table",
                    required: true,
                    convert: ValueConversions.nonEmpty("--table")
                ),
                .value(\.params, "--params", "JSON", "the resource's parameters as JSON", default: "{}") { text in
                    do {
                        return try JSONValue(parsing: text)
                    } catch {
                        throw InvalidValue(message: "--params must be JSON, such as '{}' or '{\"year\": 2026}'")
                    }
                },
                .value(
                    \.column,
                    "--column",
                    "C",
                    "the column of the cell",
                    required: true,
                    convert: ValueConversions.nonEmpty("--column")
                ),
                .integer(\.hhiveID, "--hhive-id", "N", "the row of the cell", in: Int.min...Int.max, required: true) {
                    $0
                },
                .integer(
                    \.certificateID,
                    "--certificate-id",
                    "N",
                    "the DSS certificate to sign with ('certsign dss certificates')",
                    in: Int.min...Int.max,
                    required: true
                ) { $0 },
            ]
            options += .secretSources(\.dssPassword, "dss-password", "the DSS password")
            options += .secretSources(\.pin, "pin", "the certificate's PIN")
            return options
        }
    }

    static let dssSign = CommandDescriptor(
        words: ["dss", "sign"],
        storeUse: .reads,
        summary: "sign a platform resource cell on the DSS server",
        discussion: """
            Signs the cell (resource, table, column, row = --hhive-id) with the DSS certificate
            --certificate-id; prints the signature id. A sign request is never retried automatically.
            """,
        examples: [
            """
            certsign dss sign --resource GetBudgetPlanning --table ПланированиеБюджета --column Номер \\
                       --hhive-id 1 --certificate-id 12831 --dss-password-env DSS_PASSWORD --pin-env DSS_PIN
            """
        ]
    ) { (options: DSSSignOptions, context) in
        let (resource, table, column, params) = (options.resource, options.table, options.column, options.params)
        let (hhiveID, certificateID) = (options.hhiveID, options.certificateID)
        try context.requireFMPSession(for: "sign")
        let dssPassword = try context.requiredSecret(options.dssPassword, prompt: "DSS password: ")
        var parameters: ProviderParameters = [
            FMPDSSProvider.ParameterKey.dssPassword: .secret(dssPassword),
            FMPDSSProvider.ParameterKey.certificateID: .integer(certificateID),
        ]
        if let pin = try context.secret(
            options.pin,
            prompt: "PIN of certificate \(certificateID): ",
            required: false
        ) {
            parameters[FMPDSSProvider.ParameterKey.pin] = .secret(pin)
        }
        let provider = try context.fmpProvider(parameters)
        let result = try await context.reportingEnvelope(provider) {
            try await provider.sign(resource: resource, table: table, params: params, column: column, hhiveID: hhiveID)
        }
        context.emit(encoding: envelopeJSON(result.envelope), human: "signed: signature_id \(result.value)")
        return CertSign.exitSuccess
    }
}
