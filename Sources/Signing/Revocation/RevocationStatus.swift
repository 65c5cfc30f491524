public import Foundation

/// What a revocation check found for one certificate.
public enum RevocationStatus: Sendable, Hashable, CustomStringConvertible {
    /// Not revoked, according to `source` (an OCSP responder URL or a CRL's issuer and date).
    case good(source: String)
    /// Revoked at `date`, according to `source`.
    case revoked(date: Date, source: String)
    /// No usable answer: no CRL for the issuer, no responder reachable, or answers that failed
    /// their checks; `reason` says which.
    case unknown(reason: String)

    /// A one-line summary.
    public var description: String {
        switch self {
        case .good(let source): return "good (\(source))"
        case .revoked(let date, let source): return "revoked at \(date) (\(source))"
        case .unknown(let reason): return "unknown: \(reason)"
        }
    }
}
