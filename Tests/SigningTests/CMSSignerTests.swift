import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

@Suite("CMSSigner: signatures that openssl cms -verify accepts")
struct CMSSignerTests {
    let fixture: Fixture
    init() throws { fixture = try Fixture(sharedBy: .signingSuites) }

    static let content =
        Array("Планирование бюджета, строка 1\n".utf8) + (0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 31) }

    @Test(
        "RSA and EC, detached and attached, CMS and CAdES, SHA-256/384/512, local and external keys",
        arguments: [false, true]
    )
    func matrix(external: Bool) async throws {
        for base in [fixture.rsa, fixture.ec] {
            let identity = external ? try Fixture.external(base) : base
            for format in [SignatureFormat.cms, .cadesBES] {
                for detached in [true, false] {
                    for digest in DigestAlgorithm.allSupported where !digest.isGOST {  // GOST digests: GOSTSigningTests
                        let signature = try await CMSSigner.sign(
                            content: Self.content,
                            identity: identity,
                            format: format,
                            detached: detached,
                            digestAlgorithm: digest
                        )
                        let result = try OpenSSLCLI.verify(
                            signature: signature,
                            content: Self.content,
                            detached: detached,
                            root: fixture.pki.root.certificate,
                            cades: format == .cadesBES
                        )
                        #expect(
                            result.succeeded,
                            "\(base.key.publicKeyAlgorithm) \(format) detached=\(detached) \(digest): \(result.errorOutput)"
                        )
                    }
                }
            }
        }
    }

    @Test("CAdES-BES carries signing-certificate-v2 and a signing time; CMS does not carry ESS")
    func attributes() async throws {
        let time = Date(timeIntervalSince1970: 1_780_000_000)
        let cades = try await CMSSigner.sign(content: Self.content, identity: fixture.ec, signingTime: time)
        let dump = try OpenSSLCLI.print(cades)
        #expect(dump.contains("id-smime-aa-signingCertificateV2"))
        #expect(dump.contains("signingTime"))
        #expect(dump.contains("messageDigest"))
        let plain = try await CMSSigner.sign(content: Self.content, identity: fixture.ec, format: .cms)
        #expect(!(try OpenSSLCLI.print(plain)).contains("signingCertificateV2"))
        // openssl -cades really checks the attribute: it refuses the plain CMS signature.
        let refused = try OpenSSLCLI.verify(
            signature: plain,
            content: Self.content,
            detached: true,
            root: fixture.pki.root.certificate,
            cades: true
        )
        #expect(!refused.succeeded)
        #expect(refused.errorOutput.contains("missing signing certificate attribute"))
        // The chain is included: leaf and root.
        #expect(dump.components(separatedBy: "cert_info:").count - 1 == 2)
    }

    @Test("A key that does not belong to the certificate is refused")
    func mismatch() async throws {
        let wrong = SigningIdentity(certificate: fixture.rsa.certificate, chain: fixture.rsa.chain, key: fixture.ec.key)
        await #expect(throws: CertificateProviderError(.keyCertificateMismatch, "")) {
            _ = try await CMSSigner.sign(content: Self.content, identity: wrong)
        }
    }

    @Test("An empty document signs and verifies")
    func emptyContent() async throws {
        for detached in [true, false] {
            let signature = try await CMSSigner.sign(content: [], identity: fixture.rsa, detached: detached)
            let result = try OpenSSLCLI.verify(
                signature: signature,
                content: [],
                detached: detached,
                root: fixture.pki.root.certificate,
                cades: true
            )
            #expect(result.succeeded, "\(result.errorOutput)")
        }
    }
}
