/// A remote client's configuration that sends extra headers with every request (tests send the
/// emulator's fault header): conforming gives it ``withAdditionalHeaders(_:)``.
package protocol AdditionalHeadersConfiguration {
    /// Extra headers sent with every request (default none).
    var additionalHeaders: [(name: String, value: String)] { get set }
}

extension AdditionalHeadersConfiguration {
    /// This configuration sending `headers` with every request too (tests send the emulator's fault header).
    package func withAdditionalHeaders(_ headers: [(name: String, value: String)]) -> Self {
        var copy = self
        copy.additionalHeaders += headers
        return copy
    }
}
