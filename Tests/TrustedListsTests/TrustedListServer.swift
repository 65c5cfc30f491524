import Foundation
import TestSupport
import Testing

/// The fixtures' tl_server.py running on loopback: it publishes a LOTL (signed for its own port)
/// and the BE and LU test TLs, answers conditional requests with 304, and logs every request.
final class TrustedListServer {
    /// One request the server answered.
    struct Request: Equatable {
        var path: String
        var status: Int
        var ifNoneMatch: String?
        var ifModifiedSince: String?
    }

    let files: TemporaryDirectory
    private let server: PythonServerProcess

    init() throws {
        files = try TemporaryDirectory(prefix: "tl-server")
        server = try PythonServerProcess(
            script: TrustedListFixtures.url("tl_server.py").path,
            arguments: [files.path("served"), files.path("requests.log")],
            what: "the trusted-list server (tl_server.py; run `make deps`)"
        )
    }

    deinit { server.stop() }

    /// The LOTL's URL.
    var lotlURL: String { "http://127.0.0.1:\(server.port)/EU/lotl.xml" }

    /// Ends the server (the lists then cannot be downloaded).
    func stop() { server.stop() }

    /// Serves `fixture` (a file of Tests/Fixtures/TrustedLists) as the BE TL from now on.
    func serveAsBE(_ fixture: String) throws {
        let target = URL(fileURLWithPath: files.path("served/BE/tl-qc.xml"))
        try? FileManager.default.removeItem(at: target)
        try FileManager.default.copyItem(at: TrustedListFixtures.url(fixture), to: target)
    }

    /// The requests logged since the last call, in order.
    func takeRequests() throws -> [Request] {
        let path = files.path("requests.log")
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        try Data().write(to: URL(fileURLWithPath: path))
        return try text.split(separator: "\n").map { line in
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return Request(
                path: entry["path"] as? String ?? "",
                status: entry["status"] as? Int ?? 0,
                ifNoneMatch: entry["ifNoneMatch"] as? String,
                ifModifiedSince: entry["ifModifiedSince"] as? String
            )
        }
    }
}
