import BuiltInProviders
import CertificateIssuing
import CertificateProviders
internal import Durability
import Foundation
import SignatureJournal
import Signing

/// `certsign demo`: the HHFWDss sample's walk-through against the DSS emulator (the `certsign-emulator`
/// beside `certsign`, started on a free loopback port and stopped on every path), then the offline
/// PKCS#12 flow, each step run as the real `certsign` command it shows. No setup, no network
/// beyond loopback; everything happens in a temporary store that is removed afterwards.
extension Commands {
    /// `certsign demo [--keep]`.
    struct DemoOptions: CommandOptions {
        var keep = false

        static var options: [OptionBinding<Self>] {
            [.flag(\.keep, "--keep", "keep the temporary directory (its path is printed)")]
        }
    }

    static let demo = CommandDescriptor(
        words: ["demo"],
        summary: "run the HHFWDss walk-through and an offline PKCS#12 demo, with no setup",
        discussion: """
            Starts the DSS emulator on a free loopback port, then runs, as real certsign commands: login
            ("Authentication success"), certificates, signs (empty), sign the GetBudgetPlanning cell with
            certificate 12831 (signature_id 121), signs, verify 121's CMS, remove 121, signs (empty). Then
            makes a throwaway PKCS#12 with a test CA, imports it, signs a file, verifies it, lists and
            removes the journal entry.
            """,
        examples: ["certsign demo"]
    ) { (options: DemoOptions, context) in
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("certsign-demo-\(UUID().uuidString)")
        try FileSystem.makePrivateDirectory(work.path)
        defer { if !options.keep { try? FileManager.default.removeItem(at: work) } }
        let demo = DemoRunner(context: context, work: work)
        let exitCode = try await demo.run()
        if options.keep { context.console.out("\nkept: \(work.path)") }
        return exitCode
    }
}

/// Runs the demo's steps as in-process `certsign` invocations, printing each command first.
struct DemoRunner {
    let context: CommandContext
    let work: URL

    private var store: String { work.appendingPathComponent("store").path }

    /// Secrets the demo's commands read with `--…-env`; they exist only in this dictionary. The
    /// caller's `CERTSIGN_JOURNAL` is left out: the demo's throwaway signature goes to the temporary
    /// store's journal, never into a journal the user keeps (nor is the demo refused by one).
    private var environment: [String: String] {
        var environment = context.environment
        environment["CERTSIGN_JOURNAL"] = nil
        environment["DEMO_FMP_PASSWORD"] = DemoSeed.password
        environment["DEMO_DSS_PASSWORD"] = DemoSeed.dssPassword
        environment["DEMO_PIN"] = DemoSeed.certificatePIN
        environment["DEMO_P12_PASSWORD"] = "демо-пароль"
        return environment
    }

    private func say(_ text: String) { context.console.out(text) }

    /// Runs one command as `certsign` would, after printing it.
    private func step(_ arguments: [String]) async throws {
        say(
            "\n$ certsign "
                + arguments.map { $0.contains(" ") || $0.isEmpty || $0.contains("{") ? "'\($0)'" : $0 }.joined(
                    separator: " "
                )
        )
        let status = await CertSign.main(arguments: ["--store", store] + arguments, environment: environment)
        guard status == CertSign.exitSuccess else {
            throw CertificateProviderError(
                .serverRejected,
                "the demo step 'certsign \(arguments.joined(separator: " "))' failed with exit code \(status)"
            )
        }
    }

    func run() async throws -> Int32 {
        let executable = try EmulatorExecutable.locate(environment: context.environment)
        say("certsign demo 1/2: the HHFWDss walk-through (Foresight Mobile Platform DSS) against the built-in emulator")
        let caPath = work.appendingPathComponent("emulator-ca.pem").path
        let (emulator, url) = try await executable.start(
            arguments: ["--port", "0", "--ca-out", caPath],
            environment: context.environment
        )
        do {
            try await walkThroughFMP(emulatorURL: url, caPath: caPath)
            _ = await emulator.stop()
        } catch {
            _ = await emulator.stop()
            throw error
        }
        try await signOffline()
        say("\ndemo finished: every step above ran as a real certsign command.")
        return CertSign.exitSuccess
    }

    /// Part 1: the HHFWDss calls against the running emulator.
    private func walkThroughFMP(emulatorURL url: URL, caPath: String) async throws {
        say(
            "DSS emulator listening on \(url.absoluteString) (user \(DemoSeed.username), environment "
                + "\(DemoSeed.environment))"
        )
        let signatures = work.appendingPathComponent("dss-signatures").path
        try FileSystem.makePrivateDirectory(signatures)

        try await step([
            "dss", "login", "--host", url.absoluteString, "--environment", DemoSeed.environment,
            "--project", DemoSeed.project, "--user", DemoSeed.username, "--password-env", "DEMO_FMP_PASSWORD",
        ])
        try await step(["dss", "certificates", "--dss-password-env", "DEMO_DSS_PASSWORD"])
        try await step(["dss", "signs"])
        try await step([
            "dss", "sign", "--resource", DemoSeed.resource, "--table", DemoSeed.table, "--params", "{}",
            "--column", DemoSeed.column, "--hhive-id", String(DemoSeed.row),
            "--certificate-id", String(DemoSeed.certificateID),
            "--dss-password-env", "DEMO_DSS_PASSWORD", "--pin-env", "DEMO_PIN",
        ])
        try await step(["dss", "signs", "--out-dir", signatures])
        try await step(["verify", "\(signatures)/\(DemoSeed.firstSignatureID).p7s", "--ca", caPath])
        try await step(["dss", "remove", String(DemoSeed.firstSignatureID)])
        try await step(["dss", "signs"])
        // Done with the platform: its session goes, so later steps ask a stopped server nothing.
        try await step(["sessions", "clear"])
    }

    /// Part 2: a throwaway PKCS#12 identity imported, used, verified and removed.
    private func signOffline() async throws {
        say("\ncertsign demo 2/2: offline signing with a PKCS#12 file")
        let pki = try CertificateIssuer(rootSubject: "CN=Демо УЦ,O=swift-certificate-providers")
        let signer = try pki.issueLeaf(subject: "CN=Иванов Иван Иванович,O=ООО Ромашка,C=RU", keyType: .rsa2048)
        let p12 = work.appendingPathComponent("ivanov.p12").path
        let password = Secret(environment["DEMO_P12_PASSWORD"] ?? "")
        try FileSystem.writeAtomically(
            p12,
            try BuiltInProviders.pkcs12File(of: signer, password: password, friendlyName: "ivanov")
        )
        let root = work.appendingPathComponent("demo-root-ca.pem").path
        try FileSystem.writeAtomically(root, Array(pki.root.certificate.pemRepresentation.utf8))
        let invoice = work.appendingPathComponent("счёт-2026-001.txt").path
        try FileSystem.writeAtomically(invoice, Array("Счёт № 2026-001: 12 831,00 руб.\n".utf8))
        say("made a throwaway CA and \(p12) for \(signer.certificate.subject)")

        try await step(["identity", "import", p12, "--alias", "ivanov", "--password-env", "DEMO_P12_PASSWORD"])
        try await step(["identity", "list"])
        try await step(["sign", invoice, "--identity", "ivanov", "--password-env", "DEMO_P12_PASSWORD"])
        try await step(["verify", invoice + ".p7s", "--ca", root])
        try await step(["signatures", "list"])
        let journal = try SignatureJournal(url: URL(fileURLWithPath: store).appendingPathComponent("journal.sqlite"))
        guard let record = try await journal.records().first else {
            throw CertificateProviderError(.notStored, "the demo's signature is missing from the journal")
        }
        try await step(["signatures", "remove", record.id])
        try await step(["identity", "delete", "ivanov"])
    }
}

/// The HHFWDss sample's published values the emulator is seeded with (EmulatorKit's `StandardSeed`,
/// which `certsign` does not link): the demo's steps name them.
private enum DemoSeed {
    static let username = "Leonid"
    static let password = "123123"
    static let environment = "Leonid_environment"
    static let project = "Leonid_project"
    static let dssPassword = "Saprun123"
    static let certificateID = 12831
    static let certificatePIN = "123"
    static let resource = "GetBudgetPlanning"
    static let table = "ПланированиеБюджета"
    static let column = "Номер"
    static let row = 1
    static let firstSignatureID = 121
}
