internal import COpenSSL
package import Foundation

/// OpenSSL's `ASN1_TIME` (a UTCTime or a GeneralizedTime) and dates: the one conversion each way.
///
/// Times cross this module's interface as `OpaquePointer`s (`OpaquePointer(time)` of an
/// `ASN1_TIME *`) so that no OpenSSL type appears in it.
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

    /// The whole second an `ASN1_TIME` of `date` names: the fraction is dropped towards the past,
    /// also before 1970, so a time never names a second after the instant it stands for.
    package static func seconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }

    /// Sets `time` (an existing `ASN1_TIME`, such as a certificate's notBefore) to `date`, as RFC 5280
    /// encodes it: a UTCTime from 1950 through 2049, a GeneralizedTime before and after.
    /// - Returns: false when OpenSSL refused.
    package static func set(_ time: OpaquePointer, to date: Date) -> Bool {
        ASN1_TIME_set(UnsafeMutablePointer<ASN1_TIME>(time), time_t(seconds(date))) != nil
    }
}

/// Owns one `ASN1_TIME` made for a date and frees it in `deinit`.
package final class ASN1TimeHandle {
    /// The owned time (`ASN1_TIME *`); borrowed by callers for the duration of a call.
    package let pointer: OpaquePointer

    /// A new time of `date`, encoded as ``ASN1Time/set(_:to:)`` does.
    /// - Throws: `OpenSSLError` when OpenSSL cannot encode the date.
    package init(_ date: Date) throws {
        guard let time = ASN1_TIME_set(nil, time_t(ASN1Time.seconds(date))) else {
            throw OpenSSLError(.cryptoFailure, "could not encode the time \(date)")
        }
        pointer = OpaquePointer(time)
    }

    deinit { ASN1_TIME_free(UnsafeMutablePointer<ASN1_TIME>(pointer)) }

    /// The ASN.1 type: `V_ASN1_UTCTIME` or `V_ASN1_GENERALIZEDTIME`.
    package var type: Int32 { UnsafePointer<ASN1_TIME>(pointer).pointee.type }

    /// The time's content octets (`YYMMDDHHMMSSZ` or `YYYYMMDDHHMMSSZ`).
    package var contentBytes: [UInt8] {
        let time = UnsafePointer<ASN1_TIME>(pointer)
        guard let data = ASN1_STRING_get0_data(time) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(time))))
    }
}
