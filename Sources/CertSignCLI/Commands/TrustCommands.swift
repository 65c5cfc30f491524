import CertificateProviders
import Foundation
import TrustedLists

/// `certsign trust show`: what EU trusted lists say, once their signatures are checked.
extension Commands {
    static let trustCommands: [CommandDescriptor] = [trustShow, trustRefresh]

    /// `certsign trust show [--trusted-list FILE... --lotl-signer CERT... | --cache DIR] [--at TIME]`.
    struct TrustShowOptions: CommandOptions {
        var lists = TrustedListSelection()
        var at: Date?

        /// The lists to show: the files given, else the cache.
        var selection: TrustedListSelection {
            var selection = lists
            selection.usesCache = lists.files.isEmpty
            return selection
        }

        static var options: [OptionBinding<Self>] {
            trustedListOptions(\.lists) + [
                .value(
                    \.at,
                    "--at",
                    "TIME",
                    "show each service's status at TIME (and check the lists are current then) instead of now",
                    convert: ValueConversions.time
                )
            ]
        }

        func validate() throws {
            if !lists.files.isEmpty && lists.cache != nil {
                throw InvalidValue(
                    message: "--trusted-list and --cache contradict each other: show the files, or the cache"
                )
            }
            try Commands.validateTrustedListOptions(selection)
        }
    }

    static let trustShow = CommandDescriptor(
        words: ["trust", "show"],
        summary: "check EU trusted lists (LOTL, TLs) and list their services and statuses",
        discussion: """
            Each --trusted-list file (ETSI TS 119 612 XML) is read with DTDs, entities and the network off and
            within size limits, and its XML signature is checked: the list of the lists (LOTL) with the
            --lotl-signer certificates, each TL with the certificates the LOTL's pointer to its territory names
            (or, when no LOTL is given, with --lotl-signer). Without --trusted-list, the lists come from the
            verified cache `trust refresh` fills (--cache DIR, or the default directory), checked again. A list changed after signing, signed by another key,
            past its NextUpdate or not in TS 119 612's namespace is refused with the reason (exit 1). Then every
            service is listed with its type, its status at --at (default now) and its status history.
            """,
        examples: [
            "certsign trust show --trusted-list lotl.xml --trusted-list BE.xml --lotl-signer lotl-signer.pem",
            "certsign trust show --trusted-list BE.xml --lotl-signer be-tl-signer.pem --at 2023-06-01 --json",
            "certsign trust show --cache ./trusted-lists",
        ]
    ) { (options: TrustShowOptions, context) in
        let time = options.at ?? Date()
        guard let set = try loadTrustedLists(options.selection, at: time, context: context) else {
            return CertSign.exitSuccess
        }
        let document = TrustShowDocument(set, at: time)
        context.emit(encoding: document, human: trustShowText(document))
        return CertSign.exitSuccess
    }

    /// The human form of `trust show`: a block per list, a line per service, its history indented.
    static func trustShowText(_ document: TrustShowDocument) -> String {
        var lines: [String] = []
        for list in document.lists {
            let kind = list.listOfTheLists ? "list of the lists" : "trusted list"
            lines.append(
                "\(Format.printable(list.name)): \(kind) \(list.territory) #\(list.sequenceNumber), issued \(list.issued), "
                    + "next update \(list.nextUpdate); signed by \(Format.printable(list.signer))"
            )
            for pointer in list.pointers {
                lines.append("  points to \(pointer.territory): \(Format.printable(pointer.location))")
            }
            for service in list.services {
                lines.append(
                    "  \(service.status.uppercased()) \(service.type): \(Format.printable(service.name)) "
                        + "(\(Format.printable(service.provider)))"
                )
                for period in service.history {
                    lines.append("    \(period.status) from \(period.from)\(period.until.map { " until \($0)" } ?? "")")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}
