import CertificateProviders
import Foundation
import PKCS12Provider
import Signing

enum PKCS12Targets {
    /// Opens the input as PKCS#12 and touches what a caller reads; errors are expected.
    static func open(_ input: [UInt8], password: String) -> String {
        let file: PKCS12File
        do {
            file = try PKCS12File(data: input, password: Secret(password))
        } catch {
            return "\(error)"
        }
        let keys = file.keys.map(\.description)
        _ = file.certificates.map(\.description)
        return
            "opened: \(keys.count) keys, \(file.certificates.count) certificates, MAC verified \(file.protection.isMACVerified)"
    }
}

enum CertificateTargets {
    /// Parses the input as one DER certificate and as a DER-or-PEM bundle.
    static func parse(_ input: [UInt8]) -> String {
        var outcome = "DER: "
        do {
            let certificate = try Certificate(derEncoded: input)
            _ = certificate.pemRepresentation
            outcome += certificate.description
        } catch {
            outcome += "\(error)"
        }
        do {
            outcome += "; DER or PEM: \(try Certificate.certificates(derOrPEM: input).map(\.description))"
        } catch {
            outcome += "; DER or PEM: \(error)"
        }
        return outcome
    }
}

enum CMSTargets {
    /// The CA the seed signatures chain to (`CERTSIGN_FUZZ_TRUST_ANCHOR`, a PEM file); none when unset.
    static let trustAnchors: [Certificate] = {
        guard let path = ProcessInfo.processInfo.environment["CERTSIGN_FUZZ_TRUST_ANCHOR"],
            let pem = FileManager.default.contents(atPath: path)
        else { return [] }
        return (try? Certificate.certificates(derOrPEM: Array(pem))) ?? []
    }()

    /// Verifies the input as an attached signature and as a detached one over the seed content.
    static func verify(_ input: [UInt8]) -> String {
        let attached = CMSVerifier.verify(signature: input, content: nil, trustAnchors: trustAnchors)
        let detached = CMSVerifier.verify(signature: input, content: FuzzSeeds.cmsContent, trustAnchors: trustAnchors)
        return "attached: \(attached); detached: \(detached)"
    }
}
