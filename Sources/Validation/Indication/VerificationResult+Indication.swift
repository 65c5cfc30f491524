extension VerificationResult {
    /// What the signature comes to in the words of ETSI EN 319 102-1: the worst of its signers'
    /// indications (failed over indeterminate over passed) and of the structure's own failure.
    public var indication: Indication { verdict.indication }
    /// Why ``indication`` is not passed; nil when it is. ``failure`` keeps the detail.
    public var subIndication: SubIndication? { verdict.subIndication }

    /// The indication, sub-indication and reason (the worst signer's, named when there are several).
    package var verdict: Verdict {
        if signers.isEmpty {
            if let failure { return IndicationMapping.verdict(for: failure) }
            return chainChecked
                ? .passed
                : Verdict(.indeterminate, .noCertificateChainFound, "the chain was not checked against trust anchors")
        }
        var verdicts = signers.enumerated().map { index, signer in
            let verdict = IndicationMapping.verdict(for: signer)
            return signers.count > 1 ? verdict.prefixingReason("signer \(index + 1) of \(signers.count): ") : verdict
        }
        // A failure of the whole signature (content given beside an attached one) that no signer has.
        if let failure, !signers.contains(where: { $0.failure?.code == failure.code }) {
            verdicts.insert(IndicationMapping.verdict(for: failure), at: 0)
        }
        return Verdict.worst(verdicts)
    }
}

extension SignerVerification {
    /// What this signer comes to in the words of ETSI EN 319 102-1 (see ``Indication``).
    public var indication: Indication { verdict.indication }
    /// Why ``indication`` is not passed; nil when it is. ``failure`` keeps the detail.
    public var subIndication: SubIndication? { verdict.subIndication }
    /// The indication, sub-indication and reason.
    package var verdict: Verdict { IndicationMapping.verdict(for: self) }
}

extension VerifiedTimestamp {
    /// What this timestamp comes to in the words of ETSI EN 319 102-1 (see ``Indication``).
    public var indication: Indication { verdict.indication }
    /// Why ``indication`` is not passed; nil when it is. ``failure`` keeps the detail.
    public var subIndication: SubIndication? { verdict.subIndication }
    /// The indication, sub-indication and reason.
    package var verdict: Verdict { IndicationMapping.verdict(for: self) }
}
