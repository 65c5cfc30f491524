public import CertificateProviders
import CertificateProvidersTesting
import Foundation

/// `openssl cms -verify -binary -inform DER` (or PEM), the interop oracle every suite checks signatures with.
public enum OpenSSLCMS {
    /// What `openssl cms -verify` answered.
    public struct Verification: Sendable {
        /// The tool's exit status and output.
        public let result: ExternalTool.Result
        /// The content the tool wrote after verifying: an attached signature's embedded content, or
        /// the detached content; empty when verification failed.
        public let content: [UInt8]
        /// Whether the signature verified (exit status 0).
        public var succeeded: Bool { result.succeeded }
        /// The tool's standard error (why it refused).
        public var errorOutput: String { result.errorOutput }
    }

    /// Verifies the DER CMS in `signatureFile` against the CA certificates in `caFile`.
    /// - Parameters:
    ///   - contentFile: the content of a detached signature; nil for an attached one.
    ///   - cades: also check the CAdES-BES signing-certificate attribute (`-cades`).
    ///   - anyPurpose: accept signers whose extended key usage does not list emailProtection.
    ///   - output: where the tool writes the verified content.
    ///   - extra: further arguments (e.g. `-noverify`, `-signer FILE`).
    ///   - inform: how the file is encoded: `DER` (default) or `PEM`.
    public static func verify(
        signatureFile: String,
        contentFile: String? = nil,
        caFile: String,
        cades: Bool = false,
        anyPurpose: Bool = false,
        output: String = "/dev/null",
        extra: [String] = [],
        inform: String = "DER"
    ) throws -> ExternalTool.Result {
        var arguments = [
            "cms", "-verify", "-binary", "-inform", inform, "-in", signatureFile, "-CAfile", caFile, "-out", output,
        ]
        if cades { arguments.append("-cades") }
        if anyPurpose { arguments += ["-purpose", "any"] }
        if let contentFile { arguments += ["-content", contentFile] }
        return try ExternalTool.run("openssl", arguments + extra)
    }

    /// Verifies a DER CMS held in memory against `trust` (written to a private temporary directory).
    /// - Parameters:
    ///   - content: the content of a detached signature; nil for an attached one.
    ///   - trust: the CA certificates (roots) to build the signer's chain to.
    ///   - cades: also check the CAdES-BES signing-certificate attribute (`-cades`).
    ///   - anyPurpose: accept signers whose extended key usage does not list emailProtection.
    ///   - extra: further arguments.
    /// - Returns: the answer and the content the tool verified (compare it with the document).
    public static func verify(
        _ signature: [UInt8],
        content: [UInt8]? = nil,
        trust: [Certificate],
        cades: Bool = false,
        anyPurpose: Bool = false,
        extra: [String] = []
    ) throws -> Verification {
        let directory = try TemporaryDirectory(prefix: "openssl-cms")
        let result = try verify(
            signatureFile: try directory.write("signature.p7s", signature),
            contentFile: try content.map { try directory.write("content.bin", $0) },
            caFile: try directory.write("ca.pem", text: trust.map(\.pemRepresentation).joined()),
            cades: cades,
            anyPurpose: anyPurpose,
            output: directory.path("verified.bin"),
            extra: extra
        )
        let verified = result.succeeded ? ((try? directory.read("verified.bin")) ?? []) : []
        return Verification(result: result, content: verified)
    }
}
