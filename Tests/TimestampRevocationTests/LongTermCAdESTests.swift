import CertificateProviders
import CertificateProvidersTesting
import Foundation
import HTTPClient
import Signing
import TestSupport
import Testing

/// CAdES B-LT and B-LTA against certomancer (the TSA, OCSP responder and CRL source), judged by
/// openssl and asn1crypto.
@Suite(.serialized) struct LongTermCAdESTests {
    /// A detached CAdES-BES made by openssl (not by this package) for signer `label`.
    static func opensslSignature(
        _ pki: CertomancerPKI,
        signer label: String,
        in directory: TemporaryDirectory
    ) throws -> (signature: [UInt8], document: String) {
        let document = try directory.write("document-\(label).txt", text: "long-term document of \(label)\n")
        let key = pki.directory.path("\(label).key.der")
        let output = directory.path("\(label).p7s")
        let result = try ExternalTool.run(
            "openssl",
            [
                "cms", "-sign", "-binary", "-cades", "-md", "sha256", "-in", document, "-signer",
                pki.certificatePath(label), "-inkey", key, "-keyform", "DER", "-certfile",
                pki.certificatePath("interm"),
                "-outform", "DER", "-out", output,
            ]
        )
        try #require(result.succeeded, "openssl cms -sign: \(result.errorOutput)")
        return (try directory.read("\(label).p7s"), document)
    }

    static func upgrade(_ pki: CertomancerPKI, level: SignatureLevel) throws -> LongTermLevelUpgrade {
        let root = try pki.certificate("root")
        // certomancer's tokens carry only the TSA's certificate: its CA is given beside the root.
        let tsa = TimestampAuthorityClient(
            configuration: .init(url: pki.timestampURL, trustAnchors: [root, try pki.certificate("interm")]),
            fetcher: loopbackFetcher
        )
        let collector = ValidationDataCollector(
            cache: RevocationDataCache(fetcher: loopbackFetcher),
            trustAnchors: [root]
        )
        return try LongTermLevelUpgrade(level: level, authority: tsa, collector: collector)
    }

    @Test func bLTCarriesEveryPathsCertificatesOCSPAndCRLsThatOpenSSLAccepts() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        // signer-crl names only a CRL distribution point: its CRL (and the intermediate's, from
        // the root) must be embedded, so openssl can check both with nothing but the embedded CRLs.
        let (signature, document) = try Self.opensslSignature(pki, signer: "signer-crl", in: directory)
        let upgraded = try await Self.upgrade(pki, level: .bLT).upgrade(signature)
        let file = try directory.write("signer-crl-lt.p7s", upgraded.signature)
        let crls = directory.path("embedded-crls.pem")
        let contents = try LongTermOracles.run(LongTermOracles.contents, [file, crls]).output
        // signer-crl, interm, root, tsa; the signer's and the intermediate's CRLs; the TSA's OCSP.
        #expect(contents.contains("certificates 4"), "\(contents)")
        #expect(contents.contains("crls 2"), "\(contents)")
        #expect(contents.contains("ocsp 1"), "\(contents)")
        #expect(contents.contains("ocsp-status successful good"), "\(contents)")
        // openssl cms -verify -crl_check_all takes its CRLs from the signature alone (no CRL file,
        // no network): the embedded ones must decide the signer and the intermediate.
        let verified = try OpenSSLCMS.verify(
            signatureFile: file,
            contentFile: document,
            caFile: pki.certificatePath("root"),
            anyPurpose: true,
            extra: ["-crl_check_all", "-extended_crl"]
        )
        #expect(verified.succeeded, "\(verified.errorOutput)")
        // The B-B signature it was made from fails the same check: no CRL to decide with.
        let before = try directory.write("signer-crl-bb.p7s", signature)
        let withoutCRLs = try OpenSSLCMS.verify(
            signatureFile: before,
            contentFile: document,
            caFile: pki.certificatePath("root"),
            anyPurpose: true,
            extra: ["-crl_check_all", "-extended_crl"]
        )
        #expect(!withoutCRLs.succeeded)
        #expect(withoutCRLs.errorOutput.contains("unable to get certificate CRL"), "\(withoutCRLs.errorOutput)")
    }

    @Test func bLTEmbedsOCSPResponsesAsRFC5940EntriesForAnOCSPSigner() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        for label in ["signer-rsa", "signer-ec"] {
            let (signature, _) = try Self.opensslSignature(pki, signer: label, in: directory)
            let upgraded = try await Self.upgrade(pki, level: .bLT).upgrade(signature)
            let file = try directory.write("\(label)-lt.p7s", upgraded.signature)
            let contents = try LongTermOracles.run(LongTermOracles.contents, [file, directory.path("\(label).crl")])
                .output
            // The signer's and the TSA's OCSP answers (one each), the intermediate's CRL.
            #expect(contents.contains("ocsp 2"), "\(label): \(contents)")
            #expect(contents.contains("crls 1"), "\(label): \(contents)")
            #expect(
                contents.components(separatedBy: "ocsp-status successful good").count == 3,
                "\(label): \(contents)"
            )
        }
    }

    @Test func bLTAArchiveTimestampIndexAndImprintRecomputedByAsn1crypto() async throws {
        let pki = try CertomancerPKI()
        defer { pki.stop() }
        let directory = try TemporaryDirectory()
        let (signature, document) = try Self.opensslSignature(pki, signer: "signer-rsa", in: directory)
        let upgrade = try Self.upgrade(pki, level: .bLTA)
        let lta = try await upgrade.upgrade(signature)
        let file = try directory.write("lta.p7s", lta.signature)
        let check = try LongTermOracles.run(LongTermOracles.archiveTimestamp, [file, document]).output
        #expect(check.contains("archive-timestamps 1"), "\(check)")
        #expect(check.contains("algorithm-written True"), "\(check)")
        #expect(check.contains("index-match True"), "\(check)")
        #expect(check.contains("imprint-match True"), "\(check)")
        // Renewal: a second archive timestamp over the first and its validation data.
        let renewed = try await upgrade.upgrade(lta.signature)
        let renewedFile = try directory.write("lta2.p7s", renewed.signature)
        let second = try LongTermOracles.run(LongTermOracles.archiveTimestamp, [renewedFile, document]).output
        #expect(second.contains("archive-timestamps 2"), "\(second)")
        #expect(second.contains("index-match True"), "\(second)")
        #expect(second.contains("imprint-match True"), "\(second)")
    }

    @Test func aCertificateWithoutAnswerRefusesTheLevelNamingIt() async throws {
        let pki = try CertomancerPKI()
        let directory = try TemporaryDirectory()
        let (signature, _) = try Self.opensslSignature(pki, signer: "signer-rsa", in: directory)
        let upgrade = try Self.upgrade(pki, level: .bLT)
        // B-T while certomancer runs; then its OCSP responder and CRLs are gone.
        let cadesT = try await TimestampLevelUpgrade(authority: upgrade.authority).upgrade(signature).signature
        pki.stop()
        let error = await expectError(.revocationUnavailable) { _ = try await upgrade.upgrade(cadesT) }
        #expect(error?.reason.contains("LT Signer RSA") == true, "\(String(describing: error?.reason))")
    }
}
