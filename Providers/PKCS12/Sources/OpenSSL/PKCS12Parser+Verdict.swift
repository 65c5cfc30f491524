internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

extension PKCS12Parser {
    /// The password form that passes the file's integrity check (MAC), or nil when none does.
    /// - Throws: `.unsupportedAlgorithm` (or the GOST engine's error) for a MAC digest this OpenSSL
    ///   cannot compute; `.malformedInput` when the MAC cannot be computed at all.
    static func verifyMAC(
        _ p12: OpaquePointer,
        mac: (algorithm: PKCS12File.Algorithm, iterations: Int?)?,
        candidates: [PasswordForm],
        iterationsSpent: inout Int
    ) throws -> PasswordForm? {
        for form in candidates {
            try spend(mac?.iterations, on: "integrity check (MAC)", total: &iterationsSpent)
            OpenSSLErrorQueue.clear()
            if form.with({ PKCS12_verify_mac(p12, $0, $1) }) == 1 { return form }
            let entries = OpenSSLErrorQueue.drainEntries()
            guard entries.isEmpty else {
                if isUnsupported(entries) {
                    if let mac, usesGOST(mac.algorithm), !GOSTEngine.isAvailable {
                        throw GOSTEngine.unavailableError("the PKCS#12 file's integrity check (MAC, \(mac.algorithm))")
                    }
                    throw CertificateProviderError(
                        .unsupportedAlgorithm,
                        "the file's integrity check (MAC) uses "
                            + "\(mac?.algorithm.description ?? "an unknown digest"), which this OpenSSL cannot "
                            + "compute",
                        openSSLErrors: entries.map(\.text)
                    )
                }
                throw CertificateProviderError(
                    .malformedInput,
                    "the file's integrity check (MAC) cannot be computed: the PKCS#12 file is corrupt",
                    openSSLErrors: entries.map(\.text)
                )
            }
        }
        return nil
    }

    /// What a walk's outcome means: a wrong or missing password, an algorithm OpenSSL cannot run, a
    /// damaged file, or success.
    struct Verdict {
        var contents: Contents
        var passwordGiven: Bool
        var legacyAvailable: Bool
        var macPresent: Bool
        var macVerified: Bool

        /// Returns when the contents are complete.
        /// - Throws: `.passwordRequired`, `.wrongPassword`, `.unsupportedAlgorithm` or `.malformedInput`.
        func check() throws {
            if macPresent && !macVerified {
                if contents.decryptedParts > 0 {
                    throw CertificateProviderError(
                        .malformedInput,
                        "the PKCS#12 file's integrity check (MAC) fails although the password decrypts it: the file "
                            + "is corrupt or was modified"
                    )
                }
                if !contents.unsupported.isEmpty { throw unsupported(contents.unsupported) }
                throw wrongPassword(" (its integrity check fails)")
            }
            guard !contents.failures.isEmpty else { return }
            if !contents.unsupported.isEmpty { throw unsupported(contents.unsupported) }
            if contents.decryptedParts == 0 && !contents.malformed {
                if macVerified {
                    throw CertificateProviderError(
                        .wrongPassword,
                        "the password checks the PKCS#12 file's integrity but does not decrypt its contents (the "
                            + "file uses a second password)",
                        openSSLErrors: contents.openSSLErrors
                    )
                }
                throw wrongPassword("")
            }
            throw CertificateProviderError(
                .malformedInput,
                "part of the PKCS#12 file cannot be decrypted or decoded: the file is corrupt",
                openSSLErrors: contents.openSSLErrors
            )
        }

        private func wrongPassword(_ detail: String) -> CertificateProviderError {
            if !passwordGiven {
                return CertificateProviderError(
                    .passwordRequired,
                    "the PKCS#12 file is protected by a password; give its password"
                )
            }
            return CertificateProviderError(.wrongPassword, "the password does not open the PKCS#12 file\(detail)")
        }

        private func unsupported(_ names: [String]) -> CertificateProviderError {
            let name = names.first ?? "an unknown algorithm"
            if !GOSTEngine.isAvailable,
                (contents.keyEncryption + contents.contentEncryption).contains(where: PKCS12Parser.usesGOST)
            {
                return GOSTEngine.unavailableError("the PKCS#12 file's encryption (\(name))")
            }
            let hint =
                !legacyAvailable && (name.contains("RC2") || name.contains("RC4") || name.contains("DES"))
                ? "; OpenSSL's legacy provider could not be loaded (install it or set OPENSSL_MODULES)" : ""
            return CertificateProviderError(
                .unsupportedAlgorithm,
                "the PKCS#12 file is encrypted with \(name), which this OpenSSL cannot decrypt\(hint)",
                openSSLErrors: contents.openSSLErrors
            )
        }
    }
}
