import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// Whom `certsign verify` trusts: with no anchor option, the system's bundle (found as OpenSSL finds
/// it, `SSL_CERT_FILE` first); `--ca FILE` names exactly the anchors; `--trust system` adds the
/// bundle to them; `--no-chain-check` builds no chain at all, the TSA's included, and still checks
/// the signature, its timestamp's signature and the document. certomancer's CAdES-T signatures
/// (a private root and a private TSA) are the subject.
@Suite(.serialized) struct VerifyTrustCommandTests {
    /// A CAdES-T of `document` by certomancer's signer-rsa.
    static func signedBT(_ setup: LongTermCommandTests.Setup, _ name: String) throws -> String {
        let document = try setup.fixture.document(name, "trusted by whom?\n")
        let signed = try setup.sign([document], setup.tsa)
        try #require(signed.succeeded, "\(signed.output)\(signed.errorOutput)")
        return document + ".p7s"
    }

    /// A bundle holding `certificates` (PEM), as a system's ca-certificates file does.
    static func bundle(_ certificates: [Certificate], in fixture: CLIFixture, named name: String) throws -> String {
        try fixture.directory.write(name, text: certificates.map(\.pemRepresentation).joined(separator: "\n"))
    }

    @Test func withoutAnchorOptionsTheSystemBundleIsTheTrustAndTrustSystemAddsItToCA() throws {
        let setup = try LongTermCommandTests.Setup()
        defer { setup.pki.stop() }
        let signature = try Self.signedBT(setup, "system.txt")
        let root = try setup.pki.certificate("root")
        let interm = try setup.pki.certificate("interm")
        // The system bundle (SSL_CERT_FILE) holds certomancer's root: PASSED with no option at all.
        let withRoot = try Self.bundle([root, interm], in: setup.fixture, named: "system-with-root.pem")
        let trusted = try setup.fixture.run(["verify", signature], environment: ["SSL_CERT_FILE": withRoot])
        #expect(trusted.status == 0, "\(trusted.output)\(trusted.errorOutput)")
        #expect(trusted.output.hasPrefix("PASSED"), "\(trusted.output)")
        // A bundle without it: not trusted (INDETERMINATE, exit 2), and never a usage error.
        // The fixture's own root, which certomancer's signers do not chain to.
        let unrelated = setup.fixture.rootPath
        let withoutRoot = unrelated
        let untrusted = try setup.fixture.run(["verify", signature], environment: ["SSL_CERT_FILE": withoutRoot])
        #expect(untrusted.status == 2, "\(untrusted.output)\(untrusted.errorOutput)")
        #expect(untrusted.output.hasPrefix("INDETERMINATE: NO_CERTIFICATE_CHAIN_FOUND"), "\(untrusted.output)")
        // --ca names exactly the anchors: the system's root is then not trusted...
        let exact = try setup.fixture.run(
            ["verify", signature, "--ca", unrelated],
            environment: ["SSL_CERT_FILE": withRoot]
        )
        #expect(exact.status == 2, "\(exact.output)\(exact.errorOutput)")
        // ...unless --trust system adds the bundle to them.
        let added = try setup.fixture.run(
            ["verify", signature, "--ca", unrelated, "--trust", "system"],
            environment: ["SSL_CERT_FILE": withRoot]
        )
        #expect(added.status == 0, "\(added.output)\(added.errorOutput)")
    }

    @Test func noChainCheckSkipsTheTSAChainButStillChecksTheSignaturesAndDocument() throws {
        let setup = try LongTermCommandTests.Setup()
        defer { setup.pki.stop() }
        let signature = try Self.signedBT(setup, "unchained.txt")
        // A private TSA no anchor vouches for: the signature and its timestamp still verify, and who
        // signed is not checked: INDETERMINATE (NO_CERTIFICATE_CHAIN_FOUND), exit 2, never FAILED.
        let unchained = try setup.fixture.run(["--json", "verify", signature, "--no-chain-check"])
        #expect(unchained.status == 2, "\(unchained.output)\(unchained.errorOutput)")
        let json = try CLI.json(unchained)
        #expect(json["indication"] as? String == "INDETERMINATE", "\(json)")
        #expect(json["subIndication"] as? String == "NO_CERTIFICATE_CHAIN_FOUND", "\(json)")
        #expect(json["failure"] == nil, "\(json)")
        #expect(json["chainChecked"] as? Bool == false, "\(json)")
        // The document changed: still a failure, chain or no chain.
        let document = setup.fixture.directory.path("unchained.txt")
        try Data("changed\n".utf8).write(to: URL(fileURLWithPath: document))
        let changed = try setup.fixture.run(["verify", signature, "--no-chain-check"])
        #expect(changed.status == 1, "\(changed.output)\(changed.errorOutput)")
        #expect(changed.output.contains("changed after signing"), "\(changed.output)")
    }
}
