import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `certsign emulator --state DIR --ca-out FILE`, run as a child process: its certificates name its
/// own OCSP responder and CRL, a signature it makes verifies with `--check-revocation` (and
/// `openssl ocsp` answers good), and after a restart on the same state the same signature still does.
@Suite(
    "certsign emulator: kept state, --ca-out, revocation URLs",
    .enabled(if: CLI.isBuilt, "the certsign binary is not built")
)
struct EmulatorStateCommandTests {
    /// One running `certsign --json emulator …`; `stop()` sends SIGINT and waits.
    final class RunningEmulator {
        let process = Process()
        /// The base URL it announced.
        private(set) var url = ""

        init(_ arguments: [String], home: String) throws {
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = ["--json", "emulator"] + arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["CERTSIGN_HOME": home]) { $1 }
            let announcement = Pipe()
            process.standardOutput = announcement
            process.standardError = FileHandle.nullDevice
            try process.run()
            var received = Data()
            while !received.contains(UInt8(ascii: "\n")) {
                let more = announcement.fileHandleForReading.availableData
                guard !more.isEmpty else { break }
                received += more
            }
            let document = try JSONSerialization.jsonObject(with: received) as? [String: Any]
            url = try #require(
                document?["url"] as? String,
                "no URL announced: \(String(decoding: received, as: UTF8.self))"
            )
        }

        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// Runs `certsign ARGUMENTS` that must end by itself; `timeout(1)` ends one that serves instead (exit 124).
    static func runEnding(_ arguments: [String], home: String) throws -> ExternalTool.Result {
        try ExternalTool.run("timeout", ["30", CLI.binary] + arguments, environment: ["CERTSIGN_HOME": home])
    }

    /// Signs `document` through the emulator's CryptoPro DSS routes as Leonid with certificate 12831.
    static func signWithCryptoPro(
        _ document: String,
        url: String,
        home: TemporaryDirectory
    ) throws -> ExternalTool.Result {
        try CLI.run(
            [
                "sign", document, "--provider", "cryptopro-dss", "--param", "url=\(url)", "--param", "username=Leonid",
                "--param-env", "password=DSS_USER_PASSWORD", "--param", "certificateID=12831", "--param-env",
                "pin=DSS_PIN",
            ],
            store: home,
            environment: ["DSS_USER_PASSWORD": "123123", "DSS_PIN": "123"]
        )
    }

    @Test(
        "a CryptoPro signature and its timestamp verify with --check-revocation, also after a restart on --state"
    )
    func revocationAcrossRestart() throws {
        let files = try TemporaryDirectory(prefix: "emulator-state-cli")
        let home = try TemporaryDirectory(prefix: "emulator-state-home")
        let state = files.path("state")
        let caOut = files.path("ca.pem")
        let first = try RunningEmulator(["--state", state, "--ca-out", caOut], home: home.url.path)
        let document = try files.write("contract.txt", text: "Договор № 7\n")
        let signed = try Self.signWithCryptoPro(document, url: first.url, home: home)
        #expect(signed.succeeded, "\(signed.errorOutput)")
        // A timestamp from its TSA, whose certificate names the same responder.
        let stamped = try CLI.run(
            ["timestamp", document + ".p7s", "--tsa", first.url + "tsa", "--tsa-ca", caOut],
            store: home
        )
        #expect(stamped.succeeded, "\(stamped.errorOutput)")
        let verify = ["verify", document + ".p7s", "--ca", caOut, "--tsa-ca", caOut, "--check-revocation"]
        let verified = try CLI.run(verify, store: home)
        #expect(verified.succeeded, "\(verified.output)\(verified.errorOutput)")
        #expect(verified.output.contains("revocation:   good (2 certificates checked)"), "\(verified.output)")
        #expect(verified.output.contains("good (OCSP \(first.url)ocsp)"), "\(verified.output)")

        // openssl, not this package, reads the signer's AIA and asks the responder.
        let certificates = files.path("certificates.pem")
        let printed = try ExternalTool.run(
            "openssl",
            ["pkcs7", "-inform", "DER", "-in", document + ".p7s", "-print_certs", "-out", certificates]
        )
        #expect(printed.succeeded, "\(printed.errorOutput)")
        let responder = try ExternalTool.run("openssl", ["x509", "-in", certificates, "-noout", "-ocsp_uri"])
        #expect(responder.output.trimmingCharacters(in: .whitespacesAndNewlines) == first.url + "ocsp")
        let crl = try ExternalTool.run(
            "openssl",
            ["x509", "-in", certificates, "-noout", "-ext", "crlDistributionPoints"]
        )
        #expect(crl.output.contains("URI:\(first.url)crl"), "\(crl.output)")
        let ocsp = try ExternalTool.run(
            "openssl",
            [
                "ocsp", "-issuer", caOut, "-cert", certificates, "-url", first.url + "ocsp", "-CAfile", caOut,
            ]
        )
        #expect(ocsp.output.contains(": good"), "\(ocsp.output)\(ocsp.errorOutput)")
        first.stop()
        let directoryMode = try FileManager.default.attributesOfItem(atPath: state)[.posixPermissions] as? Int
        let fileMode =
            try FileManager.default.attributesOfItem(atPath: state + "/state.json")[.posixPermissions] as? Int
        #expect(directoryMode == 0o700 && fileMode == 0o600)

        // Same state, same --ca-out (same CA: accepted), same URL: the earlier signature still checks.
        let caBefore = try files.read("ca.pem")
        let second = try RunningEmulator(["--state", state, "--ca-out", caOut], home: home.url.path)
        defer { second.stop() }
        #expect(second.url == first.url, "the last run's port is taken again")
        #expect(try files.read("ca.pem") == caBefore)
        let again = try CLI.run(verify, store: home)
        #expect(again.succeeded, "\(again.output)\(again.errorOutput)")
        #expect(again.output.contains("revocation:   good (2 certificates checked)"), "\(again.output)")
        #expect(again.output.contains("timestamp:") && again.output.contains("(PASSED)"), "\(again.output)")
    }

    @Test("--ca-out refuses a file holding another CA (exit 1, file kept, hint names --force); --force replaces it")
    func caOutRefusesAnotherCA() throws {
        let files = try TemporaryDirectory(prefix: "emulator-ca-out")
        let caOut = files.path("ca.pem")
        let first = try RunningEmulator(["--ca-out", caOut], home: files.path("home"))
        first.stop()
        let before = try files.read("ca.pem")
        // A fresh emulator (no --state) has another CA.
        let refused = try Self.runEnding(["emulator", "--ca-out", caOut], home: files.path("home"))
        #expect(refused.status == 1, "\(refused.output)\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("hint: give --force"), "\(refused.errorOutput)")
        #expect(try files.read("ca.pem") == before)
        let forced = try RunningEmulator(["--ca-out", caOut, "--force"], home: files.path("home"))
        forced.stop()
        #expect(try files.read("ca.pem") != before)
    }

    @Test("a damaged --state file: exit 1 naming it, the file kept")
    func damagedState() throws {
        let files = try TemporaryDirectory(prefix: "emulator-damaged")
        try FileManager.default.createDirectory(atPath: files.path("state"), withIntermediateDirectories: true)
        let path = try files.write("state/state.json", text: "{\"version\": 1, \"users\": [")
        let result = try Self.runEnding(["emulator", "--state", files.path("state")], home: files.path("home"))
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("\(path) is damaged"), "\(result.errorOutput)")
        #expect(try files.read("state/state.json") == Array("{\"version\": 1, \"users\": [".utf8))
    }
}
