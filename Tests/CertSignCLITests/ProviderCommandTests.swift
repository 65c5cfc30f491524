import BuiltInProviders
import CertificateProviders
import Foundation
import TestSupport
import Testing

@testable import CertSignCLI

/// The commands providers add (`BuiltInProvider.commands`) are `certsign` commands like the others:
/// found by their words, with every option they declare (a secret as its three sources, parameters as
/// `--param…`), and run through the tool's parser.
@Suite struct ProviderCommandTests {
    @Test("every provider command is a certsign command with the options it declares")
    func providerCommandsAreCommands() throws {
        let commands = BuiltInProviders.all.flatMap { $0.commands }
        #expect(!commands.isEmpty)
        for command in commands {
            let (descriptor, length) = try #require(Commands.find(command.words), "\(command.words)")
            #expect(length == command.words.count && descriptor.summary == command.summary)
            let names = Set(descriptor.options.map(\.name))
            for option in command.options {
                switch option.kind {
                case .secret:
                    #expect(names.isSuperset(of: ["env", "file", "stdin"].map { "--\(option.name)-\($0)" }))
                case .value, .flag:
                    #expect(names.contains("--\(option.name)"), "\(command.words): --\(option.name)")
                }
            }
            #expect(names.contains("--param") == command.takesParameters)
            #expect(Commands.listing(Commands.all).contains(command.summary))
        }
    }

    @Test("a provider command's usage error exits 64 with its usage line; a secret on the command line is refused")
    func usageErrors() throws {
        let store = try TemporaryDirectory()
        let missing = try CLI.run(["csc", "credentials", "--param", "url=https://127.0.0.1:1"], store: store)
        #expect(missing.status == 64)
        #expect(missing.errorOutput.contains("--param url=… and --param clientID=… are required"))
        #expect(missing.errorOutput.contains("certsign csc credentials"))
        let unknown = try CLI.run(["csc", "credentials", "--colour", "red"], store: store)
        #expect(unknown.status == 64 && unknown.errorOutput.contains("unknown option --colour"))
    }
}
