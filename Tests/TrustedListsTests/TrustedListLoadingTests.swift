import CertificateProviders
import Foundation
import TestSupport
import Testing
import TrustedLists

/// Loading a LOTL and TLs: what we read equals pyHanko's eutl_parse, and a list whose signature,
/// signer, NextUpdate or namespace is wrong is refused with the reason, as xmlsec1 judges the signatures.
@Suite struct TrustedListLoadingTests {
    @Test(arguments: ["tl-qc.xml", "tl-qtst.xml"])
    func servicesAndStatusesEqualPyHankos(file: String) throws {
        let list = try TrustedListFixtures.load(file)
        let ours = TrustedListFixtures.ourServices(list)
        #expect(!ours.isEmpty)
        let theirs = try TrustedListFixtures.pyHankoServices(file)
        #expect(ours == theirs, "ours: \(ours)\npyHanko's: \(theirs)")
    }

    @Test func withdrawnServiceKeepsItsHistory() throws {
        let list = try TrustedListFixtures.load("tl-qc.xml")
        let withdrawn = try #require(list.services.first { $0.name == "TL Test Withdrawn Qualified CA" })
        #expect(withdrawn.status == .withdrawn)
        #expect(withdrawn.status(at: Date(timeIntervalSince1970: 1_690_000_000)) == .granted)  // 2023-07
        #expect(withdrawn.status(at: TrustedListFixtures.now) == .withdrawn)
        #expect(withdrawn.status(at: Date(timeIntervalSince1970: 1_500_000_000)) == nil)  // 2017: before any entry
        #expect(list.territory == "BE")
        #expect(list.signer.subject.contains("TL Test TL Signer"))
    }

    @Test func listOfTheListsPointsToBothLists() throws {
        let lotl = try TrustedListFixtures.load("lotl.xml", signer: "lotl-signer")
        #expect(lotl.isListOfTheLists)
        #expect(lotl.services.isEmpty)
        let tlSigner = try TrustedListFixtures.certificate("tl-signer")
        let pointers = lotl.pointers.filter(\.isXML)
        #expect(pointers.map(\.territory) == ["BE", "LU"])
        #expect(pointers.allSatisfy { $0.signers.map(\.derRepresentation) == [tlSigner.derRepresentation] })
        // pyHanko's LOTL reading: the same locations and territories.
        let script = """
            import sys, warnings; warnings.simplefilter("ignore")
            from pyhanko.sign.validation.qualified import eutl_parse
            r = eutl_parse.parse_lotl_unsafe(open(sys.argv[1]).read())
            print("\\n".join(f"{x.territory} {x.location_uri}" for x in r.references))
            """
        let judged = try ExternalTool.run("python3", ["-c", script, TrustedListFixtures.url("lotl.xml").path])
        try #require(judged.succeeded, "\(judged.errorOutput)")
        let theirs = judged.output.split(separator: "\n").map(String.init)
        #expect(pointers.map { "\($0.territory) \($0.location)" } == theirs)
    }

    @Test func tamperedListIsRefused() throws {
        let error = expectTrustedListError(.signatureInvalid) { try TrustedListFixtures.load("tl-qc-tampered.xml") }
        #expect(error?.reason.contains("changed after signing") == true)
        #expect(error?.reason.contains("tl-qc-tampered.xml") == true)
    }

    @Test func listSignedByAnotherKeyIsRefused() throws {
        let error = expectTrustedListError(.wrongSigner) { try TrustedListFixtures.load("tl-qc-other-key.xml") }
        #expect(error?.reason.contains("TL Test TL Signer") == true)
        // The LOTL's signer is not the TL's either.
        expectTrustedListError(.wrongSigner) { try TrustedListFixtures.load("tl-qc.xml", signer: "lotl-signer") }
    }

    @Test func expiredListIsRefused() throws {
        let error = expectTrustedListError(.expired) { try TrustedListFixtures.load("tl-qc-expired.xml") }
        #expect(error?.reason.contains("NextUpdate 2021-01-01T00:00:00Z") == true)
        // The same list was current in 2020.
        let list = try TrustedListFixtures.load("tl-qc-expired.xml", at: Date(timeIntervalSince1970: 1_600_000_000))
        #expect(list.services.count == 3)
    }

    @Test func wrongNamespaceIsRefused() throws {
        let error = expectTrustedListError(.wrongNamespace) {
            try TrustedListFixtures.load("tl-qc-wrong-namespace.xml")
        }
        #expect(error?.reason.contains("http://uri.etsi.org/02231/v1#") == true)
    }

    @Test func noSignerGivenIsRefused() throws {
        expectTrustedListError(.noSigners) {
            try TrustedList.load(contentsOf: TrustedListFixtures.url("tl-qc.xml"), signers: [])
        }
    }

    /// xmlsec1 --verify and our check agree on every list's signature (the expired and wrong-namespace
    /// lists are properly signed: refused for other reasons).
    @Test(arguments: [
        ("lotl.xml", "lotl-signer"), ("tl-qc.xml", "tl-signer"), ("tl-qtst.xml", "tl-signer"),
        ("tl-qc-tampered.xml", "tl-signer"), ("tl-qc-other-key.xml", "tl-signer"),
        ("tl-qc-expired.xml", "tl-signer"), ("tl-qc-wrong-namespace.xml", "tl-signer"),
        ("tl-qc-other-key.xml", "other-signer"), ("tl-qc.xml", "lotl-signer"),
    ])
    func xmlsec1AgreesOnTheSignature(file: String, signer: String) throws {
        let signatureCodes: Set<TrustedListError.Code> = [.signatureInvalid, .wrongSigner, .unsigned]
        var ourSignatureHolds = true
        do {
            _ = try TrustedListFixtures.load(file, signer: signer)
        } catch let error as TrustedListError {
            ourSignatureHolds = !signatureCodes.contains(error.code)
        }
        #expect(ourSignatureHolds == (try TrustedListFixtures.xmlsec1Verifies(file, signer: signer)))
    }
}
