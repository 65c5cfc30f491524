import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import RemoteProviderSupport
import Signing
import TestSupport
import Testing

/// `LongTermTestServices`: the in-process TSA, OCSP responder and CRL with the CA whose signers
/// name them, used as the long-term signing article shows, judged by our verifier offline and by
/// openssl.
@Suite struct LongTermTestServicesTests {
    /// B-LT through `SigningOptions.levelUpgrade`, as the article writes it.
    static func longTermOptions(_ services: LongTermTestServices) throws -> SigningOptions {
        let fetcher = TransportBinaryFetcher(transport: CurlTransport())
        let tsa = TimestampAuthorityClient(
            configuration: .init(url: services.timestampURL, trustAnchors: services.trustAnchors),
            fetcher: fetcher
        )
        let collector = ValidationDataCollector(
            cache: RevocationDataCache(fetcher: fetcher),
            trustAnchors: services.trustAnchors
        )
        return SigningOptions(levelUpgrade: try LongTermLevelUpgrade(level: .bLT, authority: tsa, collector: collector))
    }

    static func coordinator(_ signer: SigningIdentity) throws -> SigningCoordinator {
        try SigningCoordinator.makeForTesting(providers: [
            InMemoryCertificateProvider(id: "test.long-term", identity: signer)
        ])
    }

    @Test func aSignerOfTheServicesSignsBLTThatVerifiesOfflineAndWithOpenSSL() async throws {
        let services = try LongTermTestServices()
        defer { services.stop() }
        let signer = try services.issueSigner(subject: "CN=Долгосрочный подписант,O=swift-certificate-providers")
        let content = Array("Договор поставки № 7\n".utf8)
        let result = try await Self.coordinator(signer).sign(
            document: .bytes(content, name: "contract.txt"),
            provider: "test.long-term",
            options: try Self.longTermOptions(services)
        )
        #expect(result.addedTimestamps.count == 1)
        // The signer's and the TSA's certificates were asked about at the services' own OCSP route.
        let paths = services.emulator.receivedRequests.map(\.path)
        #expect(paths.filter { $0 == "/tsa" }.count == 1, "\(paths)")
        // Both answered `good` by OCSP, so no CRL was needed.
        #expect(paths.filter { $0 == "/ocsp" }.count == 2, "\(paths)")
        #expect(!paths.contains("/crl"), "\(paths)")

        // Offline: the services are gone, the signature carries what its check needs.
        let verified = try Self.expectValidOffline(result.signature, content: content, services)
        let answers = verified.signers.first?.revocation?.certificates ?? []
        let signerAnswer = answers.first { $0.certificate == signer.certificate }
        #expect(signerAnswer?.status.state == .good, "\(answers)")
        #expect(signerAnswer?.status.source.contains("OCSP") == true, "\(answers)")
        #expect(answers.contains { $0.role == .timestampAuthority && $0.status.state == .good }, "\(answers)")
    }

    /// Stops the services, then checks `signature` offline: a valid B-LT signature for our verifier,
    /// and for `openssl cms -verify`.
    @discardableResult
    static func expectValidOffline(
        _ signature: [UInt8],
        content: [UInt8],
        _ services: LongTermTestServices
    ) throws -> VerificationResult {
        services.stop()
        let verified = CMSVerifier.verify(signature: signature, content: content, trustAnchors: services.trustAnchors)
        #expect(verified.isValid, "\(String(describing: verified.failure))")
        #expect(verified.format == .cadesLT)
        let openssl = try OpenSSLCMS.verify(signature, content: content, trust: services.trustAnchors)
        #expect(openssl.succeeded, "\(openssl.errorOutput)")
        return verified
    }

    @Test func aCertificateWithoutTheServicesURLsCannotReachBLT() async throws {
        let services = try LongTermTestServices()
        defer { services.stop() }
        // Issued by the same CA, but naming no OCSP responder or CRL: nowhere to ask.
        let bare = try services.pki.issueLeaf(subject: "CN=No Revocation URLs")
        let error = await expectError(.revocationUnavailable) {
            try await Self.coordinator(bare).sign(
                document: .bytes(Array("x".utf8), name: "x.txt"),
                provider: "test.long-term",
                options: try Self.longTermOptions(services)
            )
        }
        #expect(error?.reason.contains("CN=No Revocation URLs") == true, "\(String(describing: error))")
    }

    @Test func aRevokedSignerOfTheServicesCannotReachBLT() async throws {
        let services = try LongTermTestServices()
        defer { services.stop() }
        let signer = try services.issueSigner(subject: "CN=Revoked Signer")
        services.emulator.revoke(signer.certificate)
        await expectError(.certificateRevoked) {
            try await Self.coordinator(signer).sign(
                document: .bytes(Array("x".utf8), name: "x.txt"),
                provider: "test.long-term",
                options: try Self.longTermOptions(services)
            )
        }
    }
}
