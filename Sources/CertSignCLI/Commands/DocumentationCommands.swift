/// `certsign completion bash|zsh|fish` and `certsign man`: generated from the command declarations.
extension Commands {
    static let documentationCommands: [CommandDescriptor] = [completion, man]

    static let completion = CommandDescriptor(
        words: ["completion"],
        summary: "print a shell completion script (bash, zsh or fish)",
        arguments: [ArgumentDeclaration(name: "SHELL", help: "bash, zsh or fish")],
        discussion: """
            bash: source it, or install it as /usr/share/bash-completion/completions/certsign; zsh: as _certsign
            in a directory of $fpath; fish: as ~/.config/fish/completions/certsign.fish (make install does this).
            """,
        examples: ["source <(certsign completion bash)"]
    ) { parsed, context in
        let shell = parsed.positionals[0]
        guard ShellCompletion.shells.contains(shell) else {
            throw UsageError(
                message: "no completion for '\(shell)' (\(Help.alternatives(ShellCompletion.shells)))",
                usage: "certsign completion SHELL"
            )
        }
        context.console.out(ShellCompletion.script(for: shell))
        return CertSign.exitSuccess
    }

    static let man = CommandDescriptor(
        words: ["man"],
        summary: "print the certsign(1) manual page (roff)",
        examples: ["certsign man > certsign.1 && man -l certsign.1"]
    ) { _, context in
        context.console.out(ManPage.render())
        return CertSign.exitSuccess
    }
}
