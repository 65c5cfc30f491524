import CertificateProviders
import Foundation
import TestSupport
import Testing
import TrustedLists

/// Hostile lists are refused in bounded memory with an error that says why: entity bombs and
/// external entities (no DTD is ever read), a list with 10⁵ services, nesting too deep, a 1 GB file.
@Suite struct TrustedListBoundsTests {
    static func load(_ xml: String, limits: TrustedListLimits = TrustedListLimits()) throws -> TrustedList {
        try TrustedList(
            xml: Array(xml.utf8),
            name: "hostile.xml",
            signers: [try TrustedListFixtures.certificate("tl-signer")],
            at: TrustedListFixtures.now,
            limits: limits
        )
    }

    @Test func billionLaughsIsRefused() throws {
        let error = expectTrustedListError(.entitiesRefused) { try Self.load(HostileTrustedLists.billionLaughs) }
        #expect(error?.reason.contains("hostile.xml has a DOCTYPE") == true)
    }

    @Test func externalEntitiesAreRefused() throws {
        expectTrustedListError(.entitiesRefused) { try Self.load(HostileTrustedLists.externalEntity) }
        expectTrustedListError(.entitiesRefused) { try Self.load(HostileTrustedLists.externalDTD) }
    }

    @Test func hundredThousandServicesAreRefused() throws {
        let error = expectTrustedListError(.limitExceeded) { try Self.load(HostileTrustedLists.manyServices(100_000)) }
        #expect(error?.reason.contains("more than 10000 trust services") == true)
    }

    @Test func tooManyElementsAndTooDeepAreRefused() throws {
        let small = TrustedListLimits(maximumElements: 1_000)
        let elements = expectTrustedListError(.limitExceeded) {
            try Self.load(HostileTrustedLists.manyServices(600), limits: small)
        }
        #expect(elements?.reason.contains("more than 1000 XML elements") == true)
        let depth = expectTrustedListError(.limitExceeded) { try Self.load(HostileTrustedLists.deep(10_000)) }
        #expect(depth?.reason.contains("deeper than 64") == true)
    }

    @Test func gigabyteFileIsRefusedUnread() throws {
        let directory = try TemporaryDirectory(prefix: "trusted-lists-huge")
        let path = directory.path("huge.xml")
        try HostileTrustedLists.writeGigabyteFile(path)
        let error = expectTrustedListError(.limitExceeded) {
            try TrustedList.load(
                contentsOf: URL(fileURLWithPath: path),
                signers: [try TrustedListFixtures.certificate("tl-signer")]
            )
        }
        #expect(error?.reason.contains("huge.xml is larger than 33554432 bytes") == true)
    }

    /// The same refusals through `certsign trust show`, each in a process whose peak resident memory
    /// (getrusage of the child) stays under 256 MiB.
    @Test(.enabled(if: CLI.isBuilt)) func refusalsStayInBoundedMemory() throws {
        let directory = try TemporaryDirectory(prefix: "trusted-lists-rss")
        let huge = directory.path("huge.xml")
        try HostileTrustedLists.writeGigabyteFile(huge)
        let cases = [
            (try directory.write("bomb.xml", text: HostileTrustedLists.billionLaughs), "entitiesRefused"),
            (try directory.write("services.xml", text: HostileTrustedLists.manyServices(100_000)), "limitExceeded"),
            (huge, "limitExceeded"),
        ]
        let script = """
            import resource, subprocess, sys
            run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            print(run.returncode, peak, run.stdout.replace("\\n", " "))
            """
        for (file, code) in cases {
            let result = try ExternalTool.run(
                "python3",
                [
                    "-c", script, CLI.binary, "--json", "trust", "show", "--trusted-list", file, "--lotl-signer",
                    TrustedListFixtures.certificatePath("tl-signer"),
                ]
            )
            let fields = result.output.split(separator: " ", maxSplits: 2).map(String.init)
            try #require(fields.count == 3, "\(result.output)\(result.errorOutput)")
            #expect(fields[0] == "1", "\(file): \(fields[2])")
            #expect(fields[2].contains("\"code\" : \"\(code)\""), "\(file): \(fields[2])")
            #expect((Int(fields[1]) ?? .max) < 256 * 1024, "\(file): peak RSS \(fields[1]) KiB")
        }
    }
}
