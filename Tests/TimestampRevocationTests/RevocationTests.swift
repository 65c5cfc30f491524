import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import Signing
import Testing

#if canImport(Glibc)
import Glibc
import TestSupport
import RemoteProviderSupport
#endif

/// A free loopback port: bind to port 0, read the port, close (the caller retries on collision).
func pickFreePort() throws -> UInt16 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
        }
    }
    try #require(bound)
    return UInt16(bigEndian: address.sin_port)
}

/// A CA (TestPKI) with three signers whose AIA points at an `openssl ocsp` responder on an
/// ephemeral port: one good, one revoked an hour ago, one the responder does not know; plus the
/// CRL `openssl ca -gencrl` makes from the same index.
final class OpenSSLRevocationFixture: @unchecked Sendable {
    // Written in init, only read afterwards; the process is terminated in deinit.
    let directory: TemporaryDirectory
    let pki: TestPKI
    let good: SigningIdentity
    let revoked: SigningIdentity
    let unknown: SigningIdentity
    let revokedAt: Date
    let crl: [UInt8]
    let port: UInt16
    private let responder: Process

    init() throws {
        directory = try TemporaryDirectory(prefix: "ocsp-responder")
        pki = try TestPKI(rootSubject: "CN=OCSP Test Root,O=swift-certificate-providers")
        let issuer = try OpenSSLCRLIssuer(pki.root, name: "root", in: directory)
        revokedAt = Date().addingTimeInterval(-3600).rounded
        var attempt = 0
        while true {
            attempt += 1
            let port = try pickFreePort()
            let extensions: [(name: String, value: String)] = [
                ("basicConstraints", "critical,CA:FALSE"),
                ("keyUsage", "critical,digitalSignature,nonRepudiation"),
                ("extendedKeyUsage", "emailProtection"),
                ("authorityInfoAccess", "OCSP;URI:http://127.0.0.1:\(port)/"),
            ]
            let good = try pki.issueLeaf(subject: "CN=Good Signer", extensions: extensions)
            let revoked = try pki.issueLeaf(subject: "CN=Revoked Signer", extensions: extensions)
            let unknown = try pki.issueLeaf(subject: "CN=Unknown Signer", extensions: extensions)
            let index = try directory.write(
                "index.txt",
                text: OpenSSLCRLIssuer.indexLine(good.certificate, revoked: nil) + "\n"
                    + OpenSSLCRLIssuer.indexLine(revoked.certificate, revoked: revokedAt) + "\n"
            )
            try directory.write("index.txt.attr", text: "unique_subject = no\n")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try #require(ExternalTool.path(of: "openssl")))
            process.arguments = [
                "ocsp", "-index", index, "-port", "\(port)", "-rsigner", issuer.certificatePath, "-rkey",
                issuer.keyPath,
                "-CA", issuer.certificatePath, "-ignore_err", "-nmin", "60",
            ]
            // The responder says when it listens. (Probing with a bare connect is not an option:
            // openssl 3.0's responder then hangs on that empty connection.)
            let log = directory.path("responder-\(attempt).log")
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            var ready = false
            for _ in 0..<200 where process.isRunning {
                if let text = try? String(contentsOfFile: log, encoding: .utf8),
                    text.contains("waiting for OCSP client connections")
                {
                    ready = true
                    break
                }
                usleep(25_000)
            }
            try? handle.close()
            if ready {
                self.port = port
                self.good = good
                self.revoked = revoked
                self.unknown = unknown
                responder = process
                try issuer.makeCRL("crl.pem", revoked: [(revoked.certificate, revokedAt)])
                crl = try directory.read("crl.pem")
                break
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            guard attempt < 5 else {
                throw CertificateProviderError(.network, "openssl ocsp did not start after 5 ports")
            }
        }
    }

    deinit {
        // openssl ocsp handles SIGTERM only between connections; a kept-alive client connection
        // would hold it: SIGKILL.
        if responder.isRunning { kill(responder.processIdentifier, SIGKILL) }
        responder.waitUntilExit()
    }
}

extension Date {
    /// Whole seconds (revocation times travel as whole seconds).
    var rounded: Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}

@Suite("Revocation (OCSP, CRL)", .serialized)
struct RevocationTests {
    let document = Array("Акт сверки\n".utf8)

    func verify(
        _ identity: SigningIdentity,
        fixture: OpenSSLRevocationFixture,
        policy: ValidationPolicy
    ) async throws -> VerificationResult {
        let signature = try await CMSSigner.sign(content: document, identity: identity)
        return try await CMSVerifier.verify(
            signature: signature,
            content: .bytes(document, name: "doc"),
            trustAnchors: [fixture.pki.root.certificate],
            policy: policy,
            fetcher: loopbackFetcher
        )
    }

    @Test(
        "good / revoked / unknown through a real openssl ocsp responder (OCSP URL from the AIA) and through its CRL file"
    )
    func openSSLResponderAndCRL() async throws {
        let fixture = try OpenSSLRevocationFixture()
        var online = ValidationPolicy()
        online.checkRevocation = true
        let good = try await verify(fixture.good, fixture: fixture, policy: online)
        #expect(good.isValid, "\(String(describing: good.failure))")
        #expect(good.signers.first?.revocation?.state == .good)
        #expect(good.signers.first?.revocation?.source.contains("OCSP http://127.0.0.1:\(fixture.port)/") == true)
        let revoked = try await verify(fixture.revoked, fixture: fixture, policy: online)
        #expect(revoked.failure?.code == .signerRevoked, "\(String(describing: revoked.failure))")
        #expect(revoked.signers.first?.revocation?.revocationTime == fixture.revokedAt)
        let unknown = try await verify(fixture.unknown, fixture: fixture, policy: online)
        #expect(unknown.failure?.code == .revocationUnknown, "\(String(describing: unknown.failure))")

        // The same through the CRL file, offline (openssl ca -gencrl from the same index).
        var offline = ValidationPolicy()
        offline.crls = [fixture.crl]
        let goodCRL = try await verify(fixture.good, fixture: fixture, policy: offline)
        #expect(goodCRL.isValid, "\(String(describing: goodCRL.failure))")
        #expect(goodCRL.signers.first?.revocation?.state == .good)
        let revokedCRL = try await verify(fixture.revoked, fixture: fixture, policy: offline)
        #expect(revokedCRL.failure?.code == .signerRevoked)
        #expect(revokedCRL.signers.first?.revocation?.revocationTime == fixture.revokedAt)
        // A CRL of another CA says nothing about these signers: unknown.
        let stranger = try TestPKI(rootSubject: "CN=Other CA")
        let strangerCRL = try await withEmulatorCRL(authority: stranger.root)
        var foreign = ValidationPolicy()
        foreign.crls = [strangerCRL]
        let unknownCRL = try await verify(fixture.good, fixture: fixture, policy: foreign)
        #expect(unknownCRL.failure?.code == .revocationUnknown, "\(String(describing: unknownCRL.failure))")

        // The checker on its own agrees.
        let checker = RevocationChecker(configuration: .init(checksOnline: true), fetcher: loopbackFetcher)
        let status = await checker.status(
            of: fixture.revoked.certificate,
            issuer: fixture.pki.root.certificate,
            trustAnchors: [fixture.pki.root.certificate]
        )
        #expect(status.state == .revoked && status.revocationTime == fixture.revokedAt)
        // Without --check-revocation nothing is asked: valid, no revocation reported.
        let plain = try await verify(fixture.revoked, fixture: fixture, policy: ValidationPolicy())
        #expect(plain.isValid && plain.signers.first?.revocation == nil)
    }

    /// A CRL (no entries) signed by `authority`, made by an emulator seeded with that CA.
    func withEmulatorCRL(authority: TestPKI.Authority) async throws -> [UInt8] {
        let seed = EmulatorSeed(
            certificateAuthority: authority.certificate,
            users: [],
            cells: [],
            firstSignatureID: 1,
            certificateAuthorityKey: authority.key
        )
        return try await withEmulator(.init(requestLogLimit: 0), seed: seed) { emulator, _ in
            try await loopbackFetcher.get(try #require(emulator.crlURL), timeout: 10, maximumBytes: 1 << 20).body
        }
    }

    @Test(
        "a trusted timestamp before the revocation keeps the signature valid; without it, or after it, .signerRevoked"
    )
    func timestampBeforeRevocation() async throws {
        try await withEmulator(.timestamping) { emulator, _ in
            let signer = emulatorSigner
            let revokedAt = Date().addingTimeInterval(-3600).rounded
            emulator.revoke(signer.certificate, at: revokedAt)
            let crl = try await loopbackFetcher.get(try #require(emulator.crlURL), timeout: 10, maximumBytes: 1 << 20)
                .body
            var policy = ValidationPolicy()
            policy.crls = [crl]
            let signature = try await CMSSigner.sign(content: document, identity: signer)
            let ca = emulator.timestampAuthorityCA

            let bare = CMSVerifier.verify(signature: signature, content: document, trustAnchors: [ca], policy: policy)
            #expect(bare.failure?.code == .signerRevoked, "\(String(describing: bare.failure))")
            #expect(bare.signers.first?.revocation?.revocationTime == revokedAt)

            // A timestamp from now (after the revocation) proves nothing useful.
            let late = try await SignatureTimestamper.addTimestamps(to: signature, authority: try emulatorTSA(emulator))
                .signature
            #expect(
                CMSVerifier.verify(signature: late, content: document, trustAnchors: [ca], policy: policy).failure?.code
                    == .signerRevoked
            )

            // A token from two hours ago (pyHanko's test TSA with a fixed time, RSA TSA certificate
            // with a critical timeStamping EKU under its own root), inserted with asn1crypto.
            let directory = try TemporaryDirectory(prefix: "revoked-ts")
            let tsaPKI = try TestPKI(rootSubject: "CN=Past TSA Root")
            let tsa = try writeTSA(tsaPKI, subject: "CN=Past TSA", in: directory, name: "tsa")
            let signaturePath = try directory.write("s.p7s", signature)
            #expect(
                try Python.run(
                    Python.extract,
                    [signaturePath, "0", directory.path("value.bin"), directory.path("none.der")]
                ).succeeded
            )
            let past = Date().addingTimeInterval(-7200).rounded
            let made = try Python.run(
                Python.dummyTimestamp,
                [
                    tsa.certificate, tsa.key, directory.path("value.bin"), directory.path("token.der"),
                    ISO8601DateFormatter().string(from: past),
                ]
            )
            #expect(made.succeeded, "\(made.errorOutput)")
            let inserted = try Python.run(
                Python.insert,
                [signaturePath, directory.path("token.der"), directory.path("t.p7s")]
            )
            #expect(inserted.succeeded, "\(inserted.errorOutput)")
            policy.timestampTrustAnchors = [tsaPKI.root.certificate]
            // The TSA's path needs an answer too: without its root's CRL, unknown, naming the TSA.
            let noTSACRL = CMSVerifier.verify(
                signature: try directory.read("t.p7s"),
                content: document,
                trustAnchors: [ca],
                policy: policy
            )
            #expect(noTSACRL.failure?.code == .revocationUnknown, "\(String(describing: noTSACRL.failure))")
            #expect(noTSACRL.failure?.reason.contains("CN=Past TSA") == true)
            let tsaIssuer = try OpenSSLCRLIssuer(tsaPKI.root, name: "tsa-root", in: directory)
            try tsaIssuer.makeCRL("tsa-root.crl")
            policy.crls.append(try directory.read("tsa-root.crl"))
            let early = CMSVerifier.verify(
                signature: try directory.read("t.p7s"),
                content: document,
                trustAnchors: [ca],
                policy: policy
            )
            #expect(early.isValid, "\(String(describing: early.failure))")
            #expect(early.signers.first?.timestamp?.time == past)
            #expect(early.signers.first?.revocation?.state == .revoked)
            let entries = early.signers.first?.revocation?.certificates ?? []
            #expect(entries.map(\.role) == [.signer, .timestampAuthority])
            #expect(entries.map(\.status.state) == [.revoked, .good])
        }
    }

    @Test("the emulator's OCSP responder and CRL satisfy openssl ocsp and openssl crl, before and after a revocation")
    func emulatorOCSPAndCRLWithOpenSSL() async throws {
        try await withEmulator(.timestamping) { emulator, _ in
            let directory = try TemporaryDirectory(prefix: "emulator-ocsp")
            let ca = try directory.write("ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
            let leaf = try directory.write("leaf.pem", text: emulatorSigner.certificate.pemRepresentation)
            let url = try #require(emulator.ocspURL).absoluteString
            func ask() throws -> String {
                let result = try ExternalTool.run(
                    "openssl",
                    ["ocsp", "-issuer", ca, "-cert", leaf, "-url", url, "-CAfile", ca, "-resp_text"]
                )
                #expect(result.succeeded, "\(result.errorOutput)")
                #expect(result.errorOutput.contains("Response verify OK"), "\(result.errorOutput)")
                return result.output
            }
            #expect(try ask().contains("\(leaf): good"))
            let crlBefore = try directory.write(
                "before.der",
                try await loopbackFetcher.get(try #require(emulator.crlURL), timeout: 10, maximumBytes: 1 << 20).body
            )
            let checked = try ExternalTool.run(
                "openssl",
                ["crl", "-inform", "DER", "-in", crlBefore, "-CAfile", ca, "-noout"]
            )
            #expect(checked.succeeded && checked.errorOutput.contains("verify OK"), "\(checked.errorOutput)")
            emulator.revoke(emulatorSigner.certificate)
            #expect(try ask().contains("\(leaf): revoked"))
            let crlAfter = try directory.write(
                "after.der",
                try await loopbackFetcher.get(try #require(emulator.crlURL), timeout: 10, maximumBytes: 1 << 20).body
            )
            let text = try ExternalTool.run(
                "openssl",
                ["crl", "-inform", "DER", "-in", crlAfter, "-CAfile", ca, "-noout", "-text"]
            )
            #expect(text.succeeded)
            #expect(
                text.output.uppercased().contains(emulatorSigner.certificate.serialNumber.uppercased()),
                "\(text.output)"
            )
        }
    }

    @Test("--check-revocation falls back to the CRL distribution point when there is no OCSP URL (emulator /crl)")
    func crlDistributionPoint() async throws {
        try await withEmulator(.timestamping) { emulator, _ in
            let key = try #require(sharedSeed.certificateAuthorityKey)
            let pki = TestPKI(root: TestPKI.Authority(certificate: sharedSeed.certificateAuthority, key: key))
            var policy = ValidationPolicy()
            policy.checkRevocation = true
            // A signer whose only revocation source is the CRL at `crl`; its signature checked online.
            func issue(_ subject: String, crl: String) throws -> SigningIdentity {
                try pki.issueLeaf(
                    subject: subject,
                    extensions: [("keyUsage", "critical,digitalSignature"), ("crlDistributionPoints", "URI:\(crl)")]
                )
            }
            func verify(_ identity: SigningIdentity) async throws -> VerificationResult {
                try await CMSVerifier.verify(
                    signature: try await CMSSigner.sign(content: document, identity: identity),
                    content: .bytes(document, name: "doc"),
                    trustAnchors: [sharedSeed.certificateAuthority],
                    policy: policy,
                    fetcher: loopbackFetcher
                )
            }
            let signer = try issue("CN=CRL DP Signer", crl: try #require(emulator.crlURL).absoluteString)
            let before = try await verify(signer)
            #expect(before.isValid, "\(String(describing: before.failure))")
            #expect(before.signers.first?.revocation?.source.contains("/crl") == true)
            emulator.revoke(signer.certificate)
            let after = try await verify(signer)
            #expect(after.failure?.code == .signerRevoked, "\(String(describing: after.failure))")
            // Unreachable distribution point: unknown, never a silent VALID.
            let unknown = try await verify(try issue("CN=Lost Signer", crl: "http://127.0.0.1:1/crl"))
            #expect(unknown.failure?.code == .revocationUnknown, "\(String(describing: unknown.failure))")
        }
    }
}
