import CertificateProviders
internal import Durability
import Foundation
import JSON

/// `certsign dss certificates | sign | signs | remove`: the DSS calls of the logged-in user.
extension FMPDSSProvider {
    /// `certsign dss certificates [--dss-password-env VAR | --dss-password-file PATH]`.
    static let certificatesCommand = ProviderCommand(
        words: ["dss", "certificates"],
        summary: "list the DSS certificates of the logged-in user",
        discussion: "The DSS password is asked for when stdin is a terminal and no source is given.",
        examples: ["certsign dss certificates --dss-password-env DSS_PASSWORD"],
        options: [.init("dss-password", .secret(standardInput: false), "the DSS password")],
        readsStore: true
    ) { invocation in
        try requireSession(for: "certificates", invocation)
        let dssPassword = try invocation.requiredSecret("dss-password", prompt: "DSS password: ")
        let provider = try commandProvider(invocation, [ParameterKey.dssPassword: .secret(dssPassword)])
        let result = try await reportingEnvelope(provider) { try await provider.certificates() }
        return ProviderCommand.Output(
            headers: ["ID", "SUBJECT", "VALID UNTIL", "PIN"],
            rows: result.value.map {
                [String($0.id), $0.subject, $0.notAfter.map(invocation.dateText) ?? "-", $0.hasPIN ? "yes" : "no"]
            },
            whenEmpty: "no certificates",
            document: envelopeDocument(result.envelope)
        )
    }

    /// `certsign dss sign --resource R --table T --column C --hhive-id N --certificate-id N …`.
    static let signCommand = ProviderCommand(
        words: ["dss", "sign"],
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
        ],
        options: [
            .init("resource", .value(placeholder: "R"), "the platform resource", required: true),
            .init("table", .value(placeholder: "T"), "the resource's table", required: true),
            .init("params", .value(placeholder: "JSON"), "the resource's parameters as JSON", default: "{}"),
            .init("column", .value(placeholder: "C"), "the column of the cell", required: true),
            .init(
                "hhive-id",
                .value(placeholder: "N", type: .integer(Int.min...Int.max)),
                "the row of the cell",
                required: true
            ),
            .init(
                "certificate-id",
                .value(placeholder: "N", type: .integer(Int.min...Int.max)),
                "the DSS certificate to sign with ('certsign dss certificates')",
                required: true
            ),
            .init("dss-password", .secret(standardInput: false), "the DSS password"),
            .init("pin", .secret(standardInput: false), "the certificate's PIN"),
        ],
        readsStore: true
    ) { invocation in
        let cell = try SignValues(invocation)
        try requireSession(for: "sign", invocation)
        let dssPassword = try invocation.requiredSecret("dss-password", prompt: "DSS password: ")
        var parameters: ProviderParameters = [
            ParameterKey.dssPassword: .secret(dssPassword),
            ParameterKey.certificateID: .integer(cell.certificateID),
        ]
        if let pin = try invocation.secret("pin", prompt: "PIN of certificate \(cell.certificateID): ") {
            parameters[ParameterKey.pin] = .secret(pin)
        }
        let provider = try commandProvider(invocation, parameters)
        let result = try await reportingEnvelope(provider) {
            try await provider.sign(
                resource: cell.resource,
                table: cell.table,
                params: cell.params,
                column: cell.column,
                hhiveID: cell.hhiveID
            )
        }
        return ProviderCommand.Output(
            text: "signed: signature_id \(result.value)",
            document: envelopeDocument(result.envelope)
        )
    }

    /// What `dss sign` was given, checked before anything is read or sent.
    struct SignValues {
        var resource: String
        var table: String
        var params: JSONValue
        var column: String
        var hhiveID: Int
        var certificateID: Int

        /// - Throws: `ProviderCommand.UsageError` naming the option that does not fit.
        init(_ invocation: ProviderCommand.Invocation) throws {
            resource = try invocation.requiredValue("resource")
            table = try invocation.requiredValue("table")
            do {
                params = try JSONValue(parsing: invocation.values["params"] ?? "{}")
            } catch {
                throw ProviderCommand.UsageError("--params must be JSON, such as '{}' or '{\"year\": 2026}'")
            }
            column = try invocation.requiredValue("column")
            // The tool checked both are whole numbers (their declared type).
            guard let hhiveID = Int(try invocation.requiredValue("hhive-id")),
                let certificateID = Int(try invocation.requiredValue("certificate-id"))
            else {
                throw ProviderCommand.UsageError("--hhive-id and --certificate-id must be whole numbers")
            }
            self.hhiveID = hhiveID
            self.certificateID = certificateID
        }
    }

    /// `certsign dss signs [--out-dir DIR]`.
    static let signsCommand = ProviderCommand(
        words: ["dss", "signs"],
        summary: "list the signatures the DSS server keeps for the user",
        examples: ["certsign dss signs"],
        options: [
            .init(
                "out-dir",
                .value(placeholder: "DIR", type: .directory),
                "also write each signature as DIR/<id>.p7s (to check with certsign verify)"
            )
        ],
        readsStore: true
    ) { invocation in
        let provider = try commandProvider(invocation)
        let result = try await reportingEnvelope(provider) { try await provider.signs() }
        if let directory = invocation.values["out-dir"] {
            try FileSystem.makeOutputDirectory(directory)
            for signature in result.value {
                try FileSystem.writeAtomically(
                    URL(fileURLWithPath: directory).appendingPathComponent("\(signature.id).p7s").path,
                    signature.signature
                )
            }
        }
        return ProviderCommand.Output(
            headers: ["ID", "RESOURCE / TABLE / COLUMN / ROW", "CERTIFICATE", "CREATED"],
            rows: result.value.map {
                [
                    String($0.id), "\($0.resource) / \($0.table) / \($0.column) / \($0.hhiveID)",
                    String($0.certificateID), $0.createdAt.map(invocation.dateText) ?? "-",
                ]
            },
            whenEmpty: "no signatures",
            document: envelopeDocument(result.envelope)
        )
    }

    /// `certsign dss remove ID`: the server's signature id, a whole number.
    static let removeCommand = ProviderCommand(
        words: ["dss", "remove"],
        summary: "remove a signature from the DSS server",
        examples: ["certsign dss remove 121"],
        arguments: [.init("ID", "the signature_id ('certsign dss signs' lists them)")],
        readsStore: true
    ) { invocation in
        let text = invocation.arguments.first ?? ""
        guard let id = Int(text) else {
            throw ProviderCommand.UsageError("the signature id must be a whole number, not '\(text)'")
        }
        let provider = try commandProvider(invocation)
        let result = try await reportingEnvelope(provider) { try await provider.removeSign(id: id) }
        return ProviderCommand.Output(
            text: "removed signature \(id) (status \(FMPClient.responseStatus(from: result.envelope) ?? "?"))",
            document: envelopeDocument(result.envelope)
        )
    }
}
