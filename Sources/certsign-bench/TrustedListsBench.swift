import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import TrustedLists

/// `--suites trusted-lists`: how long the trusted-list loader takes to refuse hostile lists (an
/// entity bomb, an external entity, 10⁵ services, a 1 GiB file), each beside the goal of one second
/// (a refusal must come in bounded time whatever the list holds; the tests bound its memory).
let trustedListRefusalGoalSeconds = 1.0

func runTrustedListsBenchmark(_ harness: BenchHarness) async throws {
    // Each list is refused before its signature is looked at: any certificate will do as its signer.
    let signers = [try TestPKI().root.certificate]
    let huge = harness.scratch.appendingPathComponent("trusted-list-1gib.xml")
    try HostileTrustedLists.writeGigabyteFile(huge.path)
    defer { try? FileManager.default.removeItem(at: huge) }
    let cases: [(name: String, code: TrustedListError.Code, refuse: () throws -> Void)] = [
        refusing("a billion-laughs entity bomb", .entitiesRefused, HostileTrustedLists.billionLaughs, signers),
        refusing(
            "an external entity (file:///etc/passwd)",
            .entitiesRefused,
            HostileTrustedLists.externalEntity,
            signers
        ),
        refusing("a list of 10^5 services", .limitExceeded, HostileTrustedLists.manyServices(100_000), signers),
        ("a 1 GiB file", .limitExceeded, { _ = try TrustedList.load(contentsOf: huge, signers: signers) }),
    ]
    for entry in cases {
        let sample = try await harness.time {
            do {
                try entry.refuse()
                throw BenchError("\(entry.name) was loaded, not refused")
            } catch let error as TrustedListError where error.code == entry.code {
                // Refused as it must be.
            }
        }
        harness.record(
            "refuse \(entry.name) (TrustedList, \(entry.code))",
            ours: sample,
            baseline: Sample(trustedListRefusalGoalSeconds),
            baselineName: "goal 1 s",
            unit: .seconds,
            goal: 1,
            higherIsBetter: false
        )
    }
}

/// A case that parses `xml` as a list, which must be refused with `code`.
private func refusing(
    _ name: String,
    _ code: TrustedListError.Code,
    _ xml: String,
    _ signers: [Certificate]
) -> (name: String, code: TrustedListError.Code, refuse: () throws -> Void) {
    let bytes = Array(xml.utf8)
    return (name, code, { _ = try TrustedList(xml: bytes, name: "hostile.xml", signers: signers) })
}
