import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS11Provider
import Signing
import TestSupport
import Testing

/// Two providers for one token in one process. PKCS#11 keeps the login per application and token,
/// so the second provider's sessions are logged in by the first one's login: it must still prove
/// its own PIN (against the salted verifier the first login left), and never sign without it.
@Suite(
    "PKCS#11 logins per provider on SoftHSM2",
    .enabled(if: SoftHSMFixture.isAvailable, "softhsm2, opensc or openssl is not installed"),
    .serialized  // both tests use the one token and count its logins
)
struct PKCS11SharedLoginTests {
    static let uri = "pkcs11:token=\(SoftHSMFixture.Token.sharedLogin);object=eckey"

    @Test("a second provider with a wrong PIN or none fails initialize; the first keeps signing; no PIN try is used")
    func secondProviderNeedsItsOwnPIN() async throws {
        let fixture = try SoftHSMFixture.shared()
        let directory = try TemporaryDirectory(prefix: "pkcs11-shared")
        let (first, identity) = try await PKCS11Testing.provider(Self.uri)
        let before = try await CMSSigner.sign(content: Array("before\n".utf8), identity: identity, format: .cadesBES)
        #expect(try PKCS11Testing.opensslVerifies(before, content: Array("before\n".utf8), in: directory).succeeded)

        let wrong = await PKCS11Testing.error { _ = try await PKCS11Testing.provider(Self.uri, pin: "0000") }
        #expect(wrong?.code == .wrongPassword, "\(String(describing: wrong))")
        #expect(wrong?.reason.contains("no PIN try was used") == true, "\(String(describing: wrong))")
        #expect(wrong?.reason.contains("0000") == false)
        // Checked against the verifier, not with C_Login: the token counted no failed try.
        #expect(!(try fixture.tokenFlags(SoftHSMFixture.Token.sharedLogin)).contains("user PIN count low"))

        let none = await PKCS11Testing.error { _ = try await PKCS11Testing.provider(Self.uri, pin: nil) }
        #expect(none?.code == .passwordRequired, "\(String(describing: none))")
        #expect(none?.reason.contains("own PIN") == true, "\(String(describing: none))")

        // The failed providers did not log the first one out.
        let after = try await CMSSigner.sign(content: Array("after\n".utf8), identity: identity, format: .cadesBES)
        #expect(try PKCS11Testing.opensslVerifies(after, content: Array("after\n".utf8), in: directory).succeeded)
        #expect(first.connectionDiagnostics.map { $0.logins == 1 && $0.failedLogins == 0 } == true)
    }

    @Test(
        "a second provider with the right PIN shares the login (no second C_Login) and signs on after the first closes"
    )
    func secondProviderWithTheRightPIN() async throws {
        let directory = try TemporaryDirectory(prefix: "pkcs11-shared")
        let (first, _) = try await PKCS11Testing.provider(Self.uri)
        let (second, identity) = try await PKCS11Testing.provider(Self.uri)
        let diagnostics = try #require(second.connectionDiagnostics)
        #expect(diagnostics.logins == 0 && diagnostics.failedLogins == 0, "\(diagnostics)")
        try first.deleteStoredCertificate()
        let content = Array("second\n".utf8)
        let signature = try await CMSSigner.sign(content: content, identity: identity, format: .cadesBES)
        #expect(try PKCS11Testing.opensslVerifies(signature, content: content, in: directory).succeeded)
        try second.deleteStoredCertificate()
        // With every provider closed the process is logged out: a provider without a PIN is refused again.
        let none = await PKCS11Testing.error { _ = try await PKCS11Testing.provider(Self.uri, pin: nil) }
        #expect(none?.code == .passwordRequired, "\(String(describing: none))")
    }
}
