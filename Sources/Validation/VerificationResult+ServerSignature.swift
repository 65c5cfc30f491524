import CMS
package import CertificateProviders

extension VerificationResult {
    /// How a server's signature differs from what was asked of it: the signer count, the signer (the
    /// selected certificate), the format, the digest and detached or attached. Empty when it is the
    /// signature asked for. One list for every place that embeds or writes a server-made signature
    /// (the coordinator, PAdES).
    /// Throws unless a server-made signature verifies and is the one asked for (see
    /// ``serverSignatureMismatches(_:signer:expectedSigner:request:)``): the one check before anything
    /// embeds, writes or records it.
    /// - Parameters:
    ///   - returned: who returned it, as the message's subject ("provider 'x' returned a signature").
    ///   - document: what it must cover ("'a.txt'", "the signed bytes of 'a.pdf'").
    ///   - consequence: what was left undone, after "; " ("nothing was written").
    /// - Throws: `.serverRejected` when it does not verify or names no signer;
    ///   `.serverSignatureMismatch` listing every difference.
    package static func checkServerSignature(
        _ result: VerificationResult,
        expectedSigner: Certificate,
        request: DocumentSigningRequest,
        returned: String,
        document: String,
        consequence: String
    ) throws {
        guard result.isValid, let signer = result.signerCertificate else {
            throw CertificateProviderError(
                .serverRejected,
                "\(returned) that does not verify over \(document): \(result.failure?.reason ?? "no signer"); "
                    + consequence
            )
        }
        let mismatches = serverSignatureMismatches(
            result,
            signer: signer,
            expectedSigner: expectedSigner,
            request: request
        )
        guard mismatches.isEmpty else {
            throw CertificateProviderError(
                .serverSignatureMismatch,
                "\(returned) over \(document) that is not the one asked for: "
                    + "\(mismatches.joined(separator: "; ")); \(consequence)"
            )
        }
    }

    package static func serverSignatureMismatches(
        _ result: VerificationResult,
        signer: Certificate,
        expectedSigner: Certificate,
        request: DocumentSigningRequest
    ) -> [String] {
        var mismatches: [String] = []
        if result.signers.count != 1 { mismatches.append("it has \(result.signers.count) signers, not one") }
        if signer != expectedSigner {
            // The same name on another certificate: what a server that re-issued it returns.
            let reissued = signer.subject == expectedSigner.subject ? " (same subject: the server re-issued it)" : ""
            mismatches.append(
                "it is signed by '\(signer.subject)' (SHA-256 \(signer.sha256FingerprintHex)), not by the selected "
                    + "certificate '\(expectedSigner.subject)' (SHA-256 \(expectedSigner.sha256FingerprintHex))"
                    + reissued
            )
        }
        // A server may timestamp what it signs: CAdES-T is CAdES-BES with a signature timestamp.
        if result.format != request.format && !(request.format == .cadesBES && result.format == .cadesT) {
            mismatches.append("its format is \(result.format?.rawValue ?? "unknown"), not \(request.format.rawValue)")
        }
        if result.digestAlgorithm != request.digestAlgorithm {
            let found = result.signers.first?.digestAlgorithmName ?? "unknown"
            mismatches.append("its digest is \(found), not \(request.digestAlgorithm.rawValue)")
        }
        if result.isDetached != request.isDetached {
            mismatches.append(
                result.isDetached
                    ? "it is detached, an attached signature was asked for"
                    : "it embeds the document, a detached signature was asked for"
            )
        }
        return mismatches
    }
}
