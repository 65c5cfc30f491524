import CertificateProviders
import Foundation
import TestSupport
import Testing
import TrustedLists

/// Hostile lists are refused in bounded memory with an error that says why: entity bombs and
/// external entities (no DTD is ever read), a list with 10⁵ services, nesting too deep, a 1 GB file.
@Suite struct TrustedListBoundsTests {
    static let head = "<?xml version=\"1.0\"?>\n"
    static let root = "<tsl:TrustServiceStatusList xmlns:tsl=\"http://uri.etsi.org/02231/v2#\">"

    static func load(_ xml: String, limits: TrustedListLimits = TrustedListLimits()) throws -> TrustedList {
        try TrustedList(
            xml: Array(xml.utf8),
            name: "hostile.xml",
            signers: [try TrustedListFixtures.certificate("tl-signer")],
            at: TrustedListFixtures.now,
            limits: limits
        )
    }

    static let billionLaughs =
        head + "<!DOCTYPE lolz [<!ENTITY lol \"lol\">"
        + (1...9).map {
            "<!ENTITY lol\($0) \"" + String(repeating: "&lol\($0 == 1 ? "" : "\($0 - 1)");", count: 10) + "\">"
        }
        .joined() + "]>\n" + root + "&lol9;</tsl:TrustServiceStatusList>"

    @Test func billionLaughsIsRefused() throws {
        let error = expectTrustedListError(.entitiesRefused) { try Self.load(Self.billionLaughs) }
        #expect(error?.reason.contains("hostile.xml has a DOCTYPE") == true)
    }

    @Test func externalEntitiesAreRefused() throws {
        let entity =
            Self.head + "<!DOCTYPE x [<!ENTITY secret SYSTEM \"file:///etc/passwd\">]>\n" + Self.root
            + "&secret;</tsl:TrustServiceStatusList>"
        expectTrustedListError(.entitiesRefused) { try Self.load(entity) }
        let externalDTD =
            Self.head + "<!DOCTYPE x SYSTEM \"http://127.0.0.1:9/tl.dtd\">\n" + Self.root
            + "</tsl:TrustServiceStatusList>"
        expectTrustedListError(.entitiesRefused) { try Self.load(externalDTD) }
    }

    static func manyServices(_ count: Int) -> String {
        let service = "<tsl:TSPService><tsl:ServiceInformation/></tsl:TSPService>"
        return head + root + "<tsl:TrustServiceProviderList><tsl:TrustServiceProvider><tsl:TSPServices>"
            + String(repeating: service, count: count)
            + "</tsl:TSPServices></tsl:TrustServiceProvider></tsl:TrustServiceProviderList></tsl:TrustServiceStatusList>"
    }

    @Test func hundredThousandServicesAreRefused() throws {
        let error = expectTrustedListError(.limitExceeded) { try Self.load(Self.manyServices(100_000)) }
        #expect(error?.reason.contains("more than 10000 trust services") == true)
    }

    @Test func tooManyElementsAndTooDeepAreRefused() throws {
        let small = TrustedListLimits(maximumElements: 1_000)
        let elements = expectTrustedListError(.limitExceeded) { try Self.load(Self.manyServices(600), limits: small) }
        #expect(elements?.reason.contains("more than 1000 XML elements") == true)
        let deep =
            Self.head + Self.root + String(repeating: "<a>", count: 10_000) + String(repeating: "</a>", count: 10_000)
            + "</tsl:TrustServiceStatusList>"
        let depth = expectTrustedListError(.limitExceeded) { try Self.load(deep) }
        #expect(depth?.reason.contains("deeper than 64") == true)
    }

    @Test func gigabyteFileIsRefusedUnread() throws {
        let directory = try TemporaryDirectory(prefix: "trusted-lists-huge")
        let path = directory.path("huge.xml")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(Self.root.utf8)))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 1 << 30)  // sparse: 1 GiB on paper, a few bytes on disk
        try handle.close()
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
        #expect(FileManager.default.createFile(atPath: huge, contents: Data(Self.root.utf8)))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: huge))
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        let cases = [
            (try directory.write("bomb.xml", text: Self.billionLaughs), "entitiesRefused"),
            (try directory.write("services.xml", text: Self.manyServices(100_000)), "limitExceeded"),
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
