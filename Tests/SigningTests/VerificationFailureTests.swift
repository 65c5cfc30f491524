import CertificateProviders
import Foundation
import Signing
import TestSupport
import Testing

@Suite("VerificationFailure: codes keep their names, OpenSSL's lines only in the debug description")
struct VerificationFailureTests {
    @Test("Every verification code's raw value is its name, as JSON output and reports spell it")
    func rawValues() {
        let codes: [(VerificationFailure.Code, String)] = [
            (.contentChanged, "contentChanged"), (.contentMissing, "contentMissing"),
            (.untrustedSigner, "untrustedSigner"), (.signerExpired, "signerExpired"), (.malformed, "malformed"),
            (.signatureInvalid, "signatureInvalid"), (.certificateSwapped, "certificateSwapped"),
            (.signerCertificateMissing, "signerCertificateMissing"), (.weakAlgorithm, "weakAlgorithm"),
            (.certificateNotForSigning, "certificateNotForSigning"), (.timestampInvalid, "timestampInvalid"),
            (.signerRevoked, "signerRevoked"), (.revocationUnknown, "revocationUnknown"),
            (.unsupportedAlgorithm, "unsupportedAlgorithm"), (.algorithmMismatch, "algorithmMismatch"),
            (.limitExceeded, "limitExceeded"),
        ]
        for (code, name) in codes { #expect(code.rawValue == name) }
        #expect(CertificateProviderError.Code.serverSignatureMismatch.rawValue == "serverSignatureMismatch")
        #expect(CertificateProviderError.Code.timestampInvalid.rawValue == "timestampInvalid")
    }

    @Test("Bytes OpenSSL cannot read as CMS: description is code and reason; debugDescription adds OpenSSL's queue")
    func openSSLLinesInDebugDescriptionOnly() throws {
        // A ContentInfo header that promises 300 bytes and holds 3.
        let result = CMSVerifier.verify(
            signature: [0x30, 0x82, 0x01, 0x2C, 0x06, 0x01, 0x00],
            content: nil,
            trustAnchors: []
        )
        let failure = try #require(result.failure)
        #expect(failure.code == .malformed)
        #expect(failure.description == "malformed: \(failure.reason)")
        #expect(!failure.description.contains("OpenSSL"))
        #expect(failure.debugDescription.hasPrefix(failure.description))
    }
}
