import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@testable import Signing

@Suite("SignedDataTemplateCache: single signatures on a prepared SignedData")
struct SignedDataTemplateCacheTests {
    let fixture: Fixture
    init() throws { fixture = try Fixture(sharedBy: .signingSuites) }

    static let first = Array("first document\n".utf8) + [UInt8](repeating: 0x41, count: 1000)
    static let second = Array("second document\n".utf8) + [UInt8](repeating: 0x42, count: 1000)

    /// Signs through `cache` as CMSSigner does for a local key.
    private func sign(
        _ content: [UInt8],
        _ identity: SigningIdentity,
        cache: SignedDataTemplateCache,
        format: SignatureFormat = .cadesBES,
        detached: Bool = true,
        time: Date = Date()
    ) throws -> [UInt8] {
        guard let key = identity.key as? LocalSigningKey else { throw CertificateProviderError(.cryptoFailure, "") }
        return try cache.sign(
            SignedDataSigner.Request(
                digest: DigestAlgorithm.sha256.hash(content),
                attachedContent: detached ? nil : content,
                format: format,
                digestAlgorithm: .sha256,
                signingTime: time
            ),
            signingTime: time,
            identity: identity,
            key: key
        )
    }

    private func verifies(
        _ signature: [UInt8],
        _ content: [UInt8],
        detached: Bool = true,
        cades: Bool = true
    ) throws
        -> Bool
    {
        try OpenSSLCLI.verify(
            signature: signature,
            content: content,
            detached: detached,
            root: fixture.pki.root.certificate,
            cades: cades
        ).succeeded
    }

    @Test("Two documents share one template but each signature has its own digest and signing time")
    func sharedTemplate() throws {
        let cache = SignedDataTemplateCache()
        for identity in [fixture.ec, fixture.rsa] {
            let built = cache.templatesBuilt
            let one = try sign(Self.first, identity, cache: cache, time: Date(timeIntervalSince1970: 1_780_000_000))
            let two = try sign(Self.second, identity, cache: cache, time: Date(timeIntervalSince1970: 1_790_000_000))
            #expect(cache.templatesBuilt == built + 1, "the second signature reuses the first one's template")
            #expect(try verifies(one, Self.first))
            #expect(try verifies(two, Self.second))
            // Each carries its own document's digest: neither verifies over the other document.
            #expect(!(try verifies(one, Self.second)))
            #expect(!(try verifies(two, Self.first)))
            // openssl prints the signing times as UTCTIME "May 28 20:26:40 2026 GMT".
            let dumps = try [one, two].map(OpenSSLCLI.print)
            #expect(dumps[0].contains("May 28 20:26:40 2026") && !dumps[0].contains("Sep 21 14:13:20 2026"))
            #expect(dumps[1].contains("Sep 21 14:13:20 2026") && !dumps[1].contains("May 28 20:26:40 2026"))
        }
        #expect(cache.entryCount == 2)
    }

    @Test("Attached signatures and CMS without ESS through the cache verify; attached content is not kept")
    func attachedAndCMS() throws {
        let cache = SignedDataTemplateCache()
        for _ in 0..<2 {
            let attached = try sign(Self.first, fixture.ec, cache: cache, detached: false)
            #expect(try verifies(attached, Self.first, detached: false))
            let second = try sign(Self.second, fixture.ec, cache: cache, detached: false)
            #expect(try verifies(second, Self.second, detached: false))
            #expect(!(try OpenSSLCLI.print(second)).contains("first document"))
            let plain = try sign(Self.second, fixture.rsa, cache: cache, format: .cms)
            #expect(try verifies(plain, Self.second, cades: false))
            #expect(!(try OpenSSLCLI.print(plain)).contains("signingCertificateV2"))
        }
        #expect(cache.templatesBuilt == 2)
    }

    @Test("Another identity, a renewed certificate on the same key and a new key object get their own templates")
    func separateIdentities() throws {
        let cache = SignedDataTemplateCache()
        let key = try #require(fixture.ec.key as? LocalSigningKey, "the fixture's EC identity has a local key")
        _ = try sign(Self.first, fixture.ec, cache: cache)
        // Same key, another certificate: signs as that certificate (openssl -cades checks the ESS
        // hash against the signer certificate, so a stale template would fail).
        let renewed = SigningIdentity(
            certificate: try fixture.pki.issueCertificate(subject: "CN=EC Signer renewed,O=Test", publicKey: key),
            chain: fixture.ec.chain,
            key: key
        )
        let renewedSignature = try sign(Self.first, renewed, cache: cache)
        #expect(try verifies(renewedSignature, Self.first))
        #expect(try OpenSSLCLI.print(renewedSignature).contains("EC Signer renewed"))
        // The same key loaded again: another object, its own template.
        let reloaded = SigningIdentity(
            certificate: fixture.ec.certificate,
            chain: fixture.ec.chain,
            key: try LocalSigningKey(pemEncoded: try key.pemRepresentation(password: nil))
        )
        #expect(try verifies(try sign(Self.first, reloaded, cache: cache), Self.first))
        // Another chain (leaf only).
        let bare = SigningIdentity(certificate: fixture.ec.certificate, chain: [], key: key)
        let bareSignature = try sign(Self.first, bare, cache: cache)
        #expect(try OpenSSLCLI.print(bareSignature).components(separatedBy: "cert_info:").count - 1 == 1)
        #expect(cache.templatesBuilt == 4)
        #expect(cache.entryCount == 4)
        // A key that does not belong to the certificate is refused before any template is cached.
        let wrong = SigningIdentity(certificate: fixture.rsa.certificate, chain: fixture.rsa.chain, key: key)
        #expect(throws: CertificateProviderError(.keyCertificateMismatch, "")) {
            _ = try sign(Self.first, wrong, cache: cache)
        }
        #expect(cache.entryCount == 4)
    }

    @Test("The cache stays within its bounds and drops signers whose key is gone")
    func bounds() throws {
        let cache = SignedDataTemplateCache(entryLimit: 2, idleLimit: 1)
        _ = try sign(Self.first, fixture.ec, cache: cache)
        _ = try sign(Self.first, fixture.rsa, cache: cache)
        do {
            let passing = try fixture.pki.issueLeaf(subject: "CN=Passing", keyType: .p256)
            #expect(try verifies(try sign(Self.first, passing, cache: cache), Self.first))
            #expect(cache.entryCount == 2, "the least recently used signer (ec) was dropped")
        }
        // The passing identity's key object is gone: its entry goes at the next return.
        _ = try sign(Self.first, fixture.rsa, cache: cache)
        #expect(cache.entryCount == 1)
        let built = cache.templatesBuilt
        _ = try sign(Self.first, fixture.ec, cache: cache)
        #expect(cache.templatesBuilt == built + 1, "ec was dropped, so its template is built again")
    }

    @Test("Concurrent signers with one identity never share a template; every signature verifies")
    func concurrent() async throws {
        let cache = SignedDataTemplateCache(entryLimit: 4, idleLimit: 2)
        let identity = fixture.ec
        let signatures = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for index in 0..<16 {
                group.addTask {
                    let content = Self.first + [UInt8(index)]
                    let key = try #require(
                        identity.key as? LocalSigningKey,
                        "the fixture's EC identity has a local key"
                    )
                    var last: [UInt8] = []
                    for _ in 0..<20 {
                        let time = Date()
                        last = try cache.sign(
                            SignedDataSigner.Request(
                                digest: DigestAlgorithm.sha256.hash(content),
                                format: .cadesBES,
                                digestAlgorithm: .sha256,
                                signingTime: time
                            ),
                            signingTime: time,
                            identity: identity,
                            key: key
                        )
                    }
                    return (index, last)
                }
            }
            var made: [Int: [UInt8]] = [:]
            for try await (index, signature) in group { made[index] = signature }
            return made
        }
        for (index, signature) in signatures.sorted(by: { $0.key < $1.key }) {
            #expect(try verifies(signature, Self.first + [UInt8(index)]), "document \(index)")
        }
        #expect(cache.entryCount == 1)
        #expect(cache.templatesBuilt >= 1 && cache.templatesBuilt <= 16)
    }

    @Test("CMSSigner.sign with a local key goes through the shared cache and openssl verifies it")
    func signerUsesCache() async throws {
        let identity = try fixture.pki.issueLeaf(subject: "CN=Shared Cache", keyType: .p256)
        let before = SignedDataTemplateCache.shared.templatesBuilt
        for content in [Self.first, Self.second] {
            let signature = try await CMSSigner.sign(content: content, identity: identity)
            #expect(try verifies(signature, content))
        }
        let synchronous = try CMSSigner.signSynchronously(content: Self.second, identity: identity)
        #expect(try verifies(synchronous, Self.second))
        // Other tests share the process-wide cache: only that this identity built a template in it.
        let built = SignedDataTemplateCache.shared.templatesBuilt - before
        #expect(built >= 1)
    }
}

@Suite("SignedDataTemplate: the encoded form (OpenSSL's DER with the per-document values written in place)")
struct SignedDataTemplateEncodedFormTests {
    let fixture: Fixture
    init() throws { fixture = try Fixture(sharedBy: .signingSuites) }

    private func template(_ identity: SigningIdentity, format: SignatureFormat = .cadesBES) throws -> SignedDataTemplate
    {
        guard let key = identity.key as? LocalSigningKey else { throw CertificateProviderError(.cryptoFailure, "") }
        return try SignedDataTemplate(
            identity: identity,
            key: key,
            format: format,
            detached: true,
            digestAlgorithm: .sha256,
            signingCertificateAttribute: nil
        )
    }

    /// `openssl cms -cmsout` re-encodes what it parsed: DER that OpenSSL itself would write.
    private func reencoded(_ signatures: [[UInt8]]) throws -> [[UInt8]] {
        let directory = try TemporaryDirectory(prefix: "encoded-form")
        return try signatures.enumerated().map { index, signature in
            let input = try directory.write("in-\(index).p7s", signature)
            let output = directory.url.appendingPathComponent("out-\(index).p7s").path
            let run = try ExternalTool.run(
                "openssl",
                ["cms", "-cmsout", "-inform", "DER", "-outform", "DER", "-in", input, "-out", output]
            )
            #expect(run.succeeded, "openssl could not read signature \(index): \(run.errorOutput)")
            return try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        }
    }

    @Test(
        "Every ECDSA signature length gets its own checked DER: openssl re-encodes each byte for byte and verifies it"
    )
    func ecdsaLengths() throws {
        let template = try template(fixture.ec)
        var byLength: [Int: (signature: [UInt8], content: [UInt8])] = [:]
        let time = Date(timeIntervalSince1970: 1_780_000_000)
        // ECDSA DER signatures are 70, 71 or 72 bytes (rarely fewer): 400 signatures meet at least two lengths.
        for index in 0..<400 {
            let content = Array("document \(index)".utf8)
            let signature = try template.sign(
                digest: DigestAlgorithm.sha256.hash(content),
                signingTime: time,
                attachedContent: nil
            )
            // The ContentInfo's length grows with the signature's: one sample per signature length.
            if byLength[signature.count] == nil { byLength[signature.count] = (signature, content) }
        }
        #expect(byLength.count >= 2, "ContentInfo lengths met: \(byLength.keys.sorted())")
        #expect(template.encodedShapeCount == byLength.count, "one checked DER per signature length, all used")
        let samples = byLength.keys.sorted().map { byLength[$0]! }
        #expect(try reencoded(samples.map(\.signature)) == samples.map(\.signature))
        for sample in samples {
            #expect(
                try OpenSSLCLI.verify(
                    signature: sample.signature,
                    content: sample.content,
                    detached: true,
                    root: fixture.pki.root.certificate,
                    cades: true
                ).succeeded
            )
            #expect(try OpenSSLCLI.print(sample.signature).contains("May 28 20:26:40 2026"))
        }
    }

    @Test(
        "RSA and plain CMS through the encoded form equal OpenSSL's encoding and verify; times from 2050 take OpenSSL's structure"
    )
    func rsaPlainAndGeneralizedTime() throws {
        let content = Array("Договор №7\n".utf8)
        let digest = DigestAlgorithm.sha256.hash(content)
        var made: [[UInt8]] = []
        for (identity, format) in [(fixture.rsa, SignatureFormat.cms), (fixture.ec, .cms), (fixture.rsa, .cadesBES)] {
            let template = try template(identity, format: format)
            made.append(
                try template.sign(
                    digest: digest,
                    signingTime: Date(timeIntervalSince1970: 1_790_000_000),
                    attachedContent: nil
                )
            )
            // 2051-01-01: a GeneralizedTime, which the encoded form does not take.
            let later = try template.sign(
                digest: digest,
                signingTime: Date(timeIntervalSince1970: 2_556_143_999 + 1),
                attachedContent: nil
            )
            #expect(try OpenSSLCLI.print(later).contains("2051"))
            made.append(later)
            // And back to a UTCTime after the structure was used the other way.
            made.append(
                try template.sign(
                    digest: digest,
                    signingTime: Date(timeIntervalSince1970: 1_790_000_001),
                    attachedContent: nil
                )
            )
            #expect(template.encodedShapeCount >= 1, "the UTCTime signatures took the encoded form")
        }
        #expect(try reencoded(made) == made)
        for (index, signature) in made.enumerated() {
            #expect(
                try OpenSSLCLI.verify(
                    signature: signature,
                    content: content,
                    detached: true,
                    root: fixture.pki.root.certificate,
                    cades: index >= 6
                ).succeeded,
                "signature \(index)"
            )
        }
    }

    @Test("The offset check refuses a value found twice, a value not found, and a change outside the values")
    func offsetCheck() throws {
        let first: [UInt8] = [0x30, 0x0A, 1, 2, 3, 0x04, 0x02, 9, 9, 0x05, 7, 7]
        var second = first
        second[2...4] = [0xFE, 0xFD, 0xFC]
        #expect(
            try SignedDataTemplate.EncodedForm.locate([[[1, 2, 3], [0xFE, 0xFD, 0xFC]]], in: [first, second]) == [2]
        )
        // Not found in the second encoding at the same place.
        #expect(throws: CertificateProviderError.self) {
            try SignedDataTemplate.EncodedForm.locate([[[1, 2, 3], [0xFE, 0xFD, 0xFB]]], in: [first, second])
        }
        // A byte that changes outside any value (a length that depends on the value).
        var shifted = second
        shifted[1] = 0x0B
        #expect(throws: CertificateProviderError.self) {
            try SignedDataTemplate.EncodedForm.locate([[[1, 2, 3], [0xFE, 0xFD, 0xFC]]], in: [first, shifted])
        }
        // A value found at two places.
        let twice: [UInt8] = [7, 7, 1, 7, 7]
        #expect(throws: CertificateProviderError.self) {
            try SignedDataTemplate.EncodedForm.locate([[[7, 7], [8, 8]]], in: [twice, [8, 8, 1, 8, 8]])
        }
        // Encodings of different lengths.
        #expect(throws: CertificateProviderError.self) {
            try SignedDataTemplate.EncodedForm.locate(
                [[[1, 2, 3], [0xFE, 0xFD, 0xFC]]],
                in: [first, Array(second.dropLast())]
            )
        }
    }
}
