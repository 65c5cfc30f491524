import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// Every shell example of the README and of docs/*.md (their fenced `sh` / `bash` blocks) runs as
/// written, the README's in the order it shows them, then each document's (the SoftHSM2 walk-through
/// of docs/PKCS11.md among them), as a newcomer would: each block as one `bash -e -o pipefail` script, all in
/// one private HOME, one identity store (`~/signing`, as the README exports) and one work directory
/// holding the files the README names. So the README cannot drift from the tool, and an example
/// cannot work only on a fresh store.
///
/// What is changed before a block runs, and why (nothing else is):
/// - port 8080 becomes one free port, the same in every block (a newcomer's 8080); a block that starts
///   `certsign emulator … &` has its output sent to a file (the block itself waits for it, with
///   `certsign emulator wait`); background jobs end with their block (a trap stops them, as the
///   README's `kill %1`);
/// - `http://tsa.example/tsr` becomes the TSA of an emulator serving the README PKI's CA;
/// - `read -rs P12_PASSWORD` (a terminal prompt) becomes the variable given by the test;
/// - `0F1C3A52` (the id in `signatures remove`) becomes a prefix of a real id from the journal.
/// The block that runs `make` is not run (it would run this suite).
@Suite(.serialized) struct ReadmeExamplesTests {
    struct Block {
        /// The document, by path from the package root.
        let document: String
        let line: Int
        let text: String
        /// A name for the block's files: `README.md-385`, `docs_PKCS11.md-19`.
        var name: String { document.replacingOccurrences(of: "/", with: "_") + "-\(line)" }
    }

    /// The shell blocks of the README, then of each docs/*.md (sorted by name).
    static func shellBlocks() throws -> [Block] {
        try (["README.md"] + ReadmeTests.docs()).flatMap { shellBlocks(of: $0) }
    }

    static func shellBlocks(of document: String) -> [Block] {
        var blocks: [Block] = []
        var current: (line: Int, lines: [String])?
        let text = ReadmeTests.document(document)
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") {
                if let open = current {
                    blocks.append(Block(document: document, line: open.line, text: open.lines.joined(separator: "\n")))
                    current = nil
                } else {
                    let language = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
                    current = ["sh", "bash"].contains(language) ? (index + 1, []) : (-1, [])
                }
            } else if current != nil {
                current?.lines.append(String(line))
            }
        }
        return blocks.filter { $0.line > 0 }
    }

    /// The files, identities and servers the README's examples talk about.
    final class World {
        let home: TemporaryDirectory
        let work: TemporaryDirectory
        let own: DSSEmulator
        /// What the README's 8080 becomes.
        let port: UInt16
        let pki: TestPKI
        let password = "readme-пароль-1"

        init() throws {
            home = try TemporaryDirectory(prefix: "readme-home")
            work = try TemporaryDirectory(prefix: "readme-work")
            port = try Self.freePort()
            // The README PKI: a root whose CA key the second emulator holds (TSA, OCSP, CRL). Ivanov's
            // certificate names that emulator's OCSP responder, so the port is chosen first, and the
            // emulator knows the certificate (it answers "good" only for certificates it knows).
            pki = try TestPKI(rootSubject: "CN=README Root,O=Example")
            let port = try Self.freePort()
            let ivanov = try pki.issueLeaf(
                subject: "CN=Иванов,O=Example",
                extensions: [
                    ("keyUsage", "critical,digitalSignature,nonRepudiation"),
                    ("authorityInfoAccess", "OCSP;URI:http://127.0.0.1:\(port)/ocsp"),
                ]
            )
            let holder = EmulatorSeed.User(
                username: "ivanov",
                password: Secret(password),
                environment: "readme",
                project: "readme",
                dssPassword: Secret(password),
                certificates: [EmulatorSeed.CertificateRecord(id: 1, identity: ivanov, pin: nil)]
            )
            own = try DSSEmulator(
                configuration: .init(port: port, requestLogLimit: 0),
                seed: EmulatorSeed(
                    certificateAuthority: pki.root.certificate,
                    users: [holder],
                    cells: [],
                    firstSignatureID: 1,
                    certificateAuthorityKey: pki.root.key
                )
            )
            try own.start()
            _ = try work.write("root-ca.pem", text: pki.root.certificate.pemRepresentation)
            try writePKCS12(ivanov, to: "ivanov.pfx")
            try FileManager.default.copyItem(atPath: work.path("ivanov.pfx"), toPath: work.path("signer.p12"))
            _ = try work.write("tsa-root.pem", text: pki.root.certificate.pemRepresentation)
            let crl = try ExternalTool.run(
                "curl",
                ["-sf", "-o", work.path("root-ca.crl"), try #require(own.crlURL).absoluteString]
            )
            try #require(crl.succeeded)
            _ = try home.write(".p12pass", text: password + "\n")
            try FileManager.default.createDirectory(atPath: work.path("invoices"), withIntermediateDirectories: true)
            for number in ["001", "002"] { _ = try work.write("invoices/\(number).pdf", text: "invoice \(number)\n") }
            for number in 1...3 { _ = try work.write("invoice-\(number).txt", text: "invoice \(number)\n") }
            _ = try work.write("report.xml", text: "<report/>\n")
            let source = try work.write("source.pdf", TestPDF.minimal())
            try #require(
                try ExternalTool.run("qpdf", ["--object-streams=generate", source, work.path("contract.pdf")]).succeeded
            )
            // The trusted-lists example: the package's test LOTL, its Belgian TL and the LOTL's signer, and
            // a signature of contract.pdf by a certificate under that TL's CA/QC service, made by pyHanko.
            let lists = PackageRoot.url.appendingPathComponent("Tests/Fixtures/TrustedLists")
            for (from, to) in [
                ("lotl.xml", "lotl.xml"), ("tl-qc.xml", "BE.xml"), ("certs/lotl-signer.cert.pem", "lotl-signer.pem"),
            ] {
                try FileManager.default.copyItem(atPath: lists.appendingPathComponent(from).path, toPath: work.path(to))
            }
            let qes = try ExternalTool.run(
                "python3",
                [
                    lists.appendingPathComponent("sign.py").path, work.path("contract.pdf"),
                    work.path("contract-qes.p7s"), "qc-signer",
                ]
            )
            try #require(qes.succeeded, "sign.py failed (run `make deps`): \(qes.errorOutput)")
            if GOSTEngine.isAvailable {
                let gost = try GOSTCommandTests.makeIdentity(bits: 256, in: work)
                try FileManager.default.copyItem(atPath: gost.pkcs12, toPath: work.path("ivanov-gost.p12"))
                try FileManager.default.copyItem(atPath: gost.rootCertificate, toPath: work.path("gost-root.pem"))
            }
        }

        deinit { own.stop() }

        /// A loopback port that was free a moment ago (bound to port 0, then released).
        static func freePort() throws -> UInt16 {
            let probe = try DSSEmulator(configuration: .init(requestLogLimit: 0))
            let url = try probe.start()
            probe.stop()
            return UInt16(try #require(url.port))
        }

        /// `openssl pkcs12 -export` of `identity` with the README root as its chain, protected by ``password``.
        func writePKCS12(_ identity: SigningIdentity, to name: String) throws {
            let key = try work.write(
                "\(name).key",
                text: try (identity.key as! LocalSigningKey).pemRepresentation(password: nil)
            )
            let certificate = try work.write("\(name).pem", text: identity.certificate.pemRepresentation)
            let made = try ExternalTool.run(
                "openssl",
                [
                    "pkcs12", "-export", "-inkey", key, "-in", certificate, "-certfile", work.path("root-ca.pem"),
                    "-name", name, "-out", work.path(name), "-passout", "env:P12PASS",
                ],
                environment: ["P12PASS": password]
            )
            try #require(made.succeeded, "\(made.errorOutput)")
            try FileManager.default.removeItem(atPath: key)
        }

        /// The block as it runs here (see the suite's comment for every change).
        func script(_ block: Block) throws -> String {
            let tsa = try #require(own.timestampURL).absoluteString
            let firstID =
                #"$(certsign --json signatures list | sed -n 's/.*"id" : "\([0-9A-Fa-f]\{8\}\).*/\1/p' | head -n 1)"#
            var lines = ["set -e -o pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
            for line in block.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                var changed = line.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")
                    .replacingOccurrences(of: "--port 8080", with: "--port \(port)")
                    .replacingOccurrences(of: "http://tsa.example/tsr", with: tsa)
                    .replacingOccurrences(
                        of: "read -rs P12_PASSWORD && export P12_PASSWORD",
                        with: "export P12_PASSWORD"
                    )
                    .replacingOccurrences(of: "signatures remove 0F1C3A52", with: "signatures remove \(firstID)")
                let startsEmulator = ReadmeExamplesTests.startsEmulatorInBackground(changed)
                if startsEmulator, let ampersand = changed.firstIndex(of: "&") {
                    changed =
                        changed[..<ampersand] + "> \"$HOME/emulator-\(block.name).out\" 2>&1 &"
                        + changed[changed.index(after: ampersand)...]
                }
                lines.append(changed)
            }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    /// Whether a line of a block starts `certsign emulator …` in the background (`&`, not `&&`).
    static func startsEmulatorInBackground(_ line: String) -> Bool {
        guard line.hasPrefix("certsign emulator "), !line.hasPrefix("certsign emulator wait ") else { return false }
        return line.replacingOccurrences(of: "&&", with: "").contains("&")
    }

    @Test func theReadmeHasShellExamples() throws {
        #expect(Self.shellBlocks(of: "README.md").count >= 8)
        #expect(Self.shellBlocks(of: "docs/PKCS11.md").count == 1)
        #expect(try Self.shellBlocks().count >= 9)
    }

    @Test("every block that starts an emulator in the background waits for its --ready-file; no block sleeps")
    func emulatorBlocksWaitForReadiness() throws {
        let blocks = try Self.shellBlocks()
        #expect(blocks.contains { $0.text.contains("certsign emulator wait") })
        for block in blocks {
            let lines = block.text.split(separator: "\n").map(String.init)
            #expect(!lines.contains { $0.contains("sleep ") }, "\(block.document) line \(block.line) sleeps")
            for (index, line) in lines.enumerated() where Self.startsEmulatorInBackground(line) {
                let file = line.components(separatedBy: "--ready-file ").dropFirst().first?
                    .split(separator: " ").first.map(String.init)
                let readyFile = try #require(file, "\(block.document) line \(block.line): \(line) has no --ready-file")
                // On the same line after the '&', or on the next one.
                let rest = line.components(separatedBy: "&").dropFirst().joined(separator: "&")
                let waits = [rest.trimmingCharacters(in: .whitespaces), lines.dropFirst(index + 1).first ?? ""]
                #expect(
                    waits.contains { $0.hasPrefix("certsign emulator wait \(readyFile)") },
                    "\(block.document) line \(block.line): no 'certsign emulator wait \(readyFile)' after \(line)"
                )
            }
        }
    }

    @Test("the README's shell examples run in order in one store, as a newcomer runs them")
    func readmeExamplesRunInOrder() throws {
        let world = try World()
        let binDirectory = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
        for block in try Self.shellBlocks() where !block.text.contains("make ") {
            if block.text.contains("-engine gost") && !GOSTEngine.isAvailable { continue }
            let script = try world.work.write("readme-\(block.name).sh", text: try world.script(block))
            let result = try ExternalTool.run(
                "bash",
                [script],
                environment: [
                    "HOME": world.home.url.path,
                    "CERTSIGN_HOME": world.home.url.appendingPathComponent("signing").path,
                    "PATH": binDirectory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                    "P12_PASSWORD": block.text.contains("ivanov-gost.p12") ? GOSTCommandTests.password : world.password,
                    "TZ": "UTC",
                ],
                directory: world.work.url
            )
            let emulatorOutput = try? String(
                contentsOfFile: world.home.path("emulator-\(block.name).out"),
                encoding: .utf8
            )
            #expect(
                result.succeeded,
                """
                \(block.document) line \(block.line): exit \(result.status)
                \(result.output)
                \(result.errorOutput)\(emulatorOutput.map { "\nemulator: \($0)" } ?? "")
                """
            )
        }
    }
}
