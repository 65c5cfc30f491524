import CertificateProviders
import Foundation

/// `certsign verify -`: one signature or PDF from standard input.
extension Commands {
    /// One signature or PDF read from standard input (`verify -`), shown as `stdin`: a PDF goes
    /// through a private temporary file for its verifier (removed again), a CMS is verified as read.
    static func verifyStandardInput(_ run: VerifyRun) async throws -> VerifiedFile {
        let bytes = Array(run.context.console.readStandardInput())
        guard isPDF(bytes) else { return try await verifyCMSFile(bytes, path: "-", name: "stdin", run) }
        let buffer = try PDFPipeBuffer()
        defer { buffer.remove() }
        return try await pdfVerification(
            "stdin",
            file: try buffer.writeInput(bytes),
            trust: run.trust,
            policy: run.policy,
            fetcher: run.fetcher,
            allowChanges: run.options.allowChanges,
            trustedLists: run.trustedLists
        )
    }
}
