public import Signing

extension PDFSignatureReport {
    /// What this signature (or document timestamp) comes to in the words of ETSI EN 319 102-1 (see
    /// `Indication`): a broken ByteRange, or a later change its modification policy does not allow,
    /// is FAILED/FORMAT_FAILURE; otherwise the CMS verification's (or the token's) indication.
    public var indication: Indication { verdict(allowingChanges: false).indication }
    /// Why ``indication`` is not passed; nil when it is.
    public var subIndication: SubIndication? { verdict(allowingChanges: false).subIndication }

    /// The indication, sub-indication and reason; with `allowingChanges`, changes the policy does
    /// not allow are left to the caller to warn about (`verify --allow-changes`).
    ///
    /// EN 319 102-1 judges the CMS signature; the changes a PDF's later revisions make are judged
    /// as EU DSS does in its format checks (DocMDP, FieldMDP, undefined changes): a signed document
    /// that now shows what its policy forbids is a format failure, not an integrity failure of the
    /// signed revision (which is intact). pyHanko's AdES processes leave the changes out of the
    /// indication (they pass such a signature) and report them beside it; the signature is
    /// nevertheless not what was signed, so this package fails it.
    package func verdict(allowingChanges: Bool) -> Verdict {
        if let byteRangeProblem { return Verdict(.failed, .formatFailure, byteRangeProblem) }
        let signature = verification.verdict
        if signature.indication == .failed || allowingChanges || changesAllowed { return signature }
        let refused = changes.filter { !$0.isAllowed }.count
        return Verdict(
            .failed,
            .formatFailure,
            "\(refused) later change\(refused == 1 ? "" : "s") the signature's policy does not allow"
                + (laterChangesDetail.map { ": \($0)" } ?? "")
        )
    }
}
