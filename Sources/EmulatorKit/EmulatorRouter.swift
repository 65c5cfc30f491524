/// One API the emulator serves: it claims the paths it answers, answers them, and shapes the errors
/// the emulator itself gives on its behalf (an unknown fault name, the `status-500` fault) the way
/// its real server would, so a client's error path sees what it would see in production.
///
/// `DSSEmulator.routers()` is the one list of them; a new stand-in server is one conforming type
/// and one line there.
protocol EmulatorRouter: Sendable {
    /// Whether this router answers requests for `path`.
    func owns(_ path: String) -> Bool

    /// The answer to `request`. The faults every API shares (drop, status 500, malformed JSON,
    /// delay, large body) are applied before; `fault` carries the rest for the router to apply
    /// (an expired token, an expired SAD, a wrong hash), or nil.
    func handle(_ request: ServerRequest, fault: DSSEmulator.Fault?) -> ServerResponse

    /// An error in this API's shape.
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - code: a machine-readable code, for APIs whose errors carry one (`unknown_fault`).
    ///   - message: the human-readable text.
    func error(_ status: Int, code: String, _ message: String) -> ServerResponse
}

extension EmulatorRouter {
    /// The FMP platform's error envelope: what the emulator answers for paths no router owns, too.
    func error(_ status: Int, code: String, _ message: String) -> ServerResponse {
        Reply.error(status, code, message)
    }
}
