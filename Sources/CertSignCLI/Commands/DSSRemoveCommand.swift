import CertificateProviders
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import PKCS12Provider

/// `certsign dss remove`: removes one of the server's signatures (HHFWDss `remove`).
extension Commands {
    /// `certsign dss remove ID`: the server's signature id, a whole number.
    struct DSSRemoveOptions: CommandOptions {
        var id = 0

        static var arguments: [ArgumentBinding<Self>] {
            [
                .one(\.id, "ID", "the signature_id ('certsign dss signs' lists them)") { text in
                    guard let id = Int(text) else {
                        throw InvalidValue(message: "the signature id must be a whole number, not '\(text)'")
                    }
                    return id
                }
            ]
        }
    }

    static let dssRemove = CommandDescriptor(
        words: ["dss", "remove"],
        storeUse: .reads,
        summary: "remove a signature from the DSS server",
        examples: ["certsign dss remove 121"]
    ) { (options: DSSRemoveOptions, context) in
        let id = options.id
        let provider = try context.fmpProvider()
        let result = try await context.reportingEnvelope(provider) { try await provider.removeSign(id: id) }
        context.emit(
            encoding: envelopeJSON(result.envelope),
            human: "removed signature \(id) (status \(FMPClient.responseStatus(from: result.envelope) ?? "?"))"
        )
        return CertSign.exitSuccess
    }
}
