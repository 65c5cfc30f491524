import CertificateProviders
import Foundation
import HTTPClient
import RemoteProviderSupport
import Signing
import TestSupport
import Testing

/// Passes every request to libcurl after `delay` seconds: a responder reached over a slow
/// network, or asked from a loaded machine, whose answer is made after the question was asked.
struct DelayingTransport: HTTPTransport {
    let delay: Duration
    let next = CurlTransport()

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await Task.sleep(for: delay)
        return try await next.send(request)
    }
}

/// Without a validation time, "now" is when an answer has arrived, not when it was asked for: a
/// fresh OCSP answer from a responder that took longer than the allowed clock skew must not look
/// made after the check (seen in a loaded test run: thisUpdate nine minutes after the asking).
/// The skew is one second and the responder (certomancer's, thisUpdate = the time it answers)
/// is reached three seconds late.
@Suite("a slow OCSP responder's fresh answer is judged when it arrives", .serialized)
struct SlowResponderTests {
    static let configuration = RevocationChecker.Configuration(allowedClockSkew: 1)
    static let slow = TransportBinaryFetcher(transport: DelayingTransport(delay: .seconds(3)))

    /// The B-LT evidence the slow fetcher's cache collects for certomancer's RSA signer, at `time`
    /// (nil: when the answer arrives).
    static func collectEvidence(at time: Date?) async throws -> RevocationEvidence {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let cache = RevocationDataCache(fetcher: slow, configuration: configuration)
        return try await cache.evidence(
            for: try pki.certificate("signer-rsa"),
            issuer: try pki.certificate("interm"),
            trustAnchors: [try pki.certificate("root")],
            at: time
        )
    }

    @Test("collecting B-LT validation data takes the late answer as evidence")
    func cacheTakesTheLateAnswer() async throws {
        let evidence = try await Self.collectEvidence(at: nil)
        guard case .ocsp = evidence else {
            Issue.record("expected the OCSP answer, got \(evidence)")
            return
        }
    }

    @Test("an online status check says good from the late answer")
    func checkerTakesTheLateAnswer() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        var configuration = Self.configuration
        configuration.checksOnline = true
        let checker = RevocationChecker(configuration: configuration, fetcher: Self.slow)
        let status = await checker.status(
            of: try pki.certificate("signer-rsa"),
            issuer: try pki.certificate("interm"),
            trustAnchors: [try pki.certificate("root")]
        )
        #expect(status.state == .good, "\(status.source)")
        // From the OCSP answer, not from the CRL the checker falls back to.
        #expect(status.source.hasPrefix("OCSP "), "\(status.source)")
    }

    @Test("with a validation time given, the answer must be current at it: the late OCSP answer is not, the CRL is")
    func aGivenTimeStillBinds() async throws {
        let evidence = try await Self.collectEvidence(at: Date())
        guard case .crl = evidence else {
            Issue.record("expected the CRL (the OCSP answer postdates the given time), got \(evidence)")
            return
        }
    }
}
