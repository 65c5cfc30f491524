import CertificateProviders
internal import Durability
import Foundation
import Signing

/// The mark a declined or expired operation leaves on the `.pending` file `pending resume` read.
extension Commands {
    /// Records in the `.pending` file at `path` that its operation was declined or expired (what
    /// `pending list` and `pending show` then print); nothing else changes.
    /// - Throws: `.fileSystem` when the file cannot be replaced.
    static func markPendingFile(_ path: String, _ file: PendingFile, outcome code: CertificateProviderError.Code) throws
    {
        var marked = file
        marked.completion.outcome = code == .approvalDeclined ? "declined" : "expired"
        try FileSystem.writeAtomically(path, try marked.jsonData(), mode: 0o600)
    }
}
