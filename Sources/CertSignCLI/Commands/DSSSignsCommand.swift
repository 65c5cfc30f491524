import CertificateProviders
internal import Durability
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import PKCS12Provider

/// `certsign dss signs`: the signatures the server keeps (HHFWDss `signs`).
extension Commands {
    /// `certsign dss signs [--out-dir DIR]`.
    struct DSSSignsOptions: CommandOptions {
        var outputDirectory: String?

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.outputDirectory,
                    "--out-dir",
                    "DIR",
                    "also write each signature as DIR/<id>.p7s (to check with certsign verify)",
                    type: .directory
                )
            ]
        }
    }

    static let dssSigns = CommandDescriptor(
        words: ["dss", "signs"],
        storeUse: .reads,
        summary: "list the signatures the DSS server keeps for the user",
        examples: ["certsign dss signs"]
    ) { (options: DSSSignsOptions, context) in
        let provider = try context.fmpProvider()
        let result = try await context.reportingEnvelope(provider) { try await provider.signs() }
        if let directory = options.outputDirectory {
            try context.makeOutputDirectory(directory)
            for signature in result.value {
                try FileSystem.writeAtomically(
                    URL(fileURLWithPath: directory).appendingPathComponent("\(signature.id).p7s").path,
                    signature.signature
                )
            }
        }
        let rows = result.value.map {
            [
                String($0.id), "\($0.resource) / \($0.table) / \($0.column) / \($0.hhiveID)", String($0.certificateID),
                $0.createdAt.map(Format.localDate) ?? "-",
            ]
        }
        context.emit(
            encoding: envelopeJSON(result.envelope),
            human: result.value.isEmpty
                ? "no signatures"
                : Format.table(["ID", "RESOURCE / TABLE / COLUMN / ROW", "CERTIFICATE", "CREATED"], rows)
        )
        return CertSign.exitSuccess
    }
}
