import CertificateProviders
internal import Durability
import Foundation
import Signing

/// What `pending resume` asks the provider: the answer of the operation a `.pending` file names,
/// and the mark a declined or expired operation leaves on the file.
extension Commands {
    /// The answer of `operation`: asked once (`waitTimeout` 0), or waited for up to `waitTimeout`
    /// seconds with a progress line.
    /// - Throws: `.timeout` naming the operation while it still waits; `.approvalDeclined`,
    ///   `.approvalExpired`; the provider's errors.
    static func approvedAnswer(
        _ operation: PendingRemoteSignature,
        route: ApprovalRoute,
        waitTimeout: Int,
        _ context: CommandContext
    ) async throws -> PendingSignatureAnswer {
        if waitTimeout > 0 {
            return try await route.waitForAnswer(
                operation,
                timeout: .seconds(waitTimeout),
                progress: approvalProgress(context.console, operationID: operation.operationID)
            )
        }
        guard let answer = try await route.answer(of: operation) else {
            throw CertificateProviderError(
                .timeout,
                "operation \(operation.operationID) still waits for approval; nothing was written. Run this again "
                    + "once it is approved, or add --wait-timeout SECONDS"
            )
        }
        return answer
    }

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
