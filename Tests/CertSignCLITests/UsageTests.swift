import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@Suite struct UsageTests {
    @Test func helpAndVersion() throws {
        let help = try CLI.run(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("providers"))
        #expect(help.output.contains("exit codes"))
        let version = try CLI.run(["--version"])
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("certsign "))
        let versionJSON = try CLI.json(try CLI.run(["--json", "--version"]))
        #expect(versionJSON["version"] as? String != nil)
        // `help help` is help, not a usage error.
        let helpOnHelp = try CLI.run(["help", "help"])
        #expect(helpOnHelp.status == 0, "\(helpOnHelp.errorOutput)")
        #expect(helpOnHelp.output.contains("usage: certsign help [COMMAND"))
    }

    @Test(arguments: [
        ["bogus"], [], ["providers", "--nope"], ["providers", "extra"], ["--store"],
        ["providers", "--password", "x"], ["providers", "--pin", "123"],
    ])
    func usageErrorsExit64WithTheUsageLine(arguments: [String]) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.errorOutput)")
        #expect(result.errorOutput.contains("usage:"))
        #expect(result.output.isEmpty)
        #expect(!result.errorOutput.contains("Fatal error"))
    }

    @Test func providersListsRegisteredIDs() throws {
        let result = try CLI.run(["--json", "providers"])
        #expect(result.status == 0)
        let json = try CLI.json(result)
        let providers = try #require(json["providers"] as? [[String: String]])
        #expect(providers.allSatisfy { $0["id"] != nil && $0["description"] != nil })
    }
}
