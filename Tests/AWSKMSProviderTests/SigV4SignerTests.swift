import AWSKMSProvider
import CertificateProviders
import CertificateProvidersTesting
import Foundation
import HTTPClient
import TestSupport
import Testing

/// SigV4 against AWS's published test vectors (Fixtures/aws-signing-test-suite, Apache-2.0) and
/// against botocore's `SigV4Auth` signing the same KMS request.
@Suite("SigV4Signer: AWS's test vectors and botocore")
struct SigV4SignerTests {
    static let suite = PackageRoot.url.appendingPathComponent(
        "Tests/AWSKMSProviderTests/Fixtures/aws-signing-test-suite"
    )
    static let cases = [
        "get-vanilla", "get-vanilla-query", "get-vanilla-query-order-key-case", "get-vanilla-with-session-token",
        "get-header-key-duplicate", "get-header-value-trim", "post-vanilla", "post-vanilla-query",
        "post-header-key-case", "post-header-key-sort", "post-header-value-case", "post-x-www-form-urlencoded",
        "post-x-www-form-urlencoded-parameters",
    ]

    /// One vector: the request and its context, read from the fixture files.
    struct Vector {
        let method: String
        let url: URL
        let headers: [(name: String, value: String)]
        let body: [UInt8]
        let signer: SigV4Signer
        let date: Date

        init(_ name: String) throws {
            let directory = SigV4SignerTests.suite.appendingPathComponent(name)
            let request = try String(contentsOf: directory.appendingPathComponent("request.txt"), encoding: .utf8)
            let parts = request.components(separatedBy: "\n\n")
            let lines = parts[0].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let requestLine = lines[0].split(separator: " ")
            method = String(requestLine[0])
            headers = lines.dropFirst().filter { !$0.isEmpty }.map { line in
                let colon = line.firstIndex(of: ":")!
                return (String(line[..<colon]), String(line[line.index(after: colon)...]))
            }
            let host = headers.first { $0.name.lowercased() == "host" }!.value
            url = URL(string: "https://\(host)\(requestLine[1])")!
            body = parts.count > 1 ? Array(parts.dropFirst().joined(separator: "\n\n").utf8) : []
            let context = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: directory.appendingPathComponent("context.json"))
                )
                    as? [String: Any]
            )
            let credentials = try #require(context["credentials"] as? [String: String])
            signer = SigV4Signer(
                credentials: .init(
                    accessKeyID: credentials["access_key_id"]!,
                    secretAccessKey: Secret(credentials["secret_access_key"]!),
                    sessionToken: credentials["token"].map { Secret($0) }
                ),
                region: context["region"] as! String,
                service: context["service"] as! String,
                signsContentSHA256: context["sign_body"] as? Bool ?? false
            )
            date = try #require(ISO8601DateFormatter().date(from: context["timestamp"] as! String))
        }
    }

    @Test("every step of each vector: canonical request, string to sign, signature, Authorization", arguments: cases)
    func vector(_ name: String) throws {
        let vector = try Vector(name)
        let made = vector.signer.signature(
            method: vector.method,
            url: vector.url,
            headers: vector.headers,
            body: vector.body,
            at: vector.date
        )
        let directory = Self.suite.appendingPathComponent(name)
        func read(_ file: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
        }
        #expect(made.canonicalRequest == (try read("header-canonical-request.txt")))
        #expect(made.stringToSign == (try read("header-string-to-sign.txt")))
        #expect(made.signature == (try read("header-signature.txt")).trimmingCharacters(in: .whitespacesAndNewlines))
        let authorization = try read("header-signed-request.txt").split(separator: "\n")
            .first { $0.hasPrefix("Authorization:") }.map { String($0.dropFirst("Authorization:".count)) }
        #expect(made.headers.first { $0.name == "Authorization" }?.value == authorization)
        #expect(made.headers.first { $0.name == "X-Amz-Date" }?.value == "20150830T123600Z")
    }

    @Test("a KMS Sign request signed here carries the Authorization botocore's SigV4Auth computes for it")
    func botocore() throws {
        try #require(
            ExternalTool.run("python3", ["-c", "import botocore"]).succeeded,
            "botocore is missing: run 'make deps'"
        )
        for token in [nil, "FwoGZXIvYXdzEBYaDE9uZSB0b2tlbg=="] {
            let signer = SigV4Signer(
                credentials: .init(
                    accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                    secretAccessKey: Secret("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                    sessionToken: token.map { Secret($0) }
                ),
                region: "eu-central-1",
                service: "kms"
            )
            var request = HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1:4566/")!)
            request.body = Array(#"{"KeyId":"alias/signing","Message":"AAEC","MessageType":"RAW"}"#.utf8)
            request.setHeader("Content-Type", "application/x-amz-json-1.1")
            request.setHeader("X-Amz-Target", "TrentService.Sign")
            let date = Date(timeIntervalSince1970: 1_764_670_000)
            signer.sign(&request, at: date)
            let script = """
                import sys, datetime
                from unittest import mock
                from botocore.auth import SigV4Auth
                from botocore.awsrequest import AWSRequest
                from botocore.credentials import Credentials
                token = sys.argv[2] or None
                request = AWSRequest(method="POST", url="http://127.0.0.1:4566/", data=sys.argv[1].encode(),
                                     headers={"Content-Type": "application/x-amz-json-1.1",
                                              "X-Amz-Target": "TrentService.Sign"})
                credentials = Credentials("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", token)
                now = datetime.datetime(2025, 12, 2, 10, 6, 40)  # the time the Swift side signed at
                with mock.patch("botocore.auth.get_current_datetime", return_value=now):
                    SigV4Auth(credentials, "kms", "eu-central-1").add_auth(request)
                print(request.headers["X-Amz-Date"])
                print(request.headers["Authorization"])
                """
            let result = try ExternalTool.run(
                "python3",
                ["-c", script, String(decoding: request.body, as: UTF8.self), token ?? ""]
            )
            try #require(result.succeeded, "botocore: \(result.errorOutput)")
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(lines.first == request.header("X-Amz-Date"), "the same signing time")
            #expect(lines.last == request.header("Authorization"), "token: \(token != nil)")
            #expect(request.header("X-Amz-Security-Token") == token)
        }
    }
}
