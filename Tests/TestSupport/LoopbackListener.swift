import Foundation
import Glibc
import Testing

/// A TCP listener on 127.0.0.1 (ephemeral port) that never answers and counts the connections
/// made to it: proof that code under test did (not) try the network; a TLS client that connects
/// gets its TCP handshake from the kernel and never an answer to its ClientHello.
public final class LoopbackListener: Sendable {
    private let descriptor: Int32
    /// The port it listens on.
    public let port: UInt16

    /// Listens on an ephemeral port of 127.0.0.1 (non-blocking, so counting never waits).
    public init() throws {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socketDescriptor >= 0)
        descriptor = socketDescriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        try #require(bound == 0)
        try #require(listen(socketDescriptor, 16) == 0)
        _ = fcntl(socketDescriptor, F_SETFL, fcntl(socketDescriptor, F_GETFL) | O_NONBLOCK)
    }

    deinit { close(descriptor) }

    /// Whether a connection waits to be accepted (left waiting: its client gets no answer and no close).
    public func hasPendingConnection() -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    /// Accepts (and closes) every pending connection; returns how many there were.
    public func acceptedConnections() -> Int {
        var count = 0
        while true {
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { return count }
            close(connection)
            count += 1
        }
    }

    /// Connects once, as a client would.
    public func connectOnce() throws {
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
    }
}
