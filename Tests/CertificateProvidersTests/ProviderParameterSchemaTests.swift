import CertificateProviders
import Foundation
import TestSupport
import Testing

/// The parameter schema: one declaration per parameter; validation messages, redaction, the
/// command-line refusal of secrets and the help table all come from it.
@Suite struct ProviderParameterSchemaTests {
    static let schema = ProviderParameterSchema(
        provider: "test.schema",
        [
            .init("url", .url, "the server"),
            .init("name", .string, "a name"),
            .init("count", .integer(atLeast: 1), default: "3", "how many"),
            .init("timeout", .seconds, default: "30", "seconds per exchange"),
            .init("verbose", .boolean, default: "false", "say more"),
            .init("mode", .oneOf(["fast", "safe"]), default: "safe", "how"),
            .init("dir", .path, "where"),
            .init("blob", .bytes, "raw bytes"),
            .init("pin", .secret, "the PIN"),
        ],
        rules: [
            { parameters in
                if parameters["name"] != nil, parameters["dir"] != nil {
                    throw CertificateProviderError.invalidParameter("parameters 'name' and 'dir' exclude each other")
                }
            }
        ]
    )

    static func reason(_ values: ProviderParameters) -> String? {
        do {
            _ = try schema.validate(values)
            return nil
        } catch let error as CertificateProviderError {
            #expect(error.code == .invalidParameter)
            return error.reason
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test(
        "a value that does not fit its type is refused naming the key, what is allowed and the value",
        arguments: [
            (
                ProviderParameters(["url": .string("no scheme")]),
                "parameter 'url' must be a URL such as https://host/path, not 'no scheme'"
            ),
            (["count": .string("twelve")], "parameter 'count' must be an integer of at least 1, not 'twelve'"),
            (["count": .integer(0)], "parameter 'count' must be an integer of at least 1, not 0"),
            (["timeout": .string("0")], "parameter 'timeout' must be a positive whole number of seconds, not '0'"),
            (["timeout": .integer(-5)], "parameter 'timeout' must be a positive whole number of seconds, not -5"),
            (["verbose": .string("maybe")], "parameter 'verbose' must be true or false, not 'maybe'"),
            (["mode": .string("turbo")], "parameter 'mode' must be one of fast, safe, not 'turbo'"),
            (["dir": .string("  ")], "parameter 'dir' must be a non-empty path, not '  '"),
            (["blob": .data([])], "parameter 'blob' must be non-empty bytes"),
            (["blob": .string("text")], "parameter 'blob' must be non-empty bytes, not 'text'"),
            (["name": .data([1])], "parameter 'name' must be a string"),
            (["pin": .integer(1234)], "parameter 'pin' must be a secret (password or PIN)"),
            (
                ["colour": .string("red")],
                "parameter 'colour' is not known to the test.schema provider (it takes: blob, count, dir, mode, name, pin, timeout, url, verbose)"
            ),
            (["name": .string("a"), "dir": .string("/tmp")], "parameters 'name' and 'dir' exclude each other"),
        ] as [(ProviderParameters, String)]
    )
    func messages(values: ProviderParameters, expected: String) {
        #expect(Self.reason(values) == expected)
    }

    @Test("well-typed values pass, in their own type or as text; the text form is kept as given")
    func acceptedValues() throws {
        let values: ProviderParameters = [
            "url": .string("https://dss.example/api"), "count": .string("12"), "timeout": .integer(5),
            "verbose": .string("yes"), "mode": .string("fast"), "dir": .string("file:///tmp/x"), "blob": .data([1]),
        ]
        let validated = try Self.schema.validate(values)
        #expect(validated == values)
        #expect(try validated.integer("count") == 12)
    }

    @Test("a secret given as text is wrapped: no description shows it, and a refusal never quotes it")
    func secretsAreRedacted() throws {
        let validated = try Self.schema.validate(["pin": .string("4711-secret"), "name": .string("Leonid")])
        #expect(validated["pin"] == .secret(Secret("4711-secret")))
        #expect(!validated.description.contains("4711-secret"))
        #expect(validated.description.contains("Leonid"))
        #expect(Self.schema.secretKeys == ["pin"])
        #expect(Self.schema["pin"]?.isSecret == true && Self.schema["name"]?.isSecret == false)
    }

    @Test("the command line: values are typed by the schema; secrets, bytes and unknown keys are refused")
    func commandLine() throws {
        #expect(try Self.schema.commandLineValue("timeout", "20") == .string("20"))
        #expect(throws: CertificateProviderError(.invalidParameter, "")) {
            try Self.schema.commandLineValue("timeout", "soon")
        }
        do {
            _ = try Self.schema.commandLineValue("pin", "4711-secret")
            Issue.record("a secret was taken from the command line")
        } catch let error as CertificateProviderError {
            #expect(error.code == .invalidParameter)
            #expect(error.reason.contains("--param-env pin=VAR") && error.reason.contains("--param-file pin=PATH"))
            #expect(!error.reason.contains("4711-secret"))
        }
        #expect(throws: CertificateProviderError(.invalidParameter, "")) {
            try Self.schema.commandLineValue("blob", "x")
        }
        #expect(throws: CertificateProviderError(.invalidParameter, "")) {
            try Self.schema.commandLineValue("nope", "x")
        }
    }

    @Test("the table lists every parameter in declaration order with type and default, and marks the secrets")
    func table() {
        let lines = Self.schema.table().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0].hasPrefix("KEY") && lines[0].contains("TYPE") && lines[0].contains("DEFAULT"))
        let keys = lines.dropFirst().prefix(9).map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(keys == ["url", "name", "count", "timeout", "verbose", "mode", "dir", "blob", "pin"])
        #expect(lines.contains { $0.hasPrefix("pin ") && $0.contains(" secret ") && $0.contains("the PIN") })
        #expect(lines.contains { $0.hasPrefix("mode ") && $0.contains("fast|safe") && $0.contains(" safe ") })
        #expect(lines.last == "secret parameters (pin) are never shown and never taken on a command line")
    }

    @Test("the registry keeps each provider's schema and renders its table; an unknown ID is providerNotFound")
    func registryTables() throws {
        var registry = ProviderRegistry()
        try registry.register("test.schema", description: "a test", schema: Self.schema) {
            throw CertificateProviderError.unsupportedOperation("not made in this test")
        }
        try registry.register("test.bare", description: "no schema") {
            throw CertificateProviderError.unsupportedOperation("not made in this test")
        }
        #expect(try registry.parameterTable("test.schema") == Self.schema.table())
        #expect(try registry.parameterTable("test.bare") == "the test.bare provider declares no parameters")
        #expect(registry.registration("test.schema")?.schema?.keys.count == 9)
        #expect(throws: CertificateProviderError(.providerNotFound, "")) { try registry.parameterTable("test.none") }
    }
}
