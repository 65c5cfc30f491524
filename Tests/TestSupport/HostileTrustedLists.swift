import Foundation

/// Hostile ETSI TS 119 612 lists for the trusted-list loader's bounds (tests and `certsign-bench`):
/// each must be refused in bounded time and memory.
public enum HostileTrustedLists {
    static let head = "<?xml version=\"1.0\"?>\n"
    /// The opening tag of a list's root element in TS 119 612's namespace.
    public static let root = "<tsl:TrustServiceStatusList xmlns:tsl=\"http://uri.etsi.org/02231/v2#\">"

    /// A billion-laughs entity bomb: ten levels of entities, each ten of the one before.
    public static let billionLaughs =
        head + "<!DOCTYPE lolz [<!ENTITY lol \"lol\">"
        + (1...9).map {
            "<!ENTITY lol\($0) \"" + String(repeating: "&lol\($0 == 1 ? "" : "\($0 - 1)");", count: 10) + "\">"
        }
        .joined() + "]>\n" + root + "&lol9;</tsl:TrustServiceStatusList>"

    /// A list whose external entity names `/etc/passwd`.
    public static let externalEntity =
        head + "<!DOCTYPE x [<!ENTITY secret SYSTEM \"file:///etc/passwd\">]>\n" + root
        + "&secret;</tsl:TrustServiceStatusList>"

    /// A list whose DOCTYPE names an external DTD on a loopback port nothing listens on.
    public static let externalDTD =
        head + "<!DOCTYPE x SYSTEM \"http://127.0.0.1:9/tl.dtd\">\n" + root + "</tsl:TrustServiceStatusList>"

    /// A list with `count` (empty) trust services.
    public static func manyServices(_ count: Int) -> String {
        let service = "<tsl:TSPService><tsl:ServiceInformation/></tsl:TSPService>"
        return head + root + "<tsl:TrustServiceProviderList><tsl:TrustServiceProvider><tsl:TSPServices>"
            + String(repeating: service, count: count)
            + "</tsl:TSPServices></tsl:TrustServiceProvider></tsl:TrustServiceProviderList></tsl:TrustServiceStatusList>"
    }

    /// A list nested `depth` elements deep.
    public static func deep(_ depth: Int) -> String {
        head + root + String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
            + "</tsl:TrustServiceStatusList>"
    }

    /// Writes a sparse file of 1 GiB at `path` (a list's root element, then zeros: a few bytes on disk).
    public static func writeGigabyteFile(_ path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(root.utf8)) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.truncate(atOffset: 1 << 30)
    }
}
