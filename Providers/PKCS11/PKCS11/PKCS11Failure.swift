internal import CPKCS11
public import CertificateProviders

extension CertificateProviderError.Code {
    /// PKCS#11: the token's user PIN is locked (too many wrong PINs); unlock it with the SO PIN.
    public static let pinLocked = Self("pinLocked")
    /// PKCS#11: no token matching the URI is present in any slot of the module.
    public static let tokenNotFound = Self("tokenNotFound")
    /// PKCS#11: the module file cannot be loaded, or is not a PKCS#11 module.
    public static let moduleNotLoadable = Self("moduleNotLoadable")
    /// PKCS#11: the private key was found but no certificate for it is on the token.
    public static let certificateNotFound = Self("certificateNotFound")
    /// PKCS#11: the module returned a `CKR_*` value none of the other codes describes.
    public static let tokenFailure = Self("tokenFailure")
}

/// A failed PKCS#11 call: the function and its `CKR_*` value. Internal: it becomes a
/// `CertificateProviderError` (with the CKR name in its reason) at the provider's boundary.
struct PKCS11Failure: Error, CustomStringConvertible {
    let function: String
    let rv: CK_RV

    var name: String { CKRNames.name(rv) }
    var description: String { "\(function) returned \(name)" }

    /// Whether the session (or the token) went away: a clean re-open may help, once.
    var sessionLost: Bool {
        [
            CK_RV(CKR_SESSION_HANDLE_INVALID), CK_RV(CKR_SESSION_CLOSED), CK_RV(CKR_TOKEN_NOT_PRESENT),
            CK_RV(CKR_DEVICE_REMOVED),
            CK_RV(CKR_CRYPTOKI_NOT_INITIALIZED), CK_RV(CKR_USER_NOT_LOGGED_IN),
            // A private object's handle dies when another part of the process logs out of the token.
            CK_RV(CKR_OBJECT_HANDLE_INVALID), CK_RV(CKR_KEY_HANDLE_INVALID),
        ].contains(rv)
    }

    /// The package error for this failure; `context` says what was being done ("signing with 'rsakey'").
    func providerError(_ context: String) -> CertificateProviderError {
        let reason = "\(context): \(function) returned \(name) (0x\(String(rv, radix: 16)))"
        return CertificateProviderError(Self.code(for: rv), reason)
    }

    /// Every `CKR_*` value maps to the code that tells the caller what to do.
    static func code(for rv: CK_RV) -> CertificateProviderError.Code {
        switch Int(rv) {
        case Int(CKR_PIN_INCORRECT), Int(CKR_PIN_INVALID), Int(CKR_PIN_LEN_RANGE): return .wrongPassword
        case Int(CKR_PIN_LOCKED): return .pinLocked
        case Int(CKR_PIN_EXPIRED), Int(CKR_USER_PIN_NOT_INITIALIZED), Int(CKR_USER_NOT_LOGGED_IN):
            return .authenticationFailed
        case Int(CKR_TOKEN_NOT_PRESENT), Int(CKR_DEVICE_REMOVED), Int(CKR_SLOT_ID_INVALID),
            Int(CKR_TOKEN_NOT_RECOGNIZED):
            return .tokenNotFound
        case Int(CKR_MECHANISM_INVALID), Int(CKR_MECHANISM_PARAM_INVALID), Int(CKR_KEY_TYPE_INCONSISTENT),
            Int(CKR_KEY_SIZE_RANGE),
            Int(CKR_FUNCTION_NOT_SUPPORTED), Int(CKR_CURVE_NOT_SUPPORTED):
            return .unsupportedAlgorithm
        case Int(CKR_KEY_FUNCTION_NOT_PERMITTED), Int(CKR_KEY_NOT_NEEDED), Int(CKR_FUNCTION_REJECTED):
            return .unsupportedOperation
        case Int(CKR_ARGUMENTS_BAD), Int(CKR_DATA_LEN_RANGE), Int(CKR_DATA_INVALID), Int(CKR_ATTRIBUTE_VALUE_INVALID),
            Int(CKR_TEMPLATE_INCOMPLETE), Int(CKR_TEMPLATE_INCONSISTENT):
            return .invalidParameter
        case Int(CKR_FUNCTION_CANCELED), Int(CKR_CANCEL): return .cancelled
        case Int(CKR_OBJECT_HANDLE_INVALID), Int(CKR_KEY_HANDLE_INVALID): return .noPrivateKey
        default: return .tokenFailure
        }
    }
}

/// Throws ``PKCS11Failure`` unless `rv` is `CKR_OK`.
@inline(__always)
func check(_ rv: CK_RV, _ function: String) throws {
    guard rv == CK_RV(CKR_OK) else { throw PKCS11Failure(function: function, rv: rv) }
}
