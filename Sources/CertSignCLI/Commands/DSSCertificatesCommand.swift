import CertificateProviders
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import PKCS12Provider

/// `certsign dss certificates`: the DSS certificates of the logged-in user.
extension Commands {
    /// `certsign dss certificates [--dss-password-env VAR | --dss-password-file PATH]`.
    struct DSSCertificatesOptions: CommandOptions {
        var dssPassword = SecretInput()

        static var options: [OptionBinding<Self>] {
            .secretSources(\.dssPassword, "dss-password", "the DSS password")
        }
    }

    static let dssCertificates = CommandDescriptor(
        words: ["dss", "certificates"],
        storeUse: .reads,
        summary: "list the DSS certificates of the logged-in user",
        discussion: "The DSS password is asked for when stdin is a terminal and no source is given.",
        examples: ["certsign dss certificates --dss-password-env DSS_PASSWORD"]
    ) { (options: DSSCertificatesOptions, context) in
        try context.requireFMPSession(for: "certificates")
        let dssPassword = try context.requiredSecret(options.dssPassword, prompt: "DSS password: ")
        let provider = try context.fmpProvider([FMPDSSProvider.ParameterKey.dssPassword: .secret(dssPassword)])
        let result = try await context.reportingEnvelope(provider) { try await provider.certificates() }
        let rows = result.value.map {
            [String($0.id), $0.subject, $0.notAfter.map(Format.localDate) ?? "-", $0.hasPIN ? "yes" : "no"]
        }
        context.emit(
            encoding: envelopeJSON(result.envelope),
            human: result.value.isEmpty
                ? "no certificates" : Format.table(["ID", "SUBJECT", "VALID UNTIL", "PIN"], rows)
        )
        return CertSign.exitSuccess
    }

    static var dssSignUsage: String { dssSign.usage }
}
