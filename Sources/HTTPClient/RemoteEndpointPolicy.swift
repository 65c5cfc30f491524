public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which server URLs a remote client may talk to.
///
/// `https://` is always allowed. `http://` is refused, because passwords, PINs and tokens would
/// cross the network in clear text, unless the host is a loopback address (`localhost`,
/// `127.0.0.0/8`, `::1`) or ``allowsInsecureHTTP`` is set (the CLI's `--allow-insecure-http`).
/// Every other scheme is refused.
public struct RemoteEndpointPolicy: Sendable, Equatable {
    /// Whether `http://` is allowed to any host (default false).
    public var allowsInsecureHTTP: Bool

    /// Creates a policy.
    /// - Parameter allowsInsecureHTTP: allow clear-text HTTP to non-loopback hosts (default false).
    public init(allowsInsecureHTTP: Bool = false) {
        self.allowsInsecureHTTP = allowsInsecureHTTP
    }

    /// The default policy: HTTPS anywhere, HTTP to loopback only.
    public static let `default` = RemoteEndpointPolicy()

    /// Checks a URL against the policy.
    /// - Throws: `.invalidParameter` saying why the URL is refused and how to allow it.
    public func validate(_ url: URL) throws {
        guard let scheme = url.scheme?.lowercased() else {
            throw HTTPClientError.invalidParameter(
                "the server URL '\(url.absoluteString)' has no scheme; use https://host/"
            )
        }
        guard let host = url.host, !host.isEmpty else {
            throw HTTPClientError.invalidParameter("the server URL '\(url.absoluteString)' has no host")
        }
        switch scheme {
        case "https":
            return
        case "http":
            if allowsInsecureHTTP || RemoteEndpointPolicy.isLoopback(host: host) { return }
            throw HTTPClientError.invalidParameter(
                "refusing clear-text http:// to '\(host)': passwords and tokens would be readable on the network; "
                    + "use https://, or allow it explicitly (--allow-insecure-http)"
            )
        default:
            throw HTTPClientError.invalidParameter(
                "the server URL scheme '\(scheme)' is not supported; use https://"
            )
        }
    }

    /// Whether `host` names the loopback interface: `localhost` (and `*.localhost`), an IPv4 address
    /// in `127.0.0.0/8`, or the IPv6 loopback `::1` (brackets allowed, any spelling of it).
    public static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name = String(name.dropLast()) }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }
            // IPv4-mapped loopback ::ffff:127.x.y.z
            return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
        }
        return false
    }
}
