import CertificateProviders
import Foundation
import TestSupport
import Testing

@Suite("CertificateProviderError: codes keep their names, OpenSSL's lines only in the debug description")
struct CertificateProviderErrorTests {
    @Test("Every core code's raw value is its name, as plugins, JSON output and journals spell it")
    func rawValues() {
        let codes: [(CertificateProviderError.Code, String)] = [
            (.providerNotFound, "providerNotFound"), (.providerAlreadyRegistered, "providerAlreadyRegistered"),
            (.unsupportedOperation, "unsupportedOperation"), (.invalidParameter, "invalidParameter"),
            (.wrongPassword, "wrongPassword"), (.passwordRequired, "passwordRequired"),
            (.malformedInput, "malformedInput"), (.unsupportedAlgorithm, "unsupportedAlgorithm"),
            (.noPrivateKey, "noPrivateKey"), (.keyCertificateMismatch, "keyCertificateMismatch"),
            (.notStored, "notStored"), (.alreadyExists, "alreadyExists"), (.storeCorrupted, "storeCorrupted"),
            (.fileSystem, "fileSystem"), (.authenticationFailed, "authenticationFailed"),
            (.serverRejected, "serverRejected"), (.network, "network"), (.timeout, "timeout"),
            (.cancelled, "cancelled"), (.cryptoFailure, "cryptoFailure"),
        ]
        for (code, name) in codes { #expect(code.rawValue == name) }
        // A plugin's own code still compares by its string.
        #expect(CertificateProviderError.Code("wrongPassword") == .wrongPassword)
    }

    @Test("A corrupt certificate: description is code and reason; debugDescription adds OpenSSL's queue")
    func openSSLLinesInDebugDescriptionOnly() throws {
        // A SEQUENCE header that promises 300 bytes and holds 3: OpenSSL's d2i_X509 fails and queues why.
        let truncated: [UInt8] = [0x30, 0x82, 0x01, 0x2C, 0x30, 0x01, 0x00]
        let error = try #require(throws: CertificateProviderError.self) { try Certificate(derEncoded: truncated) }
        #expect(error.code == .malformedInput)
        #expect(error.description == "malformedInput: \(error.reason)")
        #expect(!error.description.contains("OpenSSL"))
        #expect(error.debugDescription.hasPrefix(error.description + " (OpenSSL: "))
        #expect(error.debugDescription.contains("asn1") || error.debugDescription.contains("ASN1"))
    }

    @Test("An error made without OpenSSL has the same description and debugDescription")
    func plainError() {
        let error = CertificateProviderError(.notStored, "nothing is stored under 'alice'")
        #expect(error.description == "notStored: nothing is stored under 'alice'")
        #expect(error.debugDescription == error.description)
    }
}
