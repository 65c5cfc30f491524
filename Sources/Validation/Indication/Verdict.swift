import CertificateProviders
import Foundation

/// An indication with its sub-indication and the sentence behind it: what one signature, signer or
/// timestamp comes to (see ``Indication``). ``IndicationMapping`` makes these from the
/// ``VerificationFailure`` codes and their context.
package struct Verdict: Sendable, Hashable, CustomStringConvertible {
    /// The main status.
    package let indication: Indication
    /// Why it is not passed; nil when passed.
    package let subIndication: SubIndication?
    /// The reason in words (the failure's reason, or what was not checked); nil when passed.
    package let reason: String?

    /// Creates a verdict.
    package init(_ indication: Indication, _ subIndication: SubIndication?, _ reason: String?) {
        self.indication = indication
        self.subIndication = subIndication
        self.reason = reason
    }

    /// Every check passed.
    package static let passed = Verdict(.passed, nil, nil)

    /// The verdict line of command-line output: `PASSED`, `INDETERMINATE: NO_CERTIFICATE_CHAIN_FOUND
    /// — the reason`, `FAILED: HASH_FAILURE — the reason`.
    package var description: String {
        guard indication != .passed else { return indication.rawValue }
        let sub = subIndication.map { ": \($0)" } ?? ""
        return "\(indication)\(sub)\(reason.map { " — \($0)" } ?? "")"
    }

    /// This verdict with its reason prefixed (`signer 2 of 3: …`).
    package func prefixingReason(_ prefix: String) -> Verdict {
        Verdict(indication, subIndication, reason.map { prefix + $0 })
    }

    /// The worst of `verdicts` (failed over indeterminate over passed; the first among equals), or
    /// passed when there are none.
    package static func worst(_ verdicts: some Sequence<Verdict>) -> Verdict {
        var worst = Verdict.passed
        for verdict in verdicts where verdict.indication > worst.indication { worst = verdict }
        return worst
    }
}
