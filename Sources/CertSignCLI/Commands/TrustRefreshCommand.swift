import CertificateProviders
import Foundation
import HTTPClient
import TrustedLists

/// `certsign trust refresh`: the EU trusted lists downloaded into a verified cache for offline use.
extension Commands {
    /// `certsign trust refresh --lotl URL [--cache DIR] [--lotl-signer CERT...] [--allow-insecure-http]`.
    struct TrustRefreshOptions: CommandOptions {
        var lotl: URL?
        var cache: String?
        var lotlSigners: [String] = []
        var allowInsecureHTTP = false
        var at: Date?

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.lotl,
                    "--lotl",
                    "URL",
                    "where the EU list of the lists (LOTL) is published (https://, or http:// on loopback)",
                    type: .url,
                    required: true,
                    convert: { text in
                        try ValueConversions.httpURL(text) { "--lotl '\($0)' is not an http:// or https:// URL" }
                    }
                ),
                cacheOption(\.cache),
                .repeatable(
                    \.lotlSigners,
                    "--lotl-signer",
                    "CERT",
                    "the LOTL's signing certificate (PEM or DER); stored in the cache, so later refreshes may\n"
                        + "leave it out",
                    type: .file
                ),
                .flag(
                    \.allowInsecureHTTP,
                    "--allow-insecure-http",
                    "allow http:// to a host that is not loopback (lists are signed, but a listener learns which\n"
                        + "you fetch)"
                ),
                .value(
                    \.at,
                    "--at",
                    "TIME",
                    "check the lists are current at TIME instead of now",
                    convert: ValueConversions.time
                ),
            ]
        }
    }

    /// `--cache DIR`, shared by `trust refresh`, `trust show` and `verify --trust eu`.
    static func cacheOption<Options: CommandOptions>(
        _ keyPath: WritableKeyPath<Options, String?>
    )
        -> OptionBinding<Options>
    {
        .value(
            keyPath,
            "--cache",
            "DIR",
            "the verified trusted-list cache `trust refresh` fills",
            type: .directory,
            default: "$XDG_CACHE_HOME/certsign/trusted-lists, else ~/.cache/certsign/trusted-lists"
        )
    }

    /// The cache of `--cache DIR`, else the default directory.
    static func trustedListCache(_ path: String?) -> TrustedListCache {
        TrustedListCache(directory: path.map { URL(fileURLWithPath: $0) } ?? TrustedListCache.defaultDirectory())
    }

    static let trustRefresh = CommandDescriptor(
        words: ["trust", "refresh"],
        summary: "download the EU list of the lists and its TLs into a verified cache",
        discussion: """
            Downloads the list of the lists (LOTL) at --lotl and every TL it points to, asking each server only
            for what changed (If-None-Match, If-Modified-Since with the validators stored from the last run).
            Each list is verified before it is stored: the LOTL with the --lotl-signer certificates (default:
            those the last refresh stored), each TL with the certificates the LOTL's pointer to it names. A
            list that is refused or cannot be downloaded never replaces the verified copy: it is reported as
            kept with the reason, and the command exits 1. A LOTL that cannot be downloaded or verified stops
            the refresh with the reason, leaving the cache as it was. Files are written atomically, 0600, in a
            0700 directory, each list with NAME.source.json (its URL, ETag and Last-Modified) beside it.
            `verify --trust eu` and `trust show --cache` then use the cache offline.
            """,
        examples: [
            "certsign trust refresh --lotl https://ec.europa.eu/tools/lotl/eu-lotl.xml --lotl-signer lotl-signer.pem",
            "certsign --json trust refresh --lotl https://tl.example/eu-lotl.xml --cache ./trusted-lists",
        ]
    ) { (options: TrustRefreshOptions, context) in
        guard let lotl = options.lotl else { return CertSign.exitUsage }
        let signers =
            options.lotlSigners.isEmpty
            ? nil : try context.certificates(inFiles: options.lotlSigners, option: "--lotl-signer")
        let cache = trustedListCache(options.cache)
        let limits = TrustedListLimits()
        let transport = CurlTransport(
            endpointPolicy: RemoteEndpointPolicy(allowsInsecureHTTP: options.allowInsecureHTTP),
            maximumResponseBodyBytes: limits.maximumBytes
        )
        let refresher = TrustedListRefresher(cache: cache, transport: transport, limits: limits)
        let outcomes = try await convertingTrustedListErrors {
            try await refresher.refresh(listOfTheLists: lotl, signers: signers, at: options.at ?? Date())
        }
        let document = TrustRefreshDocument(cache: cache.directory.path, outcomes: outcomes)
        context.emit(encoding: document, human: trustRefreshText(document))
        return outcomes.allSatisfy(\.succeeded) ? CertSign.exitSuccess : CertSign.exitFailure
    }

    /// A line per list: `TERRITORY NAME: STATE (URL)`, and the reason of a kept or refused one.
    static func trustRefreshText(_ document: TrustRefreshDocument) -> String {
        var lines = ["cache: \(Format.printable(document.cache))"]
        for list in document.lists {
            let state = list.state == TrustedListRefreshOutcome.State.notModified.rawValue ? "not modified" : list.state
            lines.append(
                "\(Format.printable(list.territory)) \(list.file): \(state) (\(Format.printable(list.url)))"
                    + (list.reason.map { " — \(Format.printable($0))" } ?? "")
            )
        }
        return lines.joined(separator: "\n")
    }

    /// Runs `body`, reporting a trusted list's refusal as the CLI's error (same code and reason).
    static func convertingTrustedListErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as TrustedListError {
            throw CertificateProviderError(CertificateProviderError.Code(error.code.rawValue), error.reason)
        }
    }
}

/// `trust refresh --json`: `{"cache", "lists": [{"territory", "file", "url", "state", "reason"}]}`.
struct TrustRefreshDocument: Encodable {
    var cache: String
    var lists: [Entry]
    enum CodingKeys: String, CodingKey, CaseIterable { case cache, lists }

    /// One list's outcome.
    struct Entry: Encodable {
        var territory: String
        var file: String
        var url: String
        /// `fetched`, `notModified`, `kept` or `refused`.
        var state: String
        var reason: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case territory, file, url, state, reason }
    }

    init(cache: String, outcomes: [TrustedListRefreshOutcome]) {
        self.cache = cache
        lists = outcomes.map {
            Entry(territory: $0.territory, file: $0.name, url: $0.url, state: $0.state.rawValue, reason: $0.reason)
        }
    }
}
