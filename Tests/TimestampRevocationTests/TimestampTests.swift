import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import Signing
import TestSupport
import Testing

/// RFC 3161 timestamps and CAdES-T against the emulator's TSA and against openssl and pyHanko.
@Suite("Timestamps (RFC 3161, CAdES-T)")
struct TimestampTests {
    let document = Array("Счёт № 42: 1 500 000,00 ₽\n".utf8)

    @Test("the emulator's token over a signature value passes openssl ts -verify, taken out of the CAdES-T signature")
    func tokenPassesOpenSSL() async throws {
        try await withEmulator(.timestamping) { emulator, _ in
            let signature = try await CMSSigner.sign(content: document, identity: emulatorSigner)
            let requested = Date().addingTimeInterval(-2)
            let result = try await SignatureTimestamper.addTimestamps(
                to: signature,
                authority: try emulatorTSA(emulator)
            )
            let answered = Date().addingTimeInterval(2)
            #expect(result.addedCount == 1)
            let token = try #require(result.addedTokens.first ?? nil)
            #expect(token.time >= requested && token.time <= answered, "\(token.time) outside \(requested)…\(answered)")
            #expect(token.authority == emulator.timestampAuthorityCertificate.subject)

            let directory = try TemporaryDirectory(prefix: "tsa-openssl")
            let signaturePath = try directory.write("doc.p7s", result.signature)
            let extracted = try Python.run(
                Python.extract,
                [signaturePath, "0", directory.path("value.bin"), directory.path("token.der")]
            )
            #expect(extracted.succeeded, "\(extracted.errorOutput)")
            #expect(extracted.output.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
            let ca = try directory.write("ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
            let verified = try ExternalTool.run(
                "openssl",
                [
                    "ts", "-verify", "-token_in", "-in", directory.path("token.der"),
                    "-data", directory.path("value.bin"), "-CAfile", ca,
                ]
            )
            #expect(verified.succeeded, "\(verified.output)\(verified.errorOutput)")
            #expect(verified.output.contains("Verification: OK"))
            // The imprint covers the signature value, nothing else: other data fails.
            let other = try directory.write("other.bin", document)
            let wrong = try ExternalTool.run(
                "openssl",
                ["ts", "-verify", "-token_in", "-in", directory.path("token.der"), "-data", other, "-CAfile", ca]
            )
            #expect(!wrong.succeeded)
            // Our own check agrees, per signer.
            let signers = try TimestampVerifier.signatureTimestamps(in: result.signature)
            #expect(signers.count == 1 && signers[0].tokens.count == 1)
            let check = TimestampVerifier.verify(
                token: signers[0].tokens[0],
                data: signers[0].signatureValue,
                trustAnchors: [emulator.timestampAuthorityCA]
            )
            #expect(check.isValid, "\(String(describing: check.failureReason))")
            #expect(
                !TimestampVerifier.verify(
                    token: signers[0].tokens[0],
                    data: document,
                    trustAnchors: [emulator.timestampAuthorityCA]
                ).isValid
            )
        }
    }

    @Test("our CAdES-T passes pyHanko's detached CMS validation (signature and timestamp intact, valid, trusted)")
    func cadesTPassesPyHanko() async throws {
        try await withEmulator(.timestamping) { emulator, _ in
            let signature = try await CMSSigner.sign(content: document, identity: emulatorSigner)
            let cadesT = try await SignatureTimestamper.addTimestamps(
                to: signature,
                authority: try emulatorTSA(emulator)
            ).signature
            let directory = try TemporaryDirectory(prefix: "tsa-pyhanko")
            let result = try Python.run(
                Python.pyHankoValidate,
                [
                    try directory.write("doc.p7s", cadesT), try directory.write("doc.txt", document),
                    try directory.write("ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation),
                ]
            )
            #expect(result.succeeded, "\(result.output)\(result.errorOutput)")
            // The same signature without its timestamp is rejected by the script (it demands one).
            let bare = try Python.run(
                Python.pyHankoValidate,
                [try directory.write("bare.p7s", signature), directory.path("doc.txt"), directory.path("ca.pem")]
            )
            #expect(!bare.succeeded)
        }
    }

    @Test("a CAdES-T made by openssl cms + openssl ts -reply (token inserted with asn1crypto) verifies in ours")
    func foreignCAdESTVerifies() throws {
        let directory = try TemporaryDirectory(prefix: "tsa-foreign")
        let pki = try TestPKI(rootSubject: "CN=Foreign Root,O=interop")
        let signer = try pki.issueLeaf(subject: "CN=Foreign Signer", keyType: .rsa2048)
        let tsa = try pki.issueLeaf(
            subject: "CN=Foreign TSA",
            keyType: .p256,
            extensions: [("keyUsage", "critical,digitalSignature"), ("extendedKeyUsage", "critical,timeStamping")]
        )
        let signerFiles = try writePEM(signer, in: directory, name: "signer")
        let tsaFiles = try writePEM(tsa, in: directory, name: "tsa")
        let root = try directory.write("root.pem", text: pki.root.certificate.pemRepresentation)
        let content = try directory.write("doc.txt", document)
        try directory.write("serial", text: "01\n")
        let config = try directory.write(
            "tsa.cnf",
            text: """
                [ tsa ]
                default_tsa = tsa_config
                [ tsa_config ]
                serial = \(directory.path("serial"))
                crypto_device = builtin
                signer_cert = \(tsaFiles.certificate)
                certs = \(root)
                signer_key = \(tsaFiles.key)
                signer_digest = sha256
                default_policy = 1.2.3.4.1
                digests = sha256, sha384, sha512
                accuracy = secs:1
                ess_cert_id_alg = sha256
                """
        )
        let openssl: ([String]) throws -> Void = { arguments in
            let result = try ExternalTool.run("openssl", arguments)
            #expect(result.succeeded, "openssl \(arguments.joined(separator: " ")): \(result.errorOutput)")
        }
        try openssl([
            "cms", "-sign", "-binary", "-cades", "-in", content, "-signer", signerFiles.certificate, "-inkey",
            signerFiles.key,
            "-outform", "DER", "-out", directory.path("bes.p7s"),
        ])
        let value = try Python.run(
            Python.extract,
            [directory.path("bes.p7s"), "0", directory.path("value.bin"), directory.path("none.der")]
        )
        #expect(value.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        try openssl([
            "ts", "-query", "-data", directory.path("value.bin"), "-sha256", "-cert", "-out",
            directory.path("request.tsq"),
        ])
        try openssl([
            "ts", "-reply", "-config", config, "-queryfile", directory.path("request.tsq"), "-token_out", "-out",
            directory.path("token.der"),
        ])
        let inserted = try Python.run(
            Python.insert,
            [directory.path("bes.p7s"), directory.path("token.der"), directory.path("t.p7s")]
        )
        #expect(inserted.succeeded, "\(inserted.errorOutput)")
        // openssl still accepts the signature with its new unsigned attribute.
        try openssl([
            "cms", "-verify", "-binary", "-cades", "-inform", "DER", "-in", directory.path("t.p7s"), "-content",
            content,
            "-CAfile", root, "-out", "/dev/null",
        ])

        let cadesT = try directory.read("t.p7s")
        let signers = try TimestampVerifier.signatureTimestamps(in: cadesT)
        #expect(signers.count == 1 && signers[0].tokens.count == 1)
        let check = TimestampVerifier.verify(
            token: signers[0].tokens[0],
            data: signers[0].signatureValue,
            trustAnchors: [pki.root.certificate]
        )
        #expect(check.isValid, "\(String(describing: check.failureReason))")
        #expect(check.token?.authority == tsa.certificate.subject)
        #expect(check.token?.policy == "1.2.3.4.1")
        // And the whole signature through the validation pipeline: valid, its timestamp reported.
        let verified = CMSVerifier.verify(signature: cadesT, content: document, trustAnchors: [pki.root.certificate])
        #expect(verified.isValid, "\(String(describing: verified.failure))")
        #expect(verified.signers.first?.timestamp?.isValid == true)
        #expect(verified.signers.first?.timestamp?.tsa == tsa.certificate)
        // Trusting another root: the TSA chain fails.
        let stranger = try TestPKI(rootSubject: "CN=Stranger Root")
        let untrusted = TimestampVerifier.verify(
            token: signers[0].tokens[0],
            data: signers[0].signatureValue,
            trustAnchors: [stranger.root.certificate]
        )
        #expect(!untrusted.isValid)
        #expect(untrusted.token?.authority == tsa.certificate.subject)
    }

    @Test(
        "a token from a TSA certificate whose timeStamping EKU is not critical is refused (token made by pyHanko's DummyTimeStamper)"
    )
    func tsaWithoutCriticalEKUIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "tsa-eku")
        let pki = try TestPKI(rootSubject: "CN=EKU Root")
        // openssl ts -reply refuses to sign with such a certificate; pyHanko's test TSA does not check.
        let lax = try writeTSA(pki, subject: "CN=Lax TSA", lax: true, in: directory, name: "lax")
        let strict = try writeTSA(pki, subject: "CN=Strict TSA", in: directory, name: "strict")
        let data = Array(repeating: UInt8(7), count: 64)
        let dataPath = try directory.write("value.bin", data)
        for (files, valid) in [(strict, true), (lax, false)] {
            let made = try Python.run(
                Python.dummyTimestamp,
                [files.certificate, files.key, dataPath, directory.path("token.der")]
            )
            #expect(made.succeeded, "\(made.errorOutput)")
            let check = TimestampVerifier.verify(
                token: try directory.read("token.der"),
                data: data,
                trustAnchors: [pki.root.certificate]
            )
            #expect(check.isValid == valid, "\(files.certificate): \(String(describing: check.failureReason))")
            if !valid {
                #expect(
                    check.failureReason?.contains("time-stamping") == true,
                    "\(String(describing: check.failureReason))"
                )
            }
        }
    }

    @Test(
        "each emulator TSA fault gives its typed error",
        arguments: [
            ("reject", CertificateProviderError.Code.serverRejected),
            ("wrong-nonce", CertificateProviderError.Code.timestampInvalid),
            ("wrong-imprint", CertificateProviderError.Code.timestampInvalid),
            ("slow=3000", CertificateProviderError.Code.timeout),
        ]
    )
    func emulatorFaults(fault: String, code: CertificateProviderError.Code) async throws {
        try await withEmulator(.timestamping) { emulator, _ in
            // Only the slow answer (3 s) must outlast the deadline; the others get the default 10 s, so a busy machine
            // cannot turn their typed answer into a timeout.
            let client = try emulatorTSA(emulator, fault: fault, timeout: fault.hasPrefix("slow") ? 1 : 10)
            do {
                _ = try await client.timestamp(Array("signature value".utf8))
                Issue.record("fault \(fault) was accepted")
            } catch let error as CertificateProviderError {
                #expect(error.code == code, "\(fault): \(error)")
            }
        }
    }

    @Test("a TSA answer checked against the wrong anchors is .timestampInvalid; a closed port is .network")
    func untrustedAndUnreachable() async throws {
        try await withEmulator(.timestamping) { emulator, _ in
            let stranger = try TestPKI(rootSubject: "CN=Stranger Root")
            let client = TimestampAuthorityClient(
                configuration: .init(
                    url: try #require(emulator.timestampURL),
                    trustAnchors: [stranger.root.certificate]
                ),
                fetcher: loopbackFetcher
            )
            await #expect(throws: CertificateProviderError(.timestampInvalid, "")) {
                _ = try await client.timestamp([1, 2, 3])
            }
        }
        let closed = TimestampAuthorityClient(
            configuration: .init(url: try #require(URL(string: "http://127.0.0.1:1/tsa")), timeout: 5),
            fetcher: loopbackFetcher
        )
        await #expect(throws: CertificateProviderError(.network, "")) { _ = try await closed.timestamp([1, 2, 3]) }
    }

    @Test("every SignerInfo of a two-signer signature gets its own token, over its own signature value")
    func everySignerIsTimestamped() async throws {
        try await withEmulator(.timestamping) { emulator, _ in
            let directory = try TemporaryDirectory(prefix: "tsa-two")
            let pki = try TestPKI(rootSubject: "CN=Two Root")
            let first = try writePEM(try pki.issueLeaf(subject: "CN=First"), in: directory, name: "first")
            let second = try writePEM(
                try pki.issueLeaf(subject: "CN=Second", keyType: .rsa2048),
                in: directory,
                name: "second"
            )
            let content = try directory.write("doc.txt", document)
            let made = try ExternalTool.run(
                "openssl",
                [
                    "cms", "-sign", "-binary", "-cades", "-in", content, "-signer", first.certificate, "-inkey",
                    first.key,
                    "-signer", second.certificate, "-inkey", second.key, "-outform", "DER", "-out",
                    directory.path("two.p7s"),
                ]
            )
            #expect(made.succeeded, "\(made.errorOutput)")
            let result = try await SignatureTimestamper.addTimestamps(
                to: try directory.read("two.p7s"),
                authority: try emulatorTSA(emulator)
            )
            #expect(result.addedCount == 2)
            let signers = try TimestampVerifier.signatureTimestamps(in: result.signature)
            #expect(signers.count == 2)
            for signer in signers {
                #expect(signer.tokens.count == 1)
                #expect(
                    TimestampVerifier.verify(
                        token: signer.tokens[0],
                        data: signer.signatureValue,
                        trustAnchors: [emulator.timestampAuthorityCA]
                    ).isValid
                )
            }
            // Crossed tokens do not verify.
            #expect(
                !TimestampVerifier.verify(
                    token: signers[0].tokens[0],
                    data: signers[1].signatureValue,
                    trustAnchors: [emulator.timestampAuthorityCA]
                ).isValid
            )
            // Timestamping again adds nothing.
            let again = try await SignatureTimestamper.addTimestamps(
                to: result.signature,
                authority: try emulatorTSA(emulator)
            )
            #expect(again.addedCount == 0)
            // openssl still verifies both signers of the upgraded file.
            let out = try directory.write("t.p7s", result.signature)
            let verified = try ExternalTool.run(
                "openssl",
                [
                    "cms", "-verify", "-binary", "-inform", "DER", "-in", out, "-content", content,
                    "-CAfile", try directory.write("root.pem", text: pki.root.certificate.pemRepresentation), "-out",
                    "/dev/null",
                ]
            )
            #expect(verified.succeeded, "\(verified.errorOutput)")
        }
    }
}

/// CAdES-T through `CMSVerifier` (the validation pipeline's signature timestamp check).
@Suite("CAdES-T verification")
struct CAdESTVerificationTests {
    let document = Array("Договор поставки № 7\n".utf8)

    @Test(
        "a valid trusted timestamp is reported per signer; an invalid or untrusted one makes the signature .timestampInvalid"
    )
    func timestampInVerification() async throws {
        try await withEmulator(.timestamping) { emulator, _ in
            let ca = emulator.timestampAuthorityCA
            let signature = try await CMSSigner.sign(content: document, identity: emulatorSigner)
            // The TSA's genTime lies between these two moments (its accuracy is whole seconds); no bound on how long a busy
            // machine takes in between.
            let requested = Date().addingTimeInterval(-2)
            let cadesT = try await SignatureTimestamper.addTimestamps(
                to: signature,
                authority: try emulatorTSA(emulator)
            ).signature
            let answered = Date().addingTimeInterval(2)
            let result = CMSVerifier.verify(signature: cadesT, content: document, trustAnchors: [ca])
            #expect(result.isValid, "\(String(describing: result.failure))")
            let timestamp = try #require(result.signers.first?.timestamp)
            #expect(timestamp.isValid)
            #expect(timestamp.tsa == emulator.timestampAuthorityCertificate)
            #expect(
                timestamp.time >= requested && timestamp.time <= answered,
                "\(timestamp.time) outside \(requested)…\(answered)"
            )
            #expect(result.signers.first?.checkedAt == timestamp.time)
            // No timestamp: nothing reported.
            #expect(
                CMSVerifier.verify(signature: signature, content: document, trustAnchors: [ca]).signers.first?.timestamp
                    == nil
            )

            // TSA anchors other than the signer's: the policy's timestamp anchors decide.
            let stranger = try TestPKI(rootSubject: "CN=Stranger TSA Root")
            var policy = ValidationPolicy()
            policy.timestampTrustAnchors = [stranger.root.certificate]
            let untrusted = CMSVerifier.verify(signature: cadesT, content: document, trustAnchors: [ca], policy: policy)
            #expect(untrusted.failure?.code == .timestampInvalid, "\(String(describing: untrusted.failure))")
            #expect(untrusted.signers.first?.timestamp?.isValid == false)

            // A token over another signature value (moved from a different signature) is invalid.
            let other = try await CMSSigner.sign(content: document, identity: emulatorSigner)
            let otherToken = try #require(
                try TimestampVerifier.signatureTimestamps(
                    in: try await SignatureTimestamper.addTimestamps(
                        to: other,
                        authority: try emulatorTSA(emulator)
                    ).signature
                ).first?.tokens.first
            )
            let directory = try TemporaryDirectory(prefix: "tsa-transplant")
            let inserted = try Python.run(
                Python.insert,
                [
                    try directory.write("s.p7s", signature), try directory.write("t.der", otherToken),
                    directory.path("out.p7s"),
                ]
            )
            #expect(inserted.succeeded, "\(inserted.errorOutput)")
            let transplanted = try directory.read("out.p7s")
            let moved = CMSVerifier.verify(signature: transplanted, content: document, trustAnchors: [ca])
            #expect(moved.failure?.code == .timestampInvalid, "\(String(describing: moved.failure))")
        }
    }
}
