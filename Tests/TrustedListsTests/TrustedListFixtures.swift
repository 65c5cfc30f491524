import CertificateProviders
import Foundation
import TestSupport
import Testing
import TrustedLists

/// The trusted-list test data (Tests/Fixtures/TrustedLists, made by its generate.py): paths,
/// certificates, the time the lists are current at, and the judges (pyHanko's eutl_parse, xmlsec1).
enum TrustedListFixtures {
    static let directory = PackageRoot.url.appendingPathComponent("Tests/Fixtures/TrustedLists")

    /// A time inside every list's validity (issued 2026-01-01, NextUpdate 2036-01-01).
    static let now = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28

    static func url(_ file: String) -> URL { directory.appendingPathComponent(file) }

    static func certificatePath(_ label: String) -> String { url("certs/\(label).cert.pem").path }

    static func certificate(_ label: String) throws -> Certificate {
        try #require(
            try Certificate.certificates(derOrPEM: [UInt8](Data(contentsOf: url("certs/\(label).cert.pem")))).first
        )
    }

    /// `file` loaded with `signer`'s certificate at ``now``.
    static func load(_ file: String, signer: String = "tl-signer", at time: Date = now) throws -> TrustedList {
        try TrustedList.load(contentsOf: url(file), signers: [try certificate(signer)], at: time)
    }

    /// The LOTL and both TLs, checked with the LOTL signer's certificate at `time`.
    static func set(at time: Date = now) throws -> TrustedListSet {
        try TrustedListSet.load(
            files: ["lotl.xml", "tl-qc.xml", "tl-qtst.xml"].map(url),
            lotlSigners: [try certificate("lotl-signer")],
            at: time
        )
    }

    /// `--trusted-list` for the LOTL and both TLs, and `--lotl-signer`.
    static var listArguments: [String] {
        ["lotl.xml", "tl-qc.xml", "tl-qtst.xml"].flatMap { ["--trusted-list", url($0).path] }
            + ["--lotl-signer", certificatePath("lotl-signer")]
    }

    /// A detached CAdES signature of `document` by `signer`, made by pyHanko (sign.py); with `timestamp`,
    /// it carries a signature timestamp of that time by the test TSA.
    static func sign(_ document: String, by signer: String, timestampAt timestamp: String? = nil) throws -> String {
        let output = document + ".\(signer).p7s"
        let result = try ExternalTool.run(
            "python3",
            [url("sign.py").path, document, output, signer] + (timestamp.map { [$0] } ?? [])
        )
        try #require(result.succeeded, "sign.py failed (run `make deps`): \(result.errorOutput)")
        return output
    }

    /// Whether xmlsec1 verifies `file`'s signature with `signer`'s public key (the key the signature
    /// names in KeyInfo is not used: only key-name and key-value key data are enabled).
    static func xmlsec1Verifies(_ file: String, signer: String) throws -> Bool {
        let result = try ExternalTool.run(
            "xmlsec1",
            [
                "--verify", "--pubkey-cert-pem", certificatePath(signer), "--enabled-key-data", "key-name,key-value",
                url(file).path,
            ]
        )
        return result.succeeded
    }

    /// pyHanko's granted service periods of `file`, one canonical line each (type|name|from|until|certificates).
    static func pyHankoServices(_ file: String) throws -> [String] {
        let script = url("pyhanko_services.py").path
        let result = try ExternalTool.run("python3", [script, url(file).path])
        try #require(result.succeeded, "pyhanko_services.py failed (run `make deps`): \(result.errorOutput)")
        let rows = try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [[String: Any]])
        return rows.map { row in
            let certificates = (row["certificates"] as? [String] ?? []).joined(separator: ",")
            let until = row["until"] as? String ?? "open"
            return "\(row["type"] ?? "")|\(row["name"] ?? "")|\(row["from"] ?? "")|\(until)|\(certificates)"
        }.sorted()
    }

    /// Our granted periods of the CA/QC and QTST services (what pyHanko's eutl_parse reads), in the same form.
    static func ourServices(_ list: TrustedList) -> [String] {
        let kinds: Set<TrustServiceType> = [.qualifiedCertificateAuthority, .qualifiedTimestamping]
        return list.services.filter { kinds.contains($0.type) }.flatMap { service in
            service.grantedPeriods.map { period in
                let certificates = service.certificates.map { hex($0.sha256Fingerprint) }.sorted().joined(
                    separator: ","
                )
                let until = period.end.map(iso) ?? "open"
                return "\(service.type.uri)|\(service.name)|\(iso(period.start))|\(until)|\(certificates)"
            }
        }.sorted()
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func iso(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0) ?? .gmt))
    }
}

/// Expects `body` to throw a ``TrustedListError`` with `code`.
/// - Returns: the error, for checks of its reason; nil after a recorded issue.
@discardableResult
func expectTrustedListError<R>(
    _ code: TrustedListError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> TrustedListError? {
    do {
        let value = try body()
        Issue.record("expected \(code), got a value: \(value)", sourceLocation: sourceLocation)
    } catch let error as TrustedListError {
        #expect(error.code == code, "expected \(code), got \(error)", sourceLocation: sourceLocation)
        return error.code == code ? error : nil
    } catch {
        Issue.record("expected TrustedListError \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
