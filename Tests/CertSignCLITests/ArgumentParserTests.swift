import TestSupport
import Testing

@testable import CertSignCLI

/// The declarations drive parsing: types, required options, arity and positionals are checked before
/// a command runs, and the usage line comes from the same declarations.
@Suite struct ArgumentParserTests {
    /// A command's options value, as each command declares one.
    struct ProbeOptions: CommandOptions {
        var files: [String] = []
        var port: Int?
        var format: String?
        var out = ""
        var attached = false
        var parameters: [String] = []
        var password = SecretInput()

        static var arguments: [ArgumentBinding<Self>] { [.many(\.files, "FILE", "files")] }

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                .integer(\.port, "--port", "N", "a port", in: 0...65535) { $0 },
                .value(\.format, "--format", "FORMAT", "a format", type: .choice(["cms", "cades"])),
                .value(\.out, "--out", "FILE", "out", type: .file, required: true) { $0 },
                .flag(\.attached, "--attached", "attached"),
            ]
            options += [.repeatable(\.parameters, "--param", "KEY=VALUE", "parameters", type: .keyValue)]
            options += .password(\.password, "the password")
            return options
        }
    }

    static let command = CommandDescriptor(words: ["probe"], summary: "a probe") { (_: ProbeOptions, _) in 0 }

    static func parse(_ arguments: [String]) throws -> ProbeOptions {
        try ArgumentParser.parse(arguments, as: ProbeOptions.self, usage: command.usage)
    }

    static func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try parse(arguments)
            return nil
        } catch let error as UsageError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func typedValuesAreCheckedBeforeTheCommandRuns() throws {
        let parsed = try Self.parse([
            "a", "b", "--port", "8443", "--format=cades", "--out", "x", "--attached", "--param", "k=v", "--param",
            "url=https://x/?a=b",
        ])
        #expect(parsed.files == ["a", "b"])
        #expect(parsed.port == 8443)
        #expect(parsed.format == "cades")
        #expect(parsed.attached)
        #expect(parsed.parameters == ["k=v", "url=https://x/?a=b"])
        #expect(Self.usageError(["a", "--out", "x", "--port", "70000"])?.contains("0…65535") == true)
        #expect(Self.usageError(["a", "--out", "x", "--port", "x"])?.contains("whole number") == true)
        #expect(Self.usageError(["a", "--out", "x", "--format", "pdf"]) == "unknown --format 'pdf' (cms or cades)")
        #expect(Self.usageError(["a", "--out", "x", "--param", "novalue"])?.contains("KEY=VALUE") == true)
        #expect(Self.usageError(["a"]) == "--out FILE is required")
        #expect(Self.usageError(["--out", "x"]) == "missing argument FILE")
        #expect(Self.usageError(["a", "--out", "x", "--attached=yes"]) == "option --attached takes no value")
        #expect(Self.usageError(["a", "--out"]) == "option --out needs a value")
        #expect(Self.usageError(["a", "--out", "x", "--password", "p"])?.contains("never taken") == true)
        #expect(Self.usageError(["a", "--out", "x", "--atached"])?.contains("did you mean '--attached'?") == true)
    }

    @Test func durationsAreSecondsOrAUnit() throws {
        let duration = ValueConversions.duration("--revocation-max-age")
        #expect(try duration("3600") == 3600)
        #expect(try duration("90s") == 90)
        #expect(try duration("30m") == 1800)
        #expect(try duration("12h") == 43_200)
        #expect(try duration("7d") == 604_800)
        for bad in ["", "0", "-5", "7w", "d", "1.5h", "soon"] {
            #expect(throws: InvalidValue.self, "\(bad)") { try duration(bad) }
        }
    }

    @Test func usageComesFromTheDeclarations() {
        #expect(
            Self.command.usage
                == "certsign probe FILE... [--port N] [--format FORMAT] --out FILE [--attached] [--param KEY=VALUE]... [--password-env VAR | --password-file PATH | --password-stdin]"
        )
        let help = Help.commandHelp(Self.command)
        #expect(help.contains("--password-file PATH  read the password from the first line of the file PATH"))
        #expect(help.contains("--out FILE            out (required)"))
    }

    @Test func everyCommandDeclaresEachOptionOnce() {
        for command in Commands.all {
            let names = command.options.map(\.name)
            #expect(Set(names).count == names.count, "\(command.name) declares an option twice")
            #expect(names.allSatisfy { $0.hasPrefix("--") })
            #expect(!command.summary.isEmpty)
        }
        let words = Commands.all.map(\.name)
        #expect(Set(words).count == words.count)
    }

    @Test func suggestionsAreCloseWordsOnly() {
        #expect(ArgumentParser.suggestion("sgin", among: ["sign", "verify"]) == " (did you mean 'sign'?)")
        #expect(ArgumentParser.suggestion("zzzzzz", among: ["sign", "verify"]) == "")
        #expect(ArgumentParser.editDistance("kitten", "sitting") == 3)
    }
}
