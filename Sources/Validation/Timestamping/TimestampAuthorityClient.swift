import CMS
public import CertificateProviders
public import Foundation

/// An RFC 3161 time-stamping client: asks a TSA over HTTP for a timestamp of some data and checks
/// the answer before returning it.
///
/// The request carries the imprint of the data (SHA-256 by default), a random 64-bit nonce and
/// certReq (so the token carries the TSA certificate). The response must have status granted,
/// echo the nonce and imprint, be signed by a certificate whose only extendedKeyUsage is a
/// critical timeStamping, chain to ``Configuration/trustAnchors``, and have a `genTime` within
/// ``Configuration/allowedClockSkew`` of the exchange.
///
/// ```swift
/// let tsa = TimestampAuthorityClient(configuration: .init(url: tsaURL, trustAnchors: [tsaRoot]), fetcher: fetcher)
/// let cadesT = try await SignatureTimestamper.addTimestamps(to: cadesBES, authority: tsa).signature
/// ```
public struct TimestampAuthorityClient: Sendable {
    /// How the client talks to its TSA; every field documents its default.
    public struct Configuration: Sendable {
        /// The TSA's URL (`http://` is fine: the answer is signed and checked).
        public var url: URL
        /// The certificates the TSA's chain must lead to. Empty (the default): the system trust
        /// store (`/etc/ssl/certs`).
        public var trustAnchors: [Certificate]
        /// Whether non-empty ``trustAnchors`` replace the system trust store (default true) or are
        /// trusted besides it (false: a private CA's TSA and public TSAs both pass).
        public var trustAnchorsReplaceSystemStore: Bool
        /// The imprint's digest (default SHA-256).
        public var digestAlgorithm: DigestAlgorithm
        /// The TSA policy OID to ask for (default nil: the TSA's default policy).
        public var policy: String?
        /// Seconds for one exchange (default 30).
        public var timeout: TimeInterval
        /// The largest answer accepted (default 1 MiB).
        public var maximumResponseBytes: Int
        /// How far the TSA's `genTime` may be from this machine's clock during the exchange
        /// (default 300 s).
        public var allowedClockSkew: TimeInterval

        /// Creates a configuration.
        public init(
            url: URL,
            trustAnchors: [Certificate] = [],
            trustAnchorsReplaceSystemStore: Bool = true,
            digestAlgorithm: DigestAlgorithm = .sha256,
            policy: String? = nil,
            timeout: TimeInterval = 30,
            maximumResponseBytes: Int = 1 << 20,
            allowedClockSkew: TimeInterval = 300
        ) {
            self.url = url
            self.trustAnchors = trustAnchors
            self.trustAnchorsReplaceSystemStore = trustAnchorsReplaceSystemStore
            self.digestAlgorithm = digestAlgorithm
            self.policy = policy
            self.timeout = timeout
            self.maximumResponseBytes = maximumResponseBytes
            self.allowedClockSkew = allowedClockSkew
        }
    }

    /// The media type of a request (RFC 3161 3.4).
    public static let queryContentType = "application/timestamp-query"
    /// The media type of a response (RFC 3161 3.4).
    public static let replyContentType = "application/timestamp-reply"

    /// The configuration in force.
    public let configuration: Configuration
    /// How requests reach the TSA.
    public let fetcher: any BinaryHTTPFetching

    /// Creates a client.
    public init(configuration: Configuration, fetcher: any BinaryHTTPFetching) {
        self.configuration = configuration
        self.fetcher = fetcher
    }

    /// Asks the TSA for a timestamp of `data` and checks the answer.
    ///
    /// - Parameter data: the bytes to timestamp (for CAdES-T, a SignerInfo's signature value);
    ///   only their digest is sent.
    /// - Returns: the checked token.
    /// - Throws: `.serverRejected` when the TSA answers a non-2xx status or refuses the request
    ///   (status rejection or waiting, with its failure info); `.timestampInvalid` when the answer
    ///   fails a check (nonce, imprint, signature, TSA certificate or chain, genTime); `.network`
    ///   when the answer is not a TimeStampResp, too large, or the connection failed; `.timeout`;
    ///   `.cancelled`.
    public func timestamp(_ data: [UInt8]) async throws -> TimestampToken {
        try await timestamp(digest: configuration.digestAlgorithm.hash(data))
    }

    /// Asks the TSA for a timestamp of a digest made elsewhere with the configuration's
    /// ``Configuration/digestAlgorithm`` (a PDF's ByteRange digest for a document timestamp), and
    /// checks the answer.
    ///
    /// - Parameter digest: the imprint to send.
    /// - Returns: the checked token.
    /// - Throws: `.invalidParameter` for a digest of the wrong length; as ``timestamp(_:)``.
    public func timestamp(digest: [UInt8]) async throws -> TimestampToken {
        let request = try TimestampOpenSSL.makeRequest(
            imprint: digest,
            digest: configuration.digestAlgorithm,
            policy: configuration.policy
        )
        let sentAt = Date()
        let answer = try await fetcher.post(
            configuration.url,
            contentType: Self.queryContentType,
            body: request.der,
            timeout: configuration.timeout,
            maximumBytes: configuration.maximumResponseBytes
        )
        let receivedAt = Date()
        let window =
            sentAt.addingTimeInterval(
                -configuration.allowedClockSkew
            )...receivedAt.addingTimeInterval(configuration.allowedClockSkew)
        return try TimestampOpenSSL.checkResponse(
            answer.body,
            request: request,
            trustAnchors: configuration.trustAnchors,
            addingSystemStore: !configuration.trustAnchorsReplaceSystemStore,
            at: receivedAt,
            window: window
        )
    }
}
