import Foundation

/// The `certsign(1)` manual page in roff (man macros), generated from the command declarations.
enum ManPage {
    /// Escapes text for roff: backslashes, hyphens of options, and a leading `.` or `'`.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
            .unicodeScalars
        {
            // Non-ASCII (…, Cyrillic) as groff's \[uXXXX], so the page needs no input encoding.
            if scalar.isASCII {
                escaped.unicodeScalars.append(scalar)
            } else {
                escaped += "\\[u" + String(format: "%04X", scalar.value) + "]"
            }
        }
        return escaped.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
        }.joined(separator: "\n")
    }

    private static func option(_ option: OptionDeclaration) -> [String] {
        let head =
            option.arity == .flag
            ? "\\fB\(escape(option.name))\\fR" : "\\fB\(escape(option.name))\\fR \\fI\(escape(option.valueName))\\fR"
        return [".TP", head, escape(Help.optionHelp(option).replacingOccurrences(of: "\n", with: " "))]
    }

    /// The whole page.
    static func render() -> String {
        var lines = [
            ".TH CERTSIGN 1 \"\" \"certsign \(CertSign.version)\" \"User Commands\"",
            ".SH NAME",
            "certsign \\- sign and verify documents with certificates from any provider",
            ".SH SYNOPSIS",
            ".B certsign",
            "[\\fB\\-\\-store\\fR \\fIDIR\\fR] [\\fB\\-\\-json\\fR] \\fIcommand\\fR [\\fIoptions\\fR]",
            ".br",
            ".B certsign help",
            "[\\fIcommand\\fR]",
            ".SH DESCRIPTION",
            escape(
                "certsign signs documents as CMS / CAdES (and PDFs as PAdES) with keys from any provider: PKCS#12 "
                    + "files and the encrypted identity store, PKCS#11 tokens, Foresight Mobile Platform DSS, "
                    + "CryptoPro DSS and CSC API v2 services; it verifies signatures and keeps a journal of what it "
                    + "signed."
            ),
            ".PP",
            escape(
                "Secrets are never taken as command-line values: they come from --…-env VAR (an environment "
                    + "variable), --…-file PATH (the first line of the file), --password-stdin (the first line of "
                    + "standard input) or a prompt without echo when standard input is a terminal. Distinguished "
                    + "names print in RFC 4514 form."
            ),
            ".SH GLOBAL OPTIONS",
        ]
        for declaration in Invocation.globalOptions { lines += option(declaration) }
        lines.append(".SH COMMANDS")
        for command in Commands.all {
            lines.append(".SS \"\(escape(command.name))\"")
            lines.append(escape(command.summary) + ".")
            lines.append(".PP")
            lines.append(".nf")
            lines.append(escape(command.usage))
            lines.append(".fi")
            for argument in command.arguments {
                lines += [".TP", "\\fI\(escape(argument.synopsis))\\fR", escape(argument.help)]
            }
            for declaration in command.options { lines += option(declaration) }
            if !command.discussion.isEmpty {
                lines.append(".PP")
                lines.append(escape(command.discussion.replacingOccurrences(of: "\n", with: " ")))
            }
            for example in command.examples {
                lines += [".PP", "Example:", ".nf", ".RS", escape(example), ".RE", ".fi"]
            }
        }
        lines += [
            ".SH ENVIRONMENT",
            ".TP",
            ".B CERTSIGN_HOME",
            escape(
                "the store directory when --store is not given; else $XDG_DATA_HOME/certsign, else "
                    + "~/.local/share/certsign."
            ),
            ".SH EXIT STATUS",
            "0 success; 1 the operation failed (wrong password, a FAILED signature, the server said no); 2 verify "
                + "found no FAILED signature but an INDETERMINATE one; 64 usage error.",
            ".SH SEE ALSO",
            ".BR openssl (1),",
            ".BR openssl-cms (1)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
