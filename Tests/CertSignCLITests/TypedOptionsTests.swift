import CSCProvider
import CertificateProviders
import CertificateProvidersTesting
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

@testable import CertSignCLI

/// Each command's options are a typed value the parser fills before the command runs: a value that
/// does not convert is a usage error (exit 64, the usage line) before anything is opened, and the
/// defaults help shows are declared once.
@Suite struct TypedOptionsTests {
    /// Parses `arguments` as `Options`, returning the usage error's message (nil when it parses).
    /// Parses `arguments` as the provider command `command`'s options, returning the usage error's
    /// message (nil when it parses).
    static func usageError(_ arguments: [String], _ command: ProviderCommand) -> String? {
        do {
            _ = try ArgumentParser.parse(
                arguments,
                as: ProviderCommandValues.self,
                bindings: Commands.bindings(for: command),
                usage: "usage"
            )
            return nil
        } catch let error as UsageError {
            return error.message
        } catch {
            return "not a usage error: \(error)"
        }
    }

    static func usageError<Options: CommandOptions>(_ arguments: [String], as type: Options.Type) -> String? {
        do {
            _ = try ArgumentParser.parse(arguments, as: type, usage: "usage")
            return nil
        } catch let error as UsageError {
            return error.message
        } catch {
            return "not a usage error: \(error)"
        }
    }

    /// Each command line parses into a usage error with exactly its message.
    static func expectUsageErrors<Options: CommandOptions>(
        _ type: Options.Type,
        _ cases: [(arguments: [String], message: String)],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (arguments, message) in cases {
            #expect(usageError(arguments, as: type) == message, "\(arguments)", sourceLocation: sourceLocation)
        }
    }

    @Test func aSignCommandLineRoundTripsIntoTypedProperties() throws {
        let options = try ArgumentParser.parse(
            [
                "a.pdf", "-", "--provider", "csc", "--param", "url=https://csc.example/?a=b", "--param-env",
                "clientSecret=CSC_SECRET", "--param-file", "pin=/run/pin", "--password-file", "/run/p",
                "--password-env", "P", "--out-dir", "signed", "--attached", "--format", "cms", "--digest",
                "streebog256", "--tsa", "http://tsa.example/tsr", "--tsa-ca", "one.pem", "--tsa-ca", "two.pem",
            ],
            as: Commands.SignOptions.self,
            usage: Commands.signUsage
        )
        #expect(options.documents == ["a.pdf", "-"])
        #expect(options.provider == .csc)
        #expect(options.keySources.isEmpty)
        #expect(options.parameters.values == [.init(key: "url", value: "https://csc.example/?a=b")])
        #expect(options.parameters.environment == [.init(key: "clientSecret", value: "CSC_SECRET")])
        #expect(options.parameters.files == [.init(key: "pin", value: "/run/pin")])
        // The variable wins over the file whatever their order, as the secret reader always did.
        #expect(options.password.source == .environment(variable: "P"))
        #expect(options.password.alternatives == ["--password-env VAR", "--password-file PATH", "--password-stdin"])
        #expect(!options.password.readsStandardInput)
        #expect(options.outputDirectory == "signed" && options.out == nil)
        #expect(options.attached && !options.replaceIdentity && !options.inPlace)
        #expect(options.format == .cms)
        #expect(options.digest == .streebog256)
        #expect(options.tsa == URL(string: "http://tsa.example/tsr"))
        #expect(options.tsaCA == ["one.pem", "two.pem"])

        // Nothing given: each property holds its declared default.
        let defaults = try ArgumentParser.parse(["doc", "--p12", "x.p12"], as: Commands.SignOptions.self, usage: "")
        #expect(defaults.format == .cades && defaults.digest == nil && !defaults.attached)
        #expect(!defaults.password.isGiven && defaults.password.stem == "password")
        let emulator = try ArgumentParser.parse(
            ["--port", "8443", "--tls"],
            as: EmulatorOptions.self,
            usage: ""
        )
        #expect(emulator.port == 8443 && emulator.tls && !emulator.faults && emulator.host == nil)
        // A provider's command (dss sign is FMP DSS's): its declared options, bound by the tool.
        let dssSign = try #require(FMPDSSProvider.commands.first { $0.words == ["dss", "sign"] })
        let sign = try ArgumentParser.parse(
            ["--resource", "R", "--table", "T", "--column", "C", "--hhive-id", "-1", "--certificate-id", "12831"],
            as: ProviderCommandValues.self,
            bindings: Commands.bindings(for: dssSign),
            usage: ""
        )
        #expect(sign.values["hhive-id"] == "-1" && sign.values["certificate-id"] == "12831")
        #expect(sign.values["params"] == nil)
        #expect(sign.secrets["pin"].stem == "pin" && !sign.secrets["pin"].isGiven)
        #expect(
            Self.usageError(["--resource", "R", "--table", "T", "--column", "C", "--hhive-id", "x"], dssSign)
                == "--hhive-id must be a whole number in \(Int.min)…\(Int.max), not 'x'"
        )
    }

    @Test func valuesThatDoNotConvertAreUsageErrorsNamingTheOption() {
        Self.expectUsageErrors(
            Commands.SignOptions.self,
            [
                (
                    ["doc", "--identity", "x", "--digest", "md5"],
                    "unknown --digest 'md5' (sha256, sha384, sha512, streebog256 or streebog512)"
                ),
                (
                    ["doc", "--provider", "csc", "--tsa", "ftp://tsa"],
                    "--tsa 'ftp://tsa' is not an http:// or https:// URL"
                ),
                (["doc", "--format", "xades"], "unknown --format 'xades' (cms, cades, cades-bes or pades)"),
            ]
        )
        #expect(
            Self.usageError(["doc", "--identity", "../etc"], as: Commands.SignOptions.self)?
                .contains("is not allowed") == true
        )
        #expect(
            Self.usageError(["sig.p7s", "--at", "yesterday"], as: Commands.VerifyOptions.self)
                == "--at 'yesterday' is not a time: give a date (2030-01-01), a date-time (2030-01-01T12:00:00Z, "
                + "a zone optional, UTC without one) or a duration from now (+5y, +6m, +30d, -1y; units y, m for "
                + "months, w, d, h)"
        )
        #expect(Self.usageError([""], as: Commands.SignaturesRemoveOptions.self)?.contains("is empty") == true)
        #expect(Self.usageError(["0F 1C"], as: Commands.SignaturesRemoveOptions.self)?.contains("white space") == true)
        #expect(Self.usageError(["0F1C"], as: Commands.SignaturesRemoveOptions.self) == nil)
        #expect(
            Self.usageError(["ksh"], as: Commands.CompletionOptions.self)
                == "no completion for 'ksh' (bash, zsh or fish)"
        )
    }

    /// A provider's command checks its values in its own body, before it reads a secret or opens the
    /// store: still a usage error (exit 64) with the command's usage line.
    @Test func providerCommandValuesThatDoNotConvertAreUsageErrors() throws {
        let store = try TemporaryDirectory()
        let cases: [(arguments: [String], message: String)] = [
            (
                ["dss", "login", "--host", "https://fmp", "--environment", "E", "--project", "P", "--user", ""],
                "--user is required"
            ),
            (
                ["dss", "login", "--host", "fmp.example", "--environment", "E", "--project", "P", "--user", "U"],
                "--host must be an http:// or https:// URL, not 'fmp.example'"
            ),
            (["dss", "remove", "12x"], "the signature id must be a whole number, not '12x'"),
            (
                [
                    "dss", "sign", "--resource", "R", "--table", "T", "--column", "C", "--hhive-id", "1",
                    "--certificate-id", "2", "--params", "{",
                ],
                "--params must be JSON, such as '{}' or '{\"year\": 2026}'"
            ),
        ]
        for (arguments, message) in cases {
            let result = try CLI.run(arguments, store: store)
            #expect(result.status == 64, "\(arguments): \(result.errorOutput)")
            #expect(result.errorOutput.contains("certsign: \(message)"), "\(arguments): \(result.errorOutput)")
            #expect(result.errorOutput.contains("usage: certsign \(arguments[0]) \(arguments[1])"))
        }
    }

    @Test func atTakesADateADateTimeWithOrWithoutZoneOrADurationFromNow() throws {
        let iso = ISO8601DateFormatter()
        let now = try #require(iso.date(from: "2026-03-31T10:00:00Z"))
        let cases: [(String, String)] = [
            ("2030-01-01", "2030-01-01T00:00:00Z"),
            ("2030-01-01T12:30:00Z", "2030-01-01T12:30:00Z"),
            ("2030-01-01T12:30:00+02:00", "2030-01-01T10:30:00Z"),
            ("2030-01-01T12:30:00", "2030-01-01T12:30:00Z"),
            ("2030-01-01T12:30:00.250Z", "2030-01-01T12:30:00Z"),
            ("+5y", "2031-03-31T10:00:00Z"),
            ("+6m", "2026-09-30T10:00:00Z"),
            ("+30d", "2026-04-30T10:00:00Z"),
            ("+2w", "2026-04-14T10:00:00Z"),
            ("-1y", "2025-03-31T10:00:00Z"),
            ("+12h", "2026-03-31T22:00:00Z"),
        ]
        for (text, expected) in cases {
            let time = try ValueConversions.time(text, now: now)
            #expect(iso.string(from: time) == expected, "\(text)")
        }
        for bad in ["yesterday", "5y", "+5x", "+y", "2030-13-01", "2030-01-01T25:00:00Z", ""] {
            #expect(throws: InvalidValue.self, "\(bad)") { try ValueConversions.time(bad, now: now) }
        }
        // Through the parser, the date form no longer fails.
        #expect(
            Self.usageError(["sig.p7s", "--at", "2030-01-01", "--no-chain-check"], as: Commands.VerifyOptions.self)
                == nil
        )
    }

    @Test func howOptionsGoTogetherIsCheckedBeforeTheCommandRuns() {
        Self.expectUsageErrors(
            Commands.SignOptions.self,
            [
                (
                    ["a", "b", "--identity", "i", "--out", "x"],
                    "--out names one output file; use --out-dir DIR for several documents"
                ),
                (["a", "--identity", "i", "--p12", "x.p12"], "give only one of --identity, --p12 and --provider"),
                (["a", "--identity", "i", "--tsa-ca", "ca.pem"], "--tsa-ca goes with --tsa URL"),
                (
                    ["a.pdf", "--identity", "i", "--format", "pades", "--in-place", "--out-dir", "d"],
                    "--in-place replaces the document: do not give --out or --out-dir with it"
                ),
            ]
        )
        #expect(
            Self.usageError(
                ["-", "--identity", "i", "--password-env", "P", "--password-stdin"],
                as: Commands.SignOptions.self
            )?
            .hasPrefix("DOCUMENT '-' and --password-stdin both read standard input") == true
        )
        // No anchor option: the system's roots are the trust; naming them beside skipping the chain contradicts.
        #expect(Self.usageError(["s.p7s"], as: Commands.VerifyOptions.self) == nil)
        #expect(
            Self.usageError(["s.p7s", "--trust", "system", "--no-chain-check"], as: Commands.VerifyOptions.self)
                == "--trust system and --no-chain-check contradict each other"
        )
        #expect(
            Self.usageError(["s.p7s", "--trust", "os"], as: Commands.VerifyOptions.self)
                == "unknown --trust 'os' (system or eu; name your own anchors with --ca FILE)"
        )
        #expect(
            Self.usageError(["--require-client-cert", "ca.pem"], as: EmulatorOptions.self)
                == "--require-client-cert needs --tls"
        )
        #expect(
            Self.usageError(["--host", "0.0.0.0"], as: EmulatorOptions.self)?
                .hasPrefix("--host 0.0.0.0 is not a loopback address") == true
        )
        #expect(Self.usageError(["--host", "0.0.0.0", "--allow-remote"], as: EmulatorOptions.self) == nil)
    }

    /// Through the built binary: a bad `--digest` is refused before the key source is even looked at
    /// (no key source is given, which the body would report first), and a bad typed argument before
    /// any store or server is opened.
    @Test func badValuesFailAtParseTimeWithExit64AndTheUsageLine() throws {
        let store = try TemporaryDirectory()
        let digest = try CLI.run(["sign", "doc.txt", "--digest", "md5"], store: store)
        #expect(digest.status == 64, "\(digest.errorOutput)")
        #expect(digest.errorOutput.contains("certsign: unknown --digest 'md5' (sha256, sha384, sha512"))
        #expect(digest.errorOutput.contains("usage: certsign sign DOCUMENT..."))
        #expect(!digest.errorOutput.contains("say where the key comes from"))

        let json = try CLI.run(["--json", "sign", "doc.txt", "--digest", "md5"], store: store)
        let error = try #require(try CLI.json(json)["error"] as? [String: Any])
        #expect(error["code"] as? String == "usage")

        // No FMP session exists in this store: the id is refused before one is looked for.
        let remove = try CLI.run(["dss", "remove", "abc"], store: store)
        #expect(remove.status == 64, "\(remove.errorOutput)")
        #expect(remove.errorOutput.contains("the signature id must be a whole number, not 'abc'"))
        #expect(remove.errorOutput.contains("usage: certsign dss remove ID"))

        let alias = try CLI.run(["identity", "show", "../outside"], store: store)
        #expect(alias.status == 64, "\(alias.errorOutput)")
        #expect(alias.errorOutput.contains("is not allowed"))
        #expect(alias.errorOutput.contains("usage: certsign identity show ALIAS"))
        // The store was never opened.
        #expect(!FileManager.default.fileExists(atPath: store.path("identities")))
    }

    @Test func everyDeclaredDefaultAppearsInHelpExactlyOnce() {
        var checked = 0
        for command in Commands.all {
            let help = Help.commandHelp(command)
            for option in command.options {
                guard let value = option.defaultValue else { continue }
                let shown = help.components(separatedBy: "(default: \(value))").count - 1
                #expect(shown == 1, "\(command.name) \(option.name): '(default: \(value))' shown \(shown) times")
                checked += 1
            }
        }
        // sign --format, --digest, --level, --page, --text, --font; csr --digest; dss login --api-version, --device;
        // dss sign --params; emulator --host, --port; emulator wait --timeout; identity import --alias;
        // tokens --module; prepare --format, --digest, --scheme, --level; pending list, show, cancel, resume --dir;
        // pending resume --wait-timeout; sign --wait-timeout; verify, trust show, trust refresh --cache;
        // worker --poll-interval.
        #expect(checked == 29)
        // The shown default of --format is the options value's initial property, not a second literal.
        let format = Commands.sign.options.first { $0.name == "--format" }
        #expect(format?.defaultValue == Commands.SignOptions().format.rawValue)
        // A provider command shows the default its schema applies.
        let apiVersion = Commands.find(["dss", "login"])?.0.options.first { $0.name == "--api-version" }
        #expect(apiVersion?.defaultValue == FMPDSSProvider.schema[FMPDSSProvider.ParameterKey.apiVersion]?.defaultValue)
    }
}
