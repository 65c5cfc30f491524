/// `certsign completion bash|zsh|fish` and `certsign man`: generated from the command declarations.
extension Commands {
    static let documentationCommands: [CommandDescriptor] = [completion, man]

    /// `certsign completion SHELL`.
    struct CompletionOptions: CommandOptions {
        var shell = ""

        static var arguments: [ArgumentBinding<Self>] {
            [
                .one(\.shell, "SHELL", "bash, zsh or fish") { shell in
                    guard ShellCompletion.shells.contains(shell) else {
                        throw InvalidValue(
                            message: "no completion for '\(shell)' (\(Help.alternatives(ShellCompletion.shells)))"
                        )
                    }
                    return shell
                }
            ]
        }
    }

    static let completion = CommandDescriptor(
        words: ["completion"],
        summary: "print a shell completion script (bash, zsh or fish)",
        discussion: """
            bash: source it, or install it as /usr/share/bash-completion/completions/certsign; zsh: as _certsign
            in a directory of $fpath; fish: as ~/.config/fish/completions/certsign.fish (make install does this).
            """,
        examples: ["source <(certsign completion bash)"]
    ) { (options: CompletionOptions, context) in
        context.console.out(ShellCompletion.script(for: options.shell))
        return CertSign.exitSuccess
    }

    static let man = CommandDescriptor(
        words: ["man"],
        summary: "print the certsign(1) manual page (roff)",
        examples: ["certsign man > certsign.1 && man -l certsign.1"]
    ) { context in
        context.console.out(ManPage.render())
        return CertSign.exitSuccess
    }
}
