/// The main status of a validation, in the words of ETSI EN 319 102-1 §5.1.3: what a signature, a
/// signature timestamp or a document timestamp comes to once every check has run.
///
/// EN 319 102-1 names the two final states of a whole signature TOTAL-PASSED and TOTAL-FAILED and
/// those of a building block PASSED and FAILED; this package prints `PASSED`, `INDETERMINATE` and
/// `FAILED` for all of them (EU DSS and pyHanko's `pyhanko.sign.validation.ades` do the same). The
/// three states are fixed by the standard: the set is closed.
///
/// - ``passed``: every check passed; nothing more is needed.
/// - ``indeterminate``: the checks that ran passed, but the verifier lacks something to decide
///   (a chain to a trust anchor, revocation data, a proof of existence): more data may turn it
///   into passed or failed. ``SubIndication`` says what is missing.
/// - ``failed``: the signature is proven bad (altered content, a signature value that does not
///   verify, a certificate revoked before the signature existed, changes its policy forbids).
public enum Indication: String, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    /// TOTAL-PASSED (PASSED for a building block): every check passed.
    case passed = "PASSED"
    /// INDETERMINATE: the verifier could not decide with the data it had.
    case indeterminate = "INDETERMINATE"
    /// TOTAL-FAILED (FAILED for a building block): the signature is proven bad.
    case failed = "FAILED"

    /// `PASSED`, `INDETERMINATE` or `FAILED`.
    public var description: String { rawValue }

    /// How bad the indication is: passed < indeterminate < failed, so that the worst of several
    /// (the signers of one signature, the signatures of one run) is their `max()`.
    public static func < (lhs: Indication, rhs: Indication) -> Bool { lhs.severity < rhs.severity }

    private var severity: Int {
        switch self {
        case .passed: 0
        case .indeterminate: 1
        case .failed: 2
        }
    }
}
