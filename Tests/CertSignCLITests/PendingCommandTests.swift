import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// `certsign prepare` and `certsign complete` through the built binary, with `openssl pkeyutl` as
/// the signer outside: CAdES judged by `openssl cms -verify`, PAdES by pyHanko and `certsign
/// verify`; every bad input exits 1, names what is wrong, writes nothing and keeps the pending file.
@Suite(.enabled(if: ExternalTool.isAvailable("openssl"), "needs the openssl command"))
struct PendingCommandTests {
    /// A CLI fixture whose signer's certificate and key are PEM files, as an outside signer holds them.
    struct Signer {
        let fixture: CLIFixture
        let kind: OpenSSLExternalSigner
        let certificate: String
        let key: String

        init(_ kind: OpenSSLExternalSigner) throws {
            fixture = try CLIFixture(keyType: kind.key, exportsPKCS12: false)
            self.kind = kind
            certificate = try fixture.directory.write("signer.pem", text: fixture.signer.certificate.pemRepresentation)
            let local = try #require(fixture.signer.key as? LocalSigningKey)
            key = try fixture.directory.write("signer-key.pem", text: try local.pemRepresentation(password: nil))
        }

        /// Runs `prepare DOCUMENT --json …` and returns its one result.
        func prepare(_ document: String, _ extra: [String] = []) throws -> [String: Any] {
            let scheme = kind.scheme.map { ["--scheme", $0.rawValue] } ?? []
            let result = try fixture.run(
                ["--json", "prepare", document, "--certificate", certificate] + scheme + extra
            )
            #expect(result.status == 0, "\(result.errorOutput)")
            return try #require((try CLI.json(result)["results"] as? [[String: Any]])?.first)
        }

        /// Runs `complete` with `arguments` and expects the refusal: exit 1 naming `words`, `signature`
        /// not written, each of `kept` still there.
        func expectRefused(
            _ arguments: [String],
            naming words: String,
            signature: String,
            kept: [String] = [],
            _ location: SourceLocation
        ) throws {
            let result = try fixture.run(["complete"] + arguments)
            #expect(result.status == 1, "\(result.errorOutput)", sourceLocation: location)
            #expect(result.errorOutput.contains(words), "\(result.errorOutput)", sourceLocation: location)
            #expect(!FileManager.default.fileExists(atPath: signature), sourceLocation: location)
            for path in kept { #expect(FileManager.default.fileExists(atPath: path), sourceLocation: location) }
        }

        /// Runs `certsign --json complete PENDING ARGUMENTS…`, expects it to succeed and returns its one
        /// result.
        func complete(
            _ pendingFile: String,
            _ arguments: [String],
            input: String? = nil,
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws -> [String: Any] {
            let completed = try fixture.run(["--json", "complete", pendingFile] + arguments, input: input)
            #expect(completed.status == 0, "\(completed.errorOutput)", sourceLocation: sourceLocation)
            return try #require(
                (try CLI.json(completed)["results"] as? [[String: Any]])?.first,
                sourceLocation: sourceLocation
            )
        }

        /// Expects the detached CAdES signature `DOCUMENT.p7s` that `complete` wrote (`result`) to pass
        /// `openssl cms -verify` against the fixture's root, and the journal to list it.
        func expectCompletedCAdES(
            _ document: String,
            result: [String: Any],
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            let verified = try OpenSSLCMS.verify(
                signatureFile: document + ".p7s",
                contentFile: document,
                caFile: fixture.rootPath,
                cades: true,
                anyPurpose: true,
                extra: kind.isGOST ? ["-engine", "gost"] : []
            )
            #expect(verified.succeeded, "\(verified.errorOutput)", sourceLocation: sourceLocation)
            let listed = try fixture.run(["--json", "signatures", "list"])
            let rows = try #require(
                try CLI.json(listed)["signatures"] as? [[String: Any]],
                sourceLocation: sourceLocation
            )
            #expect(
                rows.contains { $0["id"] as? String == result["id"] as? String },
                "\(listed.output)",
                sourceLocation: sourceLocation
            )
        }

        /// A copy of `pendingFile` (`edited.pending`) whose `contentDigest` is another value, as an
        /// edit of the file would leave it: `complete` must refuse it as altered.
        func alteredCopy(of pendingFile: String) throws -> String {
            var object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: pendingFile)))
                    as? [String: Any]
            )
            object["contentDigest"] = Data(repeating: 7, count: 32).base64EncodedString()
            return try fixture.directory.write("edited.pending", try JSONSerialization.data(withJSONObject: object))
        }

        /// The emulator as a TSA, started (the caller stops it), with its URL and its CA's file, for
        /// `--tsa` and `--tsa-ca`.
        func startTimestampAuthority() throws -> (emulator: DSSEmulator, url: String, caFile: String) {
            let emulator = try DSSEmulator(configuration: .init(requestLogLimit: 0))
            _ = try emulator.start()
            let url = try #require(emulator.timestampURL).absoluteString
            let caFile = try fixture.directory.write(
                "tsa-ca.pem",
                text: emulator.timestampAuthorityCA.pemRepresentation
            )
            return (emulator, url, caFile)
        }

        /// `openssl pkeyutl -sign` of the digest a prepare result printed (base64), into `name`.
        @discardableResult
        func sign(_ prepared: [String: Any], into name: String) throws -> String {
            let base64 = try #require(prepared["digestToSignBase64"] as? String)
            let digest = try fixture.directory.write(name + ".digest", try #require(Data(base64Encoded: base64)))
            let value = fixture.directory.path(name)
            try ExternalTool.run("openssl", kind.arguments(key: key, input: digest, output: value)).requireSuccess()
            return value
        }
    }

    @Test(
        "prepare, openssl pkeyutl, complete: CAdES that openssl cms -verify accepts, recorded in the journal",
        arguments: OpenSSLExternalSigner.all
    )
    func cadesThroughTheBinary(_ kind: OpenSSLExternalSigner) throws {
        try #require(!kind.isGOST || GOSTEngine.isAvailable, "needs libengine-gost-openssl")
        let signer = try Signer(kind)
        let fixture = signer.fixture
        let document = try fixture.document("акт.txt", "Акт сверки № 7\n")
        let prepared = try signer.prepare(document)
        #expect(prepared["format"] as? String == "cades")
        #expect(prepared["digestAlgorithm"] as? String == kind.digestAlgorithm.rawValue)
        #expect((prepared["digestToSignHex"] as? String)?.count == kind.digestAlgorithm.outputByteCount * 2)
        let pendingFile = try #require(prepared["pendingFile"] as? String)
        let attributes = try FileManager.default.attributesOfItem(atPath: pendingFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let value = try signer.sign(prepared, into: "акт.sig")

        let result = try signer.complete(pendingFile, ["--signature-value", value])
        #expect(result["status"] as? String == "completed")
        #expect(!FileManager.default.fileExists(atPath: pendingFile))
        try signer.expectCompletedCAdES(document, result: result)
    }

    @Test(
        "prepare --format pades, openssl pkeyutl, complete: a PDF pyHanko and certsign verify accept",
        arguments: OpenSSLExternalSigner.all.filter { !$0.isGOST }
    )
    func padesThroughTheBinary(_ kind: OpenSSLExternalSigner) throws {
        let signer = try Signer(kind)
        let fixture = signer.fixture
        let (_, contract) = try fixture.passwordFileAndContract()
        let original = try Data(contentsOf: URL(fileURLWithPath: contract))
        let prepared = try signer.prepare(contract, ["--format", "pades", "--reason", "Согласовано"])
        #expect(prepared["format"] as? String == "pades")
        #expect(try Data(contentsOf: URL(fileURLWithPath: contract)) == original)
        try signer.sign(prepared, into: "contract.pdf.sig")
        let values = fixture.directory.path("values")
        try FileManager.default.createDirectory(atPath: values, withIntermediateDirectories: true)
        try FileManager.default.moveItem(
            atPath: fixture.directory.path("contract.pdf.sig"),
            toPath: values + "/contract.pdf.sig"
        )

        let completed = try fixture.run(["complete", contract + ".pending", "--signature-value-dir", values])
        #expect(completed.status == 0, "\(completed.errorOutput)")
        let signed = fixture.directory.path("contract-signed.pdf")
        #expect(completed.output.contains("contract-signed.pdf"), "\(completed.output)")
        let verdicts = try PyHankoValidator.validate(signed, root: fixture.pki.root.certificate, in: fixture.directory)
        #expect(verdicts.count == 1 && verdicts.allSatisfy { $0.contains("INTACT:TRUSTED") }, "\(verdicts)")
        let verified = try fixture.run(["verify", signed, "--ca", fixture.rootPath])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
    }
}

extension PendingCommandTests {
    @Test("prepare --level b-t --tsa, a hex value on standard input, complete --in-place: PAdES B-T")
    func padesBTInPlaceFromStandardInput() throws {
        let signer = try Signer(OpenSSLExternalSigner.all[2])
        let fixture = signer.fixture
        let (emulator, tsa, tsaCA) = try signer.startTimestampAuthority()
        defer { emulator.stop() }
        let contract = try fixture.directory.write("contract.pdf", TestPDF.minimal())
        let prepared = try signer.prepare(
            contract,
            ["--format", "pades", "--level", "b-t", "--tsa", tsa, "--tsa-ca", tsaCA]
        )
        let value = try Data(contentsOf: URL(fileURLWithPath: try signer.sign(prepared, into: "v.bin")))
        let hex = value.map { String(format: "%02x", $0) }.joined()

        let result = try signer.complete(
            contract + ".pending",
            ["--signature-value", "-", "--in-place"],
            input: hex + "\n"
        )
        #expect(result["format"] as? String == "pades-t", "\(result)")
        #expect(result["signature"] as? String == result["document"] as? String)
        let verified = try fixture.run(["--json", "verify", contract, "--ca", fixture.rootPath, "--tsa-ca", tsaCA])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
        let pdf = try #require(
            ((try CLI.json(verified)["signatures"] as? [[String: Any]])?.first)?["pdf"] as? [String: Any]
        )
        #expect(pdf["provenTime"] is String, "\(pdf)")
    }

    @Test("a wrong value, a changed PDF, an edited pending file, a second completion: exit 1, nothing written")
    func badInputsAreRefused() throws {
        let signer = try Signer(OpenSSLExternalSigner.all[0])
        let fixture = signer.fixture
        let (_, contract) = try fixture.passwordFileAndContract()
        let prepared = try signer.prepare(contract, ["--format", "pades"])
        let pendingFile = contract + ".pending"
        let value = try signer.sign(prepared, into: "good.sig")
        let signed = fixture.directory.path("contract-signed.pdf")

        func refused(
            _ pending: String,
            _ value: String,
            _ words: String,
            _ location: SourceLocation = #_sourceLocation
        ) throws {
            try signer.expectRefused([pending, "--signature-value", value], naming: words, signature: signed, location)
        }
        var bad = try Data(contentsOf: URL(fileURLWithPath: value))
        bad[bad.count / 2] ^= 0x01
        try refused(pendingFile, try fixture.directory.write("bad.sig", bad), "does not verify with the key")
        #expect(FileManager.default.fileExists(atPath: pendingFile))

        let original = try Data(contentsOf: URL(fileURLWithPath: contract))
        try (original + Data("% edited\n".utf8)).write(to: URL(fileURLWithPath: contract))
        try refused(pendingFile, value, "changed since its signature was prepared")
        try original.write(to: URL(fileURLWithPath: contract))

        // The message digest the signed attributes hold no longer follows from the prepared update.
        try refused(try signer.alteredCopy(of: pendingFile), value, "was altered")
        try refused(
            try fixture.directory.write("junk.pending", text: "{}"),
            value,
            "not a pending file of certsign prepare"
        )

        let usage = try fixture.run(["complete", pendingFile])
        #expect(usage.status == 64, "\(usage.errorOutput)")
        let twoValues = try fixture.run([
            "complete", pendingFile, "--signature-value", value, "--signature-value", value,
        ])
        #expect(twoValues.status == 64 && twoValues.errorOutput.contains("one --signature-value per PENDING"))
        let again = try fixture.run(["prepare", contract, "--format", "pades", "--certificate", signer.certificate])
        #expect(again.status == 1 && again.errorOutput.contains("exists"), "\(again.errorOutput)")

        #expect(try fixture.run(["complete", pendingFile, "--signature-value", value]).status == 0)
        #expect(try fixture.run(["verify", signed, "--ca", fixture.rootPath]).status == 0)
        // Completed once: the pending file is gone, and a second completion says so.
        let twice = try fixture.run(["complete", pendingFile, "--signature-value", value, "--force"])
        #expect(twice.status == 1 && twice.errorOutput.contains("does not exist"), "\(twice.errorOutput)")
    }
}

extension PendingCommandTests {
    @Test("pending list, show and cancel over the .pending files of --dir; an unreadable one is reported")
    func pendingListShowCancel() throws {
        let signer = try Signer(OpenSSLExternalSigner.all[2])
        let fixture = signer.fixture
        let queue = fixture.directory.path("queue")
        let (_, contract) = try fixture.passwordFileAndContract()
        let original = try Data(contentsOf: URL(fileURLWithPath: contract))
        let note = try fixture.document("note.txt", "заметка\n")
        let cades = try signer.prepare(note, ["--out-dir", queue])
        let pades = try signer.prepare(contract, ["--format", "pades", "--out-dir", queue, "--field", "Approval"])
        try fixture.directory.write("queue/junk.pending", text: "not json")

        let listed = try fixture.run(["--json", "pending", "list", "--dir", queue])
        #expect(listed.status == 1, "\(listed.errorOutput)")
        #expect(listed.errorOutput.contains("junk.pending"), "\(listed.errorOutput)")
        let json = try CLI.json(listed)
        let entries = try #require(json["pending"] as? [[String: Any]])
        #expect(Set(entries.compactMap { $0["id"] as? String }) == [cades["id"] as? String, pades["id"] as? String])
        #expect((json["unreadable"] as? [[String: Any]])?.count == 1)
        try FileManager.default.removeItem(atPath: queue + "/junk.pending")
        let text = try fixture.run(["pending", "list", "--dir", queue])
        #expect(text.status == 0 && text.output.contains("ID") && text.output.contains("note.txt"), "\(text.output)")

        let padesID = try #require(pades["id"] as? String)
        let shown = try fixture.run(["--json", "pending", "show", String(padesID.prefix(8)), "--dir", queue])
        #expect(shown.status == 0, "\(shown.errorOutput)")
        let entry = try CLI.json(shown)
        #expect(entry["format"] as? String == "pades" && entry["field"] as? String == "Approval", "\(entry)")
        #expect(entry["digestToSignBase64"] as? String == pades["digestToSignBase64"] as? String)
        #expect((entry["document"] as? String)?.hasSuffix("contract.pdf") == true)

        let missing = try fixture.run(["pending", "show", "ffffffff", "--dir", queue])
        #expect(missing.status == 1 && missing.errorOutput.contains("certsign pending list"), "\(missing.errorOutput)")

        // Cancelled: its file is gone, the PDF untouched, and a value made for it completes nothing.
        let value = try signer.sign(pades, into: "late.sig")
        let cancelled = try fixture.run(["pending", "cancel", padesID, "--dir", queue])
        #expect(cancelled.status == 0, "\(cancelled.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: queue + "/contract.pdf.pending"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: contract)) == original)
        let late = try fixture.run(["complete", queue + "/contract.pdf.pending", "--signature-value", value])
        #expect(late.status == 1 && late.errorOutput.contains("does not exist"), "\(late.errorOutput)")
        let rest = try CLI.json(try fixture.run(["--json", "pending", "list", "--dir", queue]))
        #expect(
            (rest["pending"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [
                try #require(cades["id"] as? String)
            ]
        )
    }

    @Test("an id prefix two pending signatures share is refused, naming how many it fits")
    func ambiguousPrefixesAreRefused() throws {
        let signer = try Signer(OpenSSLExternalSigner.all[2])
        let fixture = signer.fixture
        for name in ["a.txt", "b.txt"] {
            let prepared = try signer.prepare(try fixture.document(name, name), [])
            let path = try #require(prepared["pendingFile"] as? String)
            var object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
            )
            object["id"] = "abc\(name.prefix(1))-" + (try #require(prepared["id"] as? String))
            try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        }
        let ambiguous = try fixture.run(["pending", "cancel", "abc", "--dir", fixture.directory.url.path])
        #expect(ambiguous.status == 1 && ambiguous.errorOutput.contains("fits 2"), "\(ambiguous.errorOutput)")
        #expect(try fixture.run(["pending", "cancel", "ABCA", "--dir", fixture.directory.url.path]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path("a.txt.pending")))
        #expect(FileManager.default.fileExists(atPath: fixture.directory.path("b.txt.pending")))
    }
}
