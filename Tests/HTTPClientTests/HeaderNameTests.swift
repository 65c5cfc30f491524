import Foundation
import HTTPClient
import TestSupport
import Testing

@Suite("HTTP header names")
struct HeaderNameTests {
    @Test("names match ignoring ASCII case only; setHeader replaces every spelling")
    func caseInsensitiveNames() throws {
        let url = try #require(URL(string: "https://example.com/"))
        var request = HTTPRequest(url: url, headers: [("content-TYPE", "text/plain"), ("X-A", "1"), ("x-a", "2")])
        #expect(request.header("Content-Type") == "text/plain")
        #expect(request.header("CONTENT-type") == "text/plain")
        #expect(request.header("Content-Typ") == nil)
        request.setHeader("X-a", "3")
        #expect(request.headers.filter { $0.name.lowercased() == "x-a" }.map(\.value) == ["3"])
        // Only letters fold: '@' and '`' differ by the case bit but are different characters, and
        // non-ASCII names compare byte for byte.
        let response = HTTPResponse(status: 200, headers: [("X@", "at"), ("Ä", "umlaut")])
        #expect(response.header("X@") == "at")
        #expect(response.header("x`") == nil)
        #expect(response.header("ä") == nil)
        #expect(response.header("Ä") == "umlaut")
    }
}
