import CertificateProviders
import Foundation
import PKCS12Provider
import Testing

/// Inputs `make fuzz` (Tests/Fuzz) found or that were made while building it; each is also in the
/// fuzz seed corpus under `Tests/Fuzz/Regressions/<target>/`.
@Suite("PKCS#12 fuzz regressions")
struct FuzzRegressionTests {
    static func regression(_ target: String, _ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Regressions/\(target)/\(name)")
        return Array(try Data(contentsOf: url))
    }

    /// `openssl pkcs12 -export -iter 9999999 -passout pass:fuzz-password` (EC P-256): MAC, certificate
    /// part and key each just under the per-derivation limit, so each check passed and one open
    /// spent three 10-million-iteration derivations (over 10 s, the fuzz timeout). The total is now
    /// bounded: the MAC runs, then the certificate part is refused before its derivation.
    @Test("derivations each under the limit but together over it → .malformedInput, with the right and a wrong password",
          arguments: ["fuzz-password", "wrong password"])
    func iterationTotal(password: String) throws {
        let bytes = try Self.regression("pkcs12-right-password", "iterations-9999999-each.p12")
        let error = Fixtures.expectError(.malformedInput) { _ = try PKCS12File(data: bytes, password: Secret(password)) }
        #expect(error?.reason.contains("in total") == true, "\(String(describing: error))")
    }
}
