import BuiltInProviders
import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// Shell completion and the man page, generated from the declarations, are valid for their tools.
@Suite struct DocumentationTests {
    @Test func bashCompletionLoadsAndCompletes() throws {
        let script = try CLI.run(["completion", "bash"])
        #expect(script.status == 0)
        let directory = try TemporaryDirectory()
        let path = try directory.write("certsign.bash", text: script.output)
        let syntax = try ExternalTool.run("bash", ["-n", path])
        #expect(syntax.succeeded, "\(syntax.errorOutput)")
        func complete(_ words: [String]) throws -> [String] {
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            let run = try ExternalTool.run(
                "bash",
                [
                    "-c",
                    "source '\(path)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _certsign; printf '%s\\n' \"${COMPREPLY[@]}\"",
                ]
            )
            #expect(run.succeeded, "\(run.errorOutput)")
            return run.output.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["certsign", "ide"]) == ["identity"])
        #expect(Set(try complete(["certsign", "sig"])) == ["sign", "signatures"])
        #expect(try complete(["certsign", "identity", "ex"]) == ["export"])
        #expect(try complete(["certsign", "--store", "/tmp", "signatures", "re"]) == ["remove"])
        #expect(try complete(["certsign", "sign", "doc.txt", "--out-d"]) == ["--out-dir"])
        #expect(Set(try complete(["certsign", "sign", "--format", ""])) == ["cms", "cades", "cades-bes", "pades"])
        // Values completion cannot guess offer nothing, never the files of the working directory;
        // provider IDs, digests and the store's aliases are offered where they fit.
        #expect(
            Set(try complete(["certsign", "sign", "doc.txt", "--provider", ""]))
                == Set(BuiltInProviders.ids.map(\.rawValue))
        )
        #expect(try complete(["certsign", "sign", "doc.txt", "--digest", "stree"]) == ["streebog256", "streebog512"])
        #expect(try complete(["certsign", "sign", "doc.txt", "--tsa", ""]) == [])
        let store = directory.url.appendingPathComponent("store/identities")
        for alias in ["work", "работа", ".tmp-hidden"] {
            try FileManager.default.createDirectory(
                at: store.appendingPathComponent(alias),
                withIntermediateDirectories: true
            )
        }
        let storePath = directory.path("store")
        #expect(
            Set(try complete(["certsign", "--store", storePath, "sign", "doc.txt", "--identity", ""]))
                == ["work", "работа"]
        )
        #expect(Set(try complete(["certsign", "--store", storePath, "identity", "show", "w"])) == ["work"])
        #expect(Set(try complete(["certsign", "sessions", "clear", "c"])) == ["cryptopro-dss", "csc"])
    }

    @Test func zshAndFishScriptsAreValid() throws {
        let directory = try TemporaryDirectory()
        let zsh = try CLI.run(["completion", "zsh"])
        #expect(zsh.status == 0 && zsh.output.hasPrefix("#compdef certsign"))
        let fish = try CLI.run(["completion", "fish"])
        #expect(fish.status == 0 && fish.output.contains("complete -c certsign"))
        // Each checked by its shell when it is installed.
        if ExternalTool.isAvailable("zsh") {
            let path = try directory.write("_certsign", text: zsh.output)
            #expect(try ExternalTool.run("zsh", ["-n", path]).succeeded)
        }
        if ExternalTool.isAvailable("fish") {
            let path = try directory.write("certsign.fish", text: fish.output)
            #expect(try ExternalTool.run("fish", ["--no-execute", path]).succeeded)
        }
        let unknown = try CLI.run(["completion", "tcsh"])
        #expect(unknown.status == 64)
    }

    @Test func manPagePassesGroffWarnings() throws {
        let page = try CLI.run(["man"])
        #expect(page.status == 0)
        #expect(page.output.hasPrefix(".TH CERTSIGN 1"))
        for word in ["identity export", "\\-\\-out\\-dir", "EXIT STATUS"] { #expect(page.output.contains(word)) }
        let directory = try TemporaryDirectory()
        let path = try directory.write("certsign.1", text: page.output)
        let groff = try ExternalTool.run("groff", ["-man", "-ww", "-z", "-Tutf8", path])
        #expect(groff.succeeded && groff.errorOutput.isEmpty, "\(groff.errorOutput)")
    }
}
