import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

/// A root, two intermediates and signers whose authorityInfoAccess names a mode of a
/// ``PythonOCSPResponder``: `good-ca` answers good for its signers, `revoked-ca` is itself
/// revoked by the root's answer.
final class OCSPPathFixture: Sendable {
    let directory: TemporaryDirectory
    let responder: PythonOCSPResponder
    let pki: TestPKI
    let goodCA: TestPKI.Authority
    let revokedCA: TestPKI.Authority
    /// One signer under `good-ca` per mode of the responder, and `under-revoked-ca`.
    let signers: [String: SigningIdentity]
    let document = Array("Счёт-фактура № 27\n".utf8)

    static let modes = ["good", "stale", "dayold", "future", "nononce", "wrongnonce", "wrongid"]

    init() throws {
        let directory = try TemporaryDirectory(prefix: "ocsp-freshness")
        let pki = try TestPKI(rootSubject: "CN=OCSP Path Root,O=swift-certificate-providers")
        _ = try OpenSSLCRLIssuer(pki.root, name: "root", in: directory)
        let responder = try PythonOCSPResponder(directory: directory, issuers: ["root", "good-ca", "revoked-ca"])
        func authority(_ subject: String, mode: String) throws -> TestPKI.Authority {
            let made = try pki.issueLeaf(
                subject: subject,
                extensions: [
                    ("basicConstraints", "critical,CA:TRUE"), ("keyUsage", "critical,keyCertSign,cRLSign"),
                    ("authorityInfoAccess", "OCSP;URI:\(responder.url(mode))"),
                ]
            )
            let key = try #require(made.key as? LocalSigningKey)
            return TestPKI.Authority(certificate: made.certificate, key: key, chain: [pki.root.certificate])
        }
        func signer(_ subject: String, mode: String, issuer: TestPKI.Authority) throws -> SigningIdentity {
            try pki.issueLeaf(
                subject: subject,
                issuer: issuer,
                extensions: [
                    ("keyUsage", "critical,digitalSignature,nonRepudiation"),
                    ("authorityInfoAccess", "OCSP;URI:\(responder.url(mode))"),
                ]
            )
        }
        let goodCA = try authority("CN=OCSP Good CA", mode: "good")
        let revokedCA = try authority("CN=OCSP Revoked CA", mode: "revoked")
        _ = try OpenSSLCRLIssuer(goodCA, name: "good-ca", in: directory)
        _ = try OpenSSLCRLIssuer(revokedCA, name: "revoked-ca", in: directory)
        var signers: [String: SigningIdentity] = [:]
        for mode in Self.modes { signers[mode] = try signer("CN=OCSP \(mode) Signer", mode: mode, issuer: goodCA) }
        signers["under-revoked-ca"] = try signer("CN=OCSP Signer Under Revoked CA", mode: "good", issuer: revokedCA)
        let known = [goodCA.certificate, revokedCA.certificate] + signers.values.map(\.certificate)
        _ = try directory.write("known.pem", text: known.map(\.pemRepresentation).joined())
        self.directory = directory
        self.pki = pki
        self.responder = responder
        self.goodCA = goodCA
        self.revokedCA = revokedCA
        self.signers = signers
    }

    deinit { responder.stop() }

    /// Ours, online, for the signer of `mode`.
    func verify(_ mode: String, policy: ValidationPolicy = ValidationPolicy()) async throws -> VerificationResult {
        var policy = policy
        policy.checkRevocation = true
        let identity = try #require(signers[mode])
        let signature = try await CMSSigner.sign(content: document, identity: identity)
        return try await CMSVerifier.verify(
            signature: signature,
            content: .bytes(document, name: "invoice"),
            trustAnchors: [pki.root.certificate],
            policy: policy,
            fetcher: loopbackFetcher
        )
    }

    /// `openssl ocsp` asked about the signer of `mode` (or `certificate` under `issuer`).
    func openSSLVerdict(_ mode: String) throws -> String {
        let identity = try #require(signers[mode])
        let issuer = identity.chain[0]
        return try PythonOCSPResponder.openSSLVerdict(
            certificate: try directory.write("\(mode).pem", text: identity.certificate.pemRepresentation),
            issuer: try directory.write("\(mode)-issuer.pem", text: issuer.pemRepresentation),
            anchor: directory.path("root-ca.pem"),
            url: responder.url(mode)
        )
    }
}

@Suite(
    "OCSP freshness and the whole path (a Python cryptography OCSP responder, judged beside openssl ocsp)",
    .serialized
)
struct OCSPFreshnessTests {
    func signerSource(_ result: VerificationResult) -> String {
        result.signers.first?.revocation?.certificates.first?.status.source ?? ""
    }

    /// Ours refuses the answer for the signer of `mode` (`.revocationUnknown`, the signer's source
    /// containing `reason`); `openssl ocsp` says `openSSL` about it.
    func expectRefused(_ fixture: OCSPPathFixture, _ mode: String, reason: String, openSSL: String) async throws {
        let result = try await fixture.verify(mode)
        #expect(result.failure?.code == .revocationUnknown, "\(String(describing: result.failure))")
        #expect(signerSource(result).contains(reason), "\(signerSource(result))")
        let verdict = try fixture.openSSLVerdict(mode)
        #expect(verdict.contains(openSSL), "\(verdict)")
    }

    @Test("a fresh answer with the nonce is good for the signer and for its CA; openssl ocsp agrees")
    func good() async throws {
        let fixture = try OCSPPathFixture()
        let result = try await fixture.verify("good")
        #expect(result.isValid, "\(String(describing: result.failure))")
        let entries = result.signers.first?.revocation?.certificates ?? []
        #expect(entries.map(\.role) == [.signer, .signerCA])
        #expect(entries.map(\.status.state) == [.good, .good])
        #expect(entries.allSatisfy { $0.status.source.contains(fixture.responder.url("good")) })
        let openssl = try fixture.openSSLVerdict("good")
        #expect(openssl.contains("Response verify OK") && openssl.contains(": good"), "\(openssl)")
    }

    /// A stale answer (2020, no nextUpdate, older than the certificate), one from the future and
    /// one for another certificate: what ours says about each, and what openssl ocsp says.
    static let refusals: [(mode: String, reason: String, openSSL: String)] = [
        ("stale", "before the certificate existed", "status too old"),
        ("future", "lies after the validation time", "status not yet valid"),
        ("wrongid", "does not cover this certificate", "No Status found"),
    ]

    @Test(
        "stale (thisUpdate 2020, no nextUpdate), future and wrong-CertID answers are refused: unknown; openssl agrees",
        arguments: refusals
    )
    func refused(_ refusal: (mode: String, reason: String, openSSL: String)) async throws {
        try await expectRefused(try OCSPPathFixture(), refusal.mode, reason: refusal.reason, openSSL: refusal.openSSL)
    }

    @Test("without nextUpdate an answer a day old passes the 7-day default and fails a one-hour maximum age")
    func maximumAge() async throws {
        let fixture = try OCSPPathFixture()
        let accepted = try await fixture.verify("dayold")
        #expect(accepted.isValid, "\(String(describing: accepted.failure))")
        var strict = ValidationPolicy()
        strict.revocationMaximumAge = 3600
        let refused = try await fixture.verify("dayold", policy: strict)
        #expect(refused.failure?.code == .revocationUnknown, "\(String(describing: refused.failure))")
        #expect(signerSource(refused).contains("older than the maximum age of 3600 s"), "\(signerSource(refused))")
        #expect(!(try fixture.openSSLVerdict("dayold").contains("status too old")))
    }

    @Test(
        "a fresh answer without a nonce is accepted (as openssl, with its warning) unless the policy requires one; a different nonce is refused"
    )
    func nonces() async throws {
        let fixture = try OCSPPathFixture()
        let accepted = try await fixture.verify("nononce")
        #expect(accepted.isValid, "\(String(describing: accepted.failure))")
        #expect(try fixture.openSSLVerdict("nononce").contains("WARNING: no nonce in response"))
        var strict = ValidationPolicy()
        strict.requiresOCSPNonce = true
        let refused = try await fixture.verify("nononce", policy: strict)
        #expect(refused.failure?.code == .revocationUnknown, "\(String(describing: refused.failure))")
        #expect(signerSource(refused).contains("does not carry back the request's nonce"), "\(signerSource(refused))")
        try await expectRefused(
            fixture,
            "wrongnonce",
            reason: "nonce differs from the request's",
            openSSL: "Nonce Verify error"
        )
    }

    @Test("the root's responder saying the intermediate is revoked makes the signature INVALID")
    func revokedIntermediate() async throws {
        let fixture = try OCSPPathFixture()
        let result = try await fixture.verify("under-revoked-ca")
        #expect(result.failure?.code == .signerRevoked, "\(String(describing: result.failure))")
        #expect(result.failure?.reason.contains("CN=OCSP Revoked CA") == true)
        #expect(result.signers.first?.revocation?.certificates.map(\.status.state) == [.good, .revoked])
        let openssl = try PythonOCSPResponder.openSSLVerdict(
            certificate: try fixture.directory.write(
                "revoked-ca.pem",
                text: fixture.revokedCA.certificate.pemRepresentation
            ),
            issuer: fixture.directory.path("root-ca.pem"),
            anchor: fixture.directory.path("root-ca.pem"),
            url: fixture.responder.url("revoked")
        )
        #expect(openssl.contains(": revoked"), "\(openssl)")
    }

    @Test("with a validation time (--at), an answer made after it is not current for it")
    func validationTime() async throws {
        let fixture = try OCSPPathFixture()
        var past = ValidationPolicy()
        past.validationTime = Date().addingTimeInterval(-3600)
        let result = try await fixture.verify("good", policy: past)
        #expect(result.failure?.code == .revocationUnknown, "\(String(describing: result.failure))")
        #expect(signerSource(result).contains("lies after the validation time"), "\(signerSource(result))")
    }
}
