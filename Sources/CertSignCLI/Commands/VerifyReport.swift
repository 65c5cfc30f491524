import CertificateProviders
internal import Durability
import Foundation
import ValidationReporting

/// `certsign verify … --report FILE.xml`: the ETSI TS 119 102-2 validation report of a run.
extension Commands {
    /// Writes the validation report of every signature of `files` to `path`, atomically: a path that
    /// cannot be written leaves nothing behind and fails the run (exit 1). A file that could not be
    /// read has no signature to report on (its ERROR line says why).
    static func writeReport(_ files: [VerifiedFile], to path: String) throws {
        let report = ValidationReport(signatures: files.flatMap(\.reportSignatures))
        let xml = try report.xmlData()
        do {
            // A report is a public record of the verdicts: 0644 (less the umask).
            try FileSystem.writeAtomically(path, Array(xml), mode: 0o644)
        } catch let error as CertificateProviderError {
            throw CertificateProviderError(error.code, "the validation report (--report): \(error.reason)")
        }
    }
}
