public import CertificateProviders
public import Foundation
public import HTTPClient

/// Downloads the EU list of the lists and the TLs it points to into a ``TrustedListCache``, asking
/// each server only for what changed (`If-None-Match` with the stored `ETag`, `If-Modified-Since`
/// with the stored `Last-Modified`).
///
/// Every list is verified before it is stored (its XML signature, its signer, its `NextUpdate`): the
/// LOTL with the given signing certificates, each TL with the certificates the LOTL's pointer to
/// its territory names. A list that fails never replaces a verified copy; the outcome says which
/// list and why. A LOTL that cannot be downloaded or verified stops the refresh before anything in
/// the cache changes.
public struct TrustedListRefresher: Sendable {
    /// The cache the lists are stored in.
    public var cache: TrustedListCache
    /// The transport the lists are downloaded through (its endpoint policy decides which URLs may
    /// be reached; its response limit should not be below ``limits``' bytes).
    public var transport: any HTTPTransport
    /// How much each list may hold (default ``TrustedListLimits/init(maximumBytes:maximumElements:maximumDepth:maximumServices:)``).
    public var limits: TrustedListLimits
    /// How long one download may take, in seconds (default 60).
    public var timeout: TimeInterval

    /// Creates a refresher.
    public init(
        cache: TrustedListCache,
        transport: any HTTPTransport,
        limits: TrustedListLimits = TrustedListLimits(),
        timeout: TimeInterval = 60
    ) {
        self.cache = cache
        self.transport = transport
        self.limits = limits
        self.timeout = timeout
    }

    /// Refreshes the cache from the list of the lists at `url`.
    /// - Parameters:
    ///   - url: where the LOTL is published.
    ///   - signers: the LOTL's signing certificates; nil for those the last refresh stored.
    ///   - time: the time every list must be current at (default now).
    /// - Returns: one outcome per list, the LOTL's first.
    /// - Throws: ``TrustedListError`` when the LOTL cannot be downloaded (`.downloadFailed`) or is
    ///   refused (its code), when no signer certificate is known (`.noSigners`), or when the cache
    ///   cannot be written (`.cacheUnusable`). Nothing in the cache changes for the LOTL's errors.
    public func refresh(
        listOfTheLists url: URL,
        signers: [Certificate]? = nil,
        at time: Date = Date()
    ) async throws -> [TrustedListRefreshOutcome] {
        let lotlSigners = signers ?? cache.storedSigners()
        guard !lotlSigners.isEmpty else {
            throw TrustedListError(
                .noSigners,
                "no signing certificate of the list of the lists was given, and the cache \(cache.directory.path) "
                    + "stores none yet"
            )
        }
        let name = TrustedListCache.listOfTheListsName
        let stored = cache.storedList(name)
        let previous = cache.source(of: name).flatMap { stored != nil && $0.url == url.absoluteString ? $0 : nil }
        let response = try await download(url, previous: previous, what: "the list of the lists")
        let bytes = response.status == 304 ? stored ?? [] : response.body
        let lotl: TrustedList
        do {
            lotl = try TrustedList(xml: bytes, name: name, signers: lotlSigners, at: time, limits: limits)
        } catch let error as TrustedListError {
            throw TrustedListError(
                error.code,
                "the list of the lists from \(url.absoluteString) is refused and the cache is left as it was: "
                    + error.reason
            )
        }
        guard lotl.isListOfTheLists else {
            throw TrustedListError(
                .invalidList,
                "\(url.absoluteString) is the trusted list of \"\(lotl.territory)\", not a list of the lists"
            )
        }
        try cache.prepare()
        var outcomes: [TrustedListRefreshOutcome] = []
        for pointer in lotl.pointers where pointer.isXML && !TrustedListCache.pointsToListOfTheLists(pointer) {
            outcomes.append(try await refresh(pointer, at: time))
        }
        // The LOTL last: the TLs it points to are stored (or kept) before it names them.
        if response.status != 304 {
            try cache.store(bytes, as: name, source: source(url, lotl.territory, response))
        }
        try cache.storeSigners(lotlSigners)
        let state: TrustedListRefreshOutcome.State = response.status == 304 ? .notModified : .fetched
        return [TrustedListRefreshOutcome(territory: lotl.territory, name: name, url: url.absoluteString, state: state)]
            + outcomes
    }

    /// Downloads, verifies and stores the TL one pointer names; what it did, or why it kept the old copy.
    private func refresh(_ pointer: TrustedListPointer, at time: Date) async throws -> TrustedListRefreshOutcome {
        let name = TrustedListCache.fileName(territory: pointer.territory)
        let stored = cache.storedList(name)
        func outcome(_ state: TrustedListRefreshOutcome.State, _ reason: String? = nil) -> TrustedListRefreshOutcome {
            TrustedListRefreshOutcome(
                territory: pointer.territory,
                name: name,
                url: pointer.location,
                state: stored == nil || state != .refused ? state : .kept,
                reason: reason.map { stored == nil ? $0 : "\($0); the verified copy stays" }
            )
        }
        guard let url = URL(string: pointer.location), url.scheme != nil, url.host != nil else {
            return outcome(
                .refused,
                "the LOTL's pointer to \(pointer.territory) names no usable URL '\(pointer.location)'"
            )
        }
        let previous = cache.source(of: name).flatMap { stored != nil && $0.url == pointer.location ? $0 : nil }
        do {
            let response = try await download(url, previous: previous, what: "the TL of \(pointer.territory)")
            let bytes = response.status == 304 ? stored ?? [] : response.body
            let list = try TrustedList(xml: bytes, name: name, signers: pointer.signers, at: time, limits: limits)
            guard list.territory == pointer.territory, !list.isListOfTheLists else {
                throw TrustedListError(
                    .invalidList,
                    "\(name) from \(pointer.location) is the list of \"\(list.territory)\", not the TL of "
                        + "\"\(pointer.territory)\" the LOTL's pointer names"
                )
            }
            if response.status == 304 { return outcome(.notModified) }
            try cache.store(bytes, as: name, source: source(url, pointer.territory, response))
            return outcome(.fetched)
        } catch let error as TrustedListError where error.code != .cacheUnusable {
            return outcome(.refused, error.reason)
        }
    }

    /// One GET of `url`, conditional on `previous`'s validators; a 200, or a 304 when `previous` is set.
    private func download(_ url: URL, previous: TrustedListSource?, what: String) async throws -> HTTPResponse {
        var request = HTTPRequest(url: url, timeout: timeout)
        request.setHeader("Accept", "application/vnd.etsi.tsl+xml, application/xml;q=0.9, */*;q=0.1")
        if let tag = previous?.entityTag { request.setHeader("If-None-Match", tag) }
        if let date = previous?.lastModified { request.setHeader("If-Modified-Since", date) }
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch let error as HTTPClientError {
            throw TrustedListError(
                error.code == .responseTooLarge ? .limitExceeded : .downloadFailed,
                "\(what) cannot be downloaded from \(url.absoluteString): \(error.reason)"
            )
        }
        guard response.status == 200 || (response.status == 304 && previous != nil) else {
            throw TrustedListError(
                .downloadFailed,
                "\(what) cannot be downloaded from \(url.absoluteString): the server answered HTTP \(response.status)"
            )
        }
        return response
    }

    private func source(_ url: URL, _ territory: String, _ response: HTTPResponse) -> TrustedListSource {
        TrustedListSource(
            url: url.absoluteString,
            territory: territory,
            entityTag: response.header("ETag"),
            lastModified: response.header("Last-Modified"),
            fetched: Date()
        )
    }
}
