import CertificateProviders
import Foundation
import PKCS12Provider
import TestSupport
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

    /// `openssl pkcs12 -export -iter 9999999 -passout pass:fuzz-password` (EC P-256): MAC,
    /// certificate part and key each just under the old per-derivation limit (10 000 000), so one
    /// open ran three 10-million-iteration derivations: over 10 s under the fuzz build (3 s without
    /// sanitizers). The limit is now 3 000 000, so the MAC is refused before any derivation runs.
    @Test(
        "10-million-iteration derivations → .malformedInput before any derivation, with the right and a wrong password",
        arguments: ["fuzz-password", "wrong password"]
    )
    func iterationLimit(password: String) throws {
        let bytes = try Self.regression("pkcs12-right-password", "iterations-9999999-each.p12")
        let error = expectError(.malformedInput) {
            _ = try PKCS12File(data: bytes, password: Secret(password))
        }
        #expect(
            error?.reason.contains("9999999 key-derivation iterations (at most 3000000 accepted)") == true,
            "\(String(describing: error))"
        )
    }

    /// `openssl pkcs12 -export -iter 2999999`: each derivation is within the limit, together they
    /// are three times over it. The MAC runs, then the certificate part is refused before its
    /// derivation.
    @Test(
        "derivations each under the limit but together over it → .malformedInput, with the right and a wrong password",
        arguments: ["fuzz-password", "wrong password"]
    )
    func iterationTotal(password: String) throws {
        let bytes = try Self.regression("pkcs12-right-password", "iterations-2999999-each.p12")
        let error = expectError(.malformedInput) {
            _ = try PKCS12File(data: bytes, password: Secret(password))
        }
        #expect(
            error?.reason.contains("more than 3000000 key-derivation iterations in total") == true,
            "\(String(describing: error))"
        )
    }
}
