import COpenSSL
import Foundation
import OpenSSLWrappers
import TestSupport
import Testing

/// Object identifiers and names as OpenSSL prints them, through the one helper each.
@Suite struct ASN1ObjectTests {
    /// An `ASN1_OBJECT` OpenSSL makes from dotted text, freed after `body`.
    static func withObject<R>(_ dotted: String, _ body: (OpaquePointer) throws -> R) throws -> R {
        let object = try #require(OBJ_txt2obj(dotted, 1), "OpenSSL cannot make an object of \(dotted)")
        defer { ASN1_OBJECT_free(object) }
        return try body(object)
    }

    @Test("an OID prints whole as dotted text, also when longer than OpenSSL's usual 128-byte buffer")
    func dottedTextIsWhole() throws {
        let short = "1.2.840.113549.1.9.16.2.47"
        #expect(try Self.withObject(short) { ASN1Object.dotted($0) } == short)
        // 1.3.6.1.4.1 (private enterprise) followed by arcs up to 220 characters.
        var long = "1.3.6.1.4.1"
        var arc = 4_294_967_295
        while long.count < 220 {
            long += ".\(arc)"
            arc -= 1
        }
        #expect(try Self.withObject(long) { ASN1Object.dotted($0) } == long)
    }

    @Test("a name prints as RFC 2253 text with UTF-8 kept, as `openssl x509 -nameopt RFC2253,-esc_msb` prints it")
    func namesPrintAsOpenSSLDoes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("x509name-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificate = folder.appendingPathComponent("cert.pem")
        try ExternalTool.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                folder.appendingPathComponent("key.pem").path, "-out", certificate.path, "-days", "1", "-utf8",
                "-subj", "/C=RU/O=ООО Ромашка, филиал/CN=Иванов Иван+serialNumber=42",
            ]
        ).requireSuccess()
        let printed = try ExternalTool.run(
            "openssl",
            ["x509", "-in", certificate.path, "-noout", "-subject", "-nameopt", "RFC2253,-esc_msb"]
        ).requireSuccess().output.trimmingCharacters(in: .whitespacesAndNewlines)
        let expected = String(try #require(printed.split(separator: "=", maxSplits: 1).last))
            .trimmingCharacters(in: .whitespaces)
        let pem = Array(try Data(contentsOf: certificate))
        let handle = try #require(try X509Handle.parse(pem: pem).certificates.first)
        let name = try #require(X509_get_subject_name(handle.pointer))
        #expect(X509Name.rfc2253(name) == expected)
        #expect(try handle.subjectName() == expected)
    }
}
