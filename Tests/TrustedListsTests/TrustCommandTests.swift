import Foundation
import TestSupport
import Testing

/// `certsign trust show` and `certsign verify --trusted-list … --lotl-signer …`, run as users run them.
@Suite(.enabled(if: CLI.isBuilt)) struct TrustCommandTests {
    @Test func trustShowListsServicesAndStatuses() throws {
        let text = try CLI.run(["trust", "show"] + TrustedListFixtures.listArguments)
        #expect(text.status == 0, "\(text.errorOutput)")
        #expect(text.output.contains("GRANTED CA/QC: TL Test Qualified CA"))
        #expect(text.output.contains("WITHDRAWN CA/QC: TL Test Withdrawn Qualified CA"))
        #expect(text.output.contains("granted from 2020-01-01T00:00:00Z until 2024-06-01T00:00:00Z"))
        #expect(text.output.contains("GRANTED TSA/QTST: TL Test Qualified Time Stamping Service"))
        let json = try CLI.run(["--json", "trust", "show", "--at", "2023-07-01"] + TrustedListFixtures.listArguments)
        #expect(json.status == 0, "\(json.errorOutput)")
        let document = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])
        let lists = try #require(document["lists"] as? [[String: Any]])
        let services = lists.flatMap { $0["services"] as? [[String: Any]] ?? [] }
        let withdrawn = try #require(services.first { $0["name"] as? String == "TL Test Withdrawn Qualified CA" })
        #expect(withdrawn["status"] as? String == "granted")  // in 2023
        #expect(withdrawn["currentStatus"] as? String == "withdrawn")
    }

    @Test func listsWithoutTheirSignerAreAUsageError() throws {
        let list = TrustedListFixtures.url("tl-qc.xml").path
        let noSigner = try CLI.run(["trust", "show", "--trusted-list", list])
        #expect(noSigner.status == 64)
        #expect(noSigner.errorOutput.contains("--trusted-list needs --lotl-signer CERT"))
        let noList = try CLI.run(["verify", list, "--lotl-signer", TrustedListFixtures.certificatePath("tl-signer")])
        #expect(noList.status == 64)
        #expect(noList.errorOutput.contains("--lotl-signer checks trusted lists"))
    }

    /// A PDF's signatures are judged as CMS ones are: the chain by its service's status at the time
    /// it is checked at, the qualification from the service and the certificate; pyHanko's assessor,
    /// reading the signer's certificate from the same PDF, agrees.
    @Test func verifyJudgesAPDFsSignaturesByTheLists() throws {
        let directory = try TemporaryDirectory(prefix: "trusted-lists-pdf")
        let unsigned = try directory.write("contract.pdf", TestPDF.minimal())
        func signed(by signer: String, ca: String) throws -> String {
            let output = directory.path("contract.\(signer).pdf")
            try PyHankoSigner.signBB(
                .pdf,
                unsigned,
                output: output,
                key: TrustedListFixtures.url("keys/\(signer).key.pem").path,
                certificate: TrustedListFixtures.certificatePath(signer),
                chain: [TrustedListFixtures.certificatePath(ca)],
                field: "Signature1"
            )
            return output
        }
        let pdf = try signed(by: "qc-signer", ca: "qc-ca")
        let result = try CLI.run(["verify", pdf] + TrustedListFixtures.listArguments)
        #expect(result.status == 0, "\(result.output)\(result.errorOutput)")
        #expect(
            result.output.contains(
                "qualification: QESig — qualified certificate under \"TL Test Qualified CA\", key on a QSCD"
            ),
            "\(result.output)"
        )
        #expect(
            result.output.contains("trust anchor: trusted-list service \"TL Test Qualified CA\" (CA/QC, BE, tl-qc.xml)")
        )
        let assessed = try ExternalTool.run(
            "python3",
            [
                TrustedListFixtures.url("pyhanko_assess.py").path, TrustedListFixtures.url("tl-qc.xml").path, pdf,
                "qc-ca", TrustedListFixtures.iso(Date()),
            ]
        )
        #expect(
            assessed.output.contains("qualified=1 qscd=1 type=qct_esign"),
            "\(assessed.output)\(assessed.errorOutput)"
        )
        let json = try CLI.run(["--json", "verify", pdf] + TrustedListFixtures.listArguments)
        let parsed = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])
        let signature = try #require((parsed["signatures"] as? [[String: Any]])?.first)
        let qualification = try #require((signature["qualifications"] as? [[String: Any]])?.first)
        #expect(qualification["level"] as? String == "QESig")
        // Under the service withdrawn in 2024 and with no proof of an earlier time: INDETERMINATE, as a CMS is.
        let withdrawn = try CLI.run(
            ["verify", try signed(by: "qc-signer-old", ca: "qc-ca-old")] + TrustedListFixtures.listArguments
        )
        #expect(withdrawn.status == 2, "\(withdrawn.output)")
        #expect(
            withdrawn.output.contains("\"TL Test Withdrawn Qualified CA\" (BE, tl-qc.xml), withdrawn since 2024-06-01")
        )
    }

    @Test func trustShowRefusesATamperedList() throws {
        let result = try CLI.run(
            [
                "--json", "trust", "show", "--trusted-list", TrustedListFixtures.url("tl-qc-tampered.xml").path,
                "--lotl-signer", TrustedListFixtures.certificatePath("tl-signer"),
            ]
        )
        #expect(result.status == 1)
        #expect(result.output.contains("\"code\" : \"signatureInvalid\""))
        #expect(result.output.contains("changed after signing"))
    }

    @Test func verifyUsesTheListsAnchorsAtTheProvenTime() throws {
        let directory = try TemporaryDirectory(prefix: "trusted-lists-cli")
        let document = try directory.write("document.txt", text: "signed under a trusted list\n")
        func verify(_ signature: String, _ extra: [String] = []) throws -> ExternalTool.Result {
            try CLI.run(["verify", signature, "--content", document] + TrustedListFixtures.listArguments + extra)
        }
        let qualified = try verify(try TrustedListFixtures.sign(document, by: "qc-signer"))
        #expect(qualified.status == 0, "\(qualified.output)\(qualified.errorOutput)")
        #expect(qualified.output.contains("TL Test Qualified CA"))
        #expect(
            qualified.output.contains(
                "qualification: QESig — qualified certificate under \"TL Test Qualified CA\", key on a QSCD"
            )
        )
        let noDeviceSignature = try TrustedListFixtures.sign(document, by: "qc-signer-nosscd")
        #expect(try verify(noDeviceSignature).output.contains("qualification: AdESig-QC"))
        let json = try CLI.run(
            ["--json", "verify", noDeviceSignature, "--content", document] + TrustedListFixtures.listArguments
        )
        let parsed = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])
        let qualification = try #require((parsed["qualifications"] as? [[String: Any]])?.first)
        #expect(qualification["level"] as? String == "AdESig-QC")
        #expect(qualification["service"] as? String == "TL Test Qualified CA")
        let withdrawn = try TrustedListFixtures.sign(document, by: "qc-signer-old")
        let now = try verify(withdrawn)
        #expect(now.status == 2)
        #expect(now.output.contains("INDETERMINATE: NO_CERTIFICATE_CHAIN_FOUND"))
        #expect(now.output.contains("\"TL Test Withdrawn Qualified CA\" (BE, tl-qc.xml), withdrawn since 2024-06-01"))
        #expect(try verify(withdrawn, ["--at", "2023-07-01"]).status == 0)
        let proven = try verify(
            try TrustedListFixtures.sign(document, by: "qc-signer-old", timestampAt: "2023-07-01T12:00:00Z")
        )
        #expect(proven.status == 0, "\(proven.output)")
        #expect(proven.output.contains("timestamp:    qualified (QTST \"TL Test Qualified Time Stamping Service\")"))
        // Without the lists the same signature has no anchor.
        let without = try CLI.run([
            "verify", withdrawn, "--content", document, "--ca", TrustedListFixtures.certificatePath("tl-signer"),
        ])
        #expect(without.status == 2)
    }

    /// The text, the JSON and the TS 119 102-2 report name the service that anchored the signer's
    /// chain and the QTST of its timestamp, with their types and their lists' territories.
    @Test func verifyNamesTheAnchoringServices() throws {
        let directory = try TemporaryDirectory(prefix: "trusted-lists-anchors")
        let document = try directory.write("document.txt", text: "anchored by a trusted-list service\n")
        let signature = try TrustedListFixtures.sign(document, by: "qc-signer", timestampAt: "2026-03-01T12:00:00Z")
        let report = directory.path("report.xml")
        let text = try CLI.run(
            ["verify", signature, "--content", document, "--report", report] + TrustedListFixtures.listArguments
        )
        #expect(text.status == 0, "\(text.output)\(text.errorOutput)")
        #expect(
            text.output.contains("trust anchor: trusted-list service \"TL Test Qualified CA\" (CA/QC, BE, tl-qc.xml)"),
            "\(text.output)"
        )
        #expect(
            text.output.contains(
                "timestamp anchor: trusted-list service \"TL Test Qualified Time Stamping Service\" (TSA/QTST, LU, "
                    + "tl-qtst.xml)"
            )
        )
        let json = try CLI.run(
            ["--json", "verify", signature, "--content", document] + TrustedListFixtures.listArguments
        )
        let parsed = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])
        let qualification = try #require((parsed["qualifications"] as? [[String: Any]])?.first)
        let anchor = try #require(qualification["anchor"] as? [String: String])
        #expect(anchor["service"] == "TL Test Qualified CA")
        #expect(anchor["type"] == "CA/QC")
        #expect(anchor["typeURI"] == "http://uri.etsi.org/TrstSvc/Svctype/CA/QC")
        #expect(anchor["territory"] == "BE")
        let timestampAnchor = try #require(qualification["timestampAnchor"] as? [String: String])
        #expect(timestampAnchor["service"] == "TL Test Qualified Time Stamping Service")
        #expect(timestampAnchor["type"] == "TSA/QTST")
        #expect(timestampAnchor["territory"] == "LU")
        let xml = String(decoding: try Data(contentsOf: URL(fileURLWithPath: report)), as: UTF8.self)
        for expected in [
            "<vr:Type>urn:certsign:reportdata:trusted-list-service:signature</vr:Type>",
            "<tsl:ServiceTypeIdentifier>http://uri.etsi.org/TrstSvc/Svctype/CA/QC</tsl:ServiceTypeIdentifier>",
            "<tsl:ServiceName>TL Test Qualified CA</tsl:ServiceName>", "<tsl:SchemeTerritory>BE</tsl:SchemeTerritory>",
            "<vr:Type>urn:certsign:reportdata:trusted-list-service:timestamp</vr:Type>",
            "<tsl:ServiceName>TL Test Qualified Time Stamping Service</tsl:ServiceName>",
            "<tsl:SchemeTerritory>LU</tsl:SchemeTerritory>", "<vr:TrustAnchor VOReference=\"vo-certificate-",
        ] {
            #expect(xml.contains(expected), "\(expected) not in \(xml)")
        }
        // pyHanko's bindings of the TS 119 102-2 schema read the report (no element out of place).
        #expect(try PyHankoReport.read(report).map(\.indication) == ["PASSED"])
    }
}
