internal import COpenSSL
package import Foundation

/// OpenSSL's `ASN1_TIME` (a UTCTime or a GeneralizedTime) and dates.
///
/// The times are passed as `OpaquePointer`s (`OpaquePointer(time)` of an `ASN1_TIME *`) so that no
/// OpenSSL type appears in this module's interface.
package enum ASN1Time {
    /// The instant an `ASN1_TIME` names, whole seconds in UTC, or nil when OpenSSL cannot read it.
    package static func date(of time: OpaquePointer) -> Date? {
        date(of: UnsafePointer<ASN1_TIME>(time))
    }

    static func date(of time: UnsafePointer<ASN1_TIME>) -> Date? {
        var components = tm()
        guard ASN1_TIME_to_tm(time, &components) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&components)))
    }
}
