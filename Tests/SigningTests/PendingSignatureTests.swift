import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

/// Two-phase CMS / CAdES signing: `CMSSigner.prepare` fixes the signed attributes, a signer outside
/// the package (`openssl pkeyutl -sign` on the printed digest, the gost engine for GOST) makes the
/// value, and `CMSSigner.complete` finishes the signature from the pending signature's JSON alone;
/// `openssl cms -verify` judges the result.
@Suite(.enabled(if: ExternalTool.isAvailable("openssl"), "needs the openssl command"))
struct PendingSignatureTests {
    typealias Case = OpenSSLExternalSigner

    let pki: TestPKI
    let directory: TemporaryDirectory

    init() throws {
        pki = try TestPKI(rootSubject: "CN=Корневой УЦ двухфазной подписи,O=certsign")
        directory = try TemporaryDirectory(prefix: "pending")
    }

    /// The signer's value over `pending.digestToSign`, made by `openssl pkeyutl` with `key`'s PEM.
    func externalValue(_ pending: PendingSignature, key: LocalSigningKey, _ testCase: Case) throws -> [UInt8] {
        try testCase.sign(pending.digestToSign, key: key, in: directory)
    }

    @Test(
        "prepare, openssl pkeyutl signs the digest, complete from the JSON alone: openssl cms -verify accepts it",
        arguments: Case.all
    )
    func externalSignerCompletes(_ testCase: Case) throws {
        try #require(!testCase.isGOST || GOSTEngine.isAvailable, "needs libengine-gost-openssl")
        let signer = try pki.issueLeaf(subject: "CN=Внешний подписант,O=ООО Ромашка", keyType: testCase.key)
        let key = try #require(signer.key as? LocalSigningKey)
        let content = Array("Акт приёма-передачи № 3\n".utf8)
        for detached in [true, false] {
            let pending = try CMSSigner.prepare(
                content: content,
                certificate: signer.certificate,
                chain: signer.chain,
                detached: detached,
                scheme: testCase.scheme,
                documentName: "акт.txt"
            )
            // Without a PDF the layout is the first one, which earlier releases read.
            #expect(pending.version == 1 && pending.pdf == nil)
            let json = try pending.jsonData()
            let value = try externalValue(pending, key: key, testCase)

            let restored = try PendingSignature(jsonData: json)
            #expect(restored == pending)
            let signature = try CMSSigner.complete(
                restored,
                signatureValue: value,
                attachedContent: detached ? nil : content
            )
            let checked = try OpenSSLCMS.verify(
                signature,
                content: detached ? content : nil,
                trust: [pki.root.certificate],
                cades: true,
                anyPurpose: true,
                extra: testCase.isGOST ? ["-engine", "gost"] : []
            )
            #expect(checked.result.succeeded, "\(testCase.name), detached \(detached): \(checked.result.errorOutput)")
            #expect(checked.content == content)
            let ours = CMSVerifier.verify(
                signature: signature,
                content: detached ? content : nil,
                trustAnchors: [pki.root.certificate]
            )
            #expect(ours.isValid, "\(ours)")
        }
    }

    @Test("a value from another key, over other bytes or with another scheme: signatureValueInvalid")
    func wrongValuesAreRefused() throws {
        let signer = try pki.issueLeaf(subject: "CN=Подписант", keyType: .rsa2048)
        let stranger = try pki.issueLeaf(subject: "CN=Чужой", keyType: .rsa2048)
        let pending = try CMSSigner.prepare(content: [1, 2, 3], certificate: signer.certificate)
        let rsa = Case.all[0]
        let strangerKey = try #require(stranger.key as? LocalSigningKey)
        let signerKey = try #require(signer.key as? LocalSigningKey)
        let otherPending = try CMSSigner.prepare(content: [4, 5, 6], certificate: signer.certificate)
        let wrong: [(String, [UInt8])] = [
            ("another key", try externalValue(pending, key: strangerKey, rsa)),
            ("other bytes", try externalValue(otherPending, key: signerKey, rsa)),
            ("another scheme", try externalValue(pending, key: signerKey, Case.all[1])),
            ("empty", []),
        ]
        for (name, value) in wrong {
            let error = try #require(throws: CertificateProviderError.self, "\(name)") {
                try CMSSigner.complete(pending, signatureValue: value)
            }
            #expect(error.code == .signatureValueInvalid, "\(name): \(error)")
            #expect(error.reason.contains("CN=Подписант"), "\(error.reason)")
        }
    }

    @Test("an edited pending file, other content, a later version, a broken certificate: refused with the field named")
    func editedPendingSignaturesAreRefused() throws {
        let signer = try pki.issueLeaf(subject: "CN=Подписант", keyType: .p256)
        let key = try #require(signer.key as? LocalSigningKey)
        let content = Array("оригинал".utf8)
        let pending = try CMSSigner.prepare(content: content, certificate: signer.certificate, detached: false)
        let value = try externalValue(pending, key: key, Case.all[2])
        var object = try #require(try JSONSerialization.jsonObject(with: try pending.jsonData()) as? [String: Any])

        // The signing time moved: the data to sign no longer follows from the fields.
        object["signingTime"] = "2020-01-01T00:00:00Z"
        let moved = try PendingSignature(jsonData: try JSONSerialization.data(withJSONObject: object))
        let mismatch = try #require(throws: CertificateProviderError.self) {
            try CMSSigner.complete(moved, signatureValue: value, attachedContent: content)
        }
        #expect(mismatch.code == .pendingSignatureMismatch, "\(mismatch)")

        // Other content for an attached signature; no content; content for a detached one.
        let other = try #require(throws: CertificateProviderError.self) {
            try CMSSigner.complete(pending, signatureValue: value, attachedContent: Array("подделка".utf8))
        }
        #expect(other.code == .pendingSignatureMismatch, "\(other)")
        let missing = try #require(throws: CertificateProviderError.self) {
            try CMSSigner.complete(pending, signatureValue: value)
        }
        #expect(missing.code == .invalidParameter, "\(missing)")

        // Fields edited so that the file itself shows it.
        let edits: [(field: String, value: Any)] = [
            ("version", PendingSignature.currentVersion + 1), ("dataToSign", "bm90IHRoZSBhdHRyaWJ1dGVz"),
            ("certificate", "AAAA"),
            ("digestAlgorithm", "md5"), ("signingTime", "yesterday"),
        ]
        for edit in edits {
            var edited = try #require(try JSONSerialization.jsonObject(with: try pending.jsonData()) as? [String: Any])
            edited[edit.field] = edit.value
            let error = try #require(throws: CertificateProviderError.self, "\(edit.field)") {
                try PendingSignature(jsonData: try JSONSerialization.data(withJSONObject: edited))
            }
            #expect(error.code == .malformedInput, "\(edit.field): \(error)")
            #expect(error.reason.contains(edit.field), "\(edit.field): \(error.reason)")
        }

        // The untouched file still completes, and nothing above changed it.
        let signature = try CMSSigner.complete(pending, signatureValue: value, attachedContent: content)
        #expect(CMSVerifier.verify(signature: signature, content: nil, trustAnchors: [pki.root.certificate]).isValid)
    }

    @Test("a scheme that does not fit the key is refused when preparing")
    func schemeMustFitTheKey() throws {
        let signer = try pki.issueLeaf(subject: "CN=Подписант", keyType: .p256)
        let error = try #require(throws: CertificateProviderError.self) {
            try CMSSigner.prepare(content: [1], certificate: signer.certificate, scheme: .rsaPSS)
        }
        #expect(error.code == .invalidParameter, "\(error)")
    }
}
