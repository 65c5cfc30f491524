import CertificateProviders
import Foundation
import Signing

/// RFC 3161 and OCSP answers as the package checks them: `TimestampOpenSSL.checkResponse` (the TSA
/// client), `TimestampVerifier.verify(token:…)` (CAdES-T verification) and
/// `RevocationOpenSSL.checkOCSPResponse` (the revocation checker). Inputs are the raw DER answers.
///
/// Fixtures from the seed directory (`CERTSIGN_FUZZ_SEEDS`, written by `make-seeds.sh`): the CA
/// (`trust-anchor.pem`) that issued the TSA certificate and the OCSP leaf (`ocsp-leaf.pem`).
/// The seed answers were made for other requests (no nonce), so nonce checks fail after the
/// signature checks ran.
enum ValidationTargets {
    struct Fixture: Sendable {
        let anchors: [Certificate]
        let leaf: Certificate?
        let timestampRequest: TimestampOpenSSL.Request
        let ocspRequest: RevocationOpenSSL.OCSPRequest?
    }

    static let fixture: Fixture? = {
        let seeds = ProcessInfo.processInfo.environment["CERTSIGN_FUZZ_SEEDS"] ?? ""
        func certificates(_ name: String) -> [Certificate] {
            guard let bytes = FileManager.default.contents(atPath: seeds + "/" + name) else { return [] }
            return (try? Certificate.certificates(derOrPEM: Array(bytes))) ?? []
        }
        let anchors = certificates("trust-anchor.pem")
        let leaf = certificates("ocsp-leaf.pem").first
        guard
            let request = try? TimestampOpenSSL.makeRequest(
                imprint: DigestAlgorithm.sha256.hash(FuzzSeeds.cmsContent),
                digest: .sha256,
                policy: nil
            )
        else { return nil }
        let ocsp = leaf.flatMap { leaf in
            anchors.first.flatMap { try? RevocationOpenSSL.makeOCSPRequest(for: leaf, issuer: $0) }
        }
        return Fixture(anchors: anchors, leaf: leaf, timestampRequest: request, ocspRequest: ocsp)
    }()

    static func timestamp(_ input: [UInt8]) -> String {
        guard let fixture else { fatalError("certsign-fuzz: the validation fixture could not be made") }
        var outcome = "response: "
        do {
            let token = try TimestampOpenSSL.checkResponse(
                input,
                request: fixture.timestampRequest,
                trustAnchors: fixture.anchors,
                at: Date(),
                window: Date.distantPast...Date.distantFuture
            )
            outcome += "token at \(token.time)"
        } catch {
            outcome += "\(error)"
        }
        let check = TimestampVerifier.verify(token: input, data: FuzzSeeds.cmsContent, trustAnchors: fixture.anchors)
        return outcome + "; as token: \(check.isValid ? "valid" : check.failureReason ?? "invalid")"
    }

    static func ocsp(_ input: [UInt8]) -> String {
        guard let fixture, let leaf = fixture.leaf, let issuer = fixture.anchors.first,
            let request = fixture.ocspRequest
        else {
            fatalError("certsign-fuzz: the OCSP fixture could not be made (CERTSIGN_FUZZ_SEEDS)")
        }
        do {
            let status = try RevocationOpenSSL.checkOCSPResponse(
                input,
                request: request,
                certificate: leaf,
                issuer: issuer,
                trustAnchors: fixture.anchors,
                freshness: .init(time: Date(), skew: 300, maximumAge: 7 * 86_400, requiresNonce: false),
                source: "fuzz"
            )
            return "\(status)"
        } catch {
            return "\(error)"
        }
    }
}
