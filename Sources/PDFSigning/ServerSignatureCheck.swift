import CertificateProviders
internal import Durability
import Foundation
import Glibc
import Signing

/// Where the bytes a PDF signature covers are: ranges of one file.
struct CoveredBytes: Sendable {
    let path: String
    let ranges: [Range<Int64>]
}

/// Checks a CMS a `DocumentSigning` server returned for a PDF's ByteRange digest before it is
/// embedded, as the signing coordinator checks a server's detached signature of a document.
enum ServerSignatureCheck {
    /// - Throws: `.serverRejected` when it does not verify over the covered bytes;
    ///   `.serverSignatureMismatch` when it is not the signature asked for (signers, signer,
    ///   format, digest, detached).
    static func check(
        _ signature: [UInt8],
        request: DocumentSigningRequest,
        expectedSigner: Certificate,
        coveredBytes: CoveredBytes,
        document: String
    ) throws {
        // The covered bytes are streamed into a private file beside the output, so that the
        // verifier streams them too (memory stays flat in the PDF's size).
        let copy = coveredBytes.path + ".covered"
        try FileSystem.writeNewFile(copy, [])
        defer { unlink(copy) }
        do {
            let target = try PDFFile(path: copy, writable: true)
            let source = try PDFFile(path: coveredBytes.path)
            var written: Int64 = 0
            var copyError: (any Error)?
            for range in coveredBytes.ranges {
                try source.forEachChunk(in: range) { chunk in
                    guard copyError == nil else { return }
                    do { try target.write(Array(chunk.bindMemory(to: UInt8.self)), at: written) } catch {
                        copyError = error
                    }
                    written += Int64(chunk.count)
                }
            }
            if let copyError { throw copyError }
        }
        // The selected certificate's fitness is the caller's business; what is judged here is
        // whether the server did what it was asked.
        let policy = ValidationPolicy(algorithms: .permissive, requiresSigningKeyUsage: false)
        let result = try CMSVerifier.verify(
            signature: signature,
            contentFileAt: URL(fileURLWithPath: copy),
            trustAnchors: [],
            policy: policy
        )
        try VerificationResult.checkServerSignature(
            result,
            expectedSigner: expectedSigner,
            request: request,
            returned: "the server returned a signature",
            document: "the signed bytes of '\(document)'",
            consequence: "nothing was written"
        )
    }
}
