public import Foundation

/// A signing operation a remote service started and that waits for a person's approval (a CSC
/// asynchronous `signHash`, a CryptoPro DSS operation that needs confirmation in myDSS).
///
/// It is a plain `Codable` value: a process that started the operation stores it (a `.pending` file,
/// a database row) and any later process, after a restart or on another machine, asks the provider's
/// key about it again with ``ApprovalSigningKey/status(of:)``. It holds no secret: the service knows
/// the operation by its ID, and the key that asks has its own credentials.
public struct PendingRemoteSignature: Codable, Sendable, Hashable {
    /// The format this code writes and reads; a newer one is refused when decoded.
    public static let currentFormatVersion = 1

    /// The format of this value (``currentFormatVersion`` when made here).
    public var formatVersion: Int
    /// The provider whose service runs the operation (`csc`).
    public var providerID: ProviderID
    /// The service's ID of the operation (CSC `responseID`): what the person approves or declines.
    public var operationID: String
    /// The key on the service that signs (a CSC credential ID), so a resuming process checks it asks
    /// the same key.
    public var keyID: String
    /// The digests being signed, in order.
    public var digests: [Data]
    /// The OID of the digests' algorithm.
    public var digestAlgorithmOID: String
    /// The signature scheme's name (`rsa-pkcs1v15`, `ecdsa`, …).
    public var scheme: String
    /// When the service forgets the operation (nil: it did not say).
    public var expiresAt: Date?

    /// Describes an operation a service started.
    /// - Parameters:
    ///   - providerID: the provider whose service runs it.
    ///   - operationID: the service's ID of the operation.
    ///   - keyID: the key on the service.
    ///   - digests: the digests being signed.
    ///   - digestAlgorithm: their algorithm.
    ///   - scheme: the signature scheme.
    ///   - expiresAt: when the service forgets the operation, if it said.
    public init(
        providerID: ProviderID,
        operationID: String,
        keyID: String,
        digests: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme,
        expiresAt: Date?
    ) {
        formatVersion = Self.currentFormatVersion
        self.providerID = providerID
        self.operationID = operationID
        self.keyID = keyID
        self.digests = digests.map { Data($0) }
        digestAlgorithmOID = digestAlgorithm.oid
        self.scheme = scheme.rawValue
        self.expiresAt = expiresAt
    }

    /// The digests' algorithm.
    /// - Throws: `.malformedInput` naming the operation when the OID is not one this package signs with.
    public func digestAlgorithm() throws -> DigestAlgorithm {
        guard let algorithm = DigestAlgorithm.allSupported.first(where: { $0.oid == digestAlgorithmOID }) else {
            throw CertificateProviderError.malformedInput(
                "pending operation \(operationID): digest algorithm \(digestAlgorithmOID) is not supported"
            )
        }
        return algorithm
    }

    /// The signature scheme.
    public var signatureScheme: SignatureScheme { SignatureScheme(scheme) }
}

/// Where an operation waiting for approval stands.
public enum RemoteSignatureStatus: Sendable, Equatable {
    /// Nobody approved or declined it yet.
    case waiting
    /// Approved: one signature value per digest, in order, checked against the key's certificate.
    case signed([[UInt8]])
}

/// A ``SigningKey`` on a service that may ask a person before it signs: it can start an operation
/// and return at once with a ``PendingRemoteSignature``, and report later where that operation stands.
///
/// Contract: ``requestSignatures(forDigests:digestAlgorithm:scheme:)`` never waits for the person;
/// ``status(of:)`` never waits either, returns ``RemoteSignatureStatus/signed(_:)`` only with values
/// that verify against the key's certificate over the operation's digests, and throws
/// `.approvalDeclined` or `.approvalExpired` (reasons naming the operation ID) once the person
/// declined or the service forgot the operation. The key's ordinary signing calls keep working: when
/// the service is configured to wait for approval they start an operation and wait for it with
/// ``waitForSignatures(_:timeout:pollInterval:progress:)``.
public protocol ApprovalSigningKey: SigningKey {
    /// Whether the service is configured to wait for a person (a CSC asynchronous operation mode):
    /// when false, the key signs at once and callers sign the ordinary way.
    var waitsForApproval: Bool { get }

    /// Starts an operation signing `digests` and returns it without waiting for the approval.
    /// - Throws: the provider's errors (wrong PIN, refused authorization, network).
    func requestSignatures(
        forDigests digests: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> PendingRemoteSignature

    /// Where `operation` stands now, without waiting.
    /// - Throws: `.approvalDeclined`, `.approvalExpired`; `.invalidParameter` when the operation
    ///   belongs to another provider or key; `.invalidServerSignature` when an approved value does not
    ///   verify; the provider's errors.
    func status(of operation: PendingRemoteSignature) async throws -> RemoteSignatureStatus
}

extension ApprovalSigningKey {
    /// Asks about `operation` every `pollInterval` until it is signed, declined, expired, or
    /// `timeout` has passed.
    /// - Parameters:
    ///   - operation: the operation to wait for.
    ///   - timeout: how long to wait at most.
    ///   - pollInterval: the pause between two questions (default 1 second).
    ///   - progress: called after each question that found the operation waiting, with the time
    ///     waited so far (for a progress line; default nil).
    /// - Returns: one signature value per digest, in order.
    /// - Throws: `.timeout` naming the operation ID when it is still waiting after `timeout` (the
    ///   operation stays on the service: ``status(of:)`` can ask again later); `.cancelled` when the
    ///   task is cancelled; what ``status(of:)`` throws.
    public func waitForSignatures(
        _ operation: PendingRemoteSignature,
        timeout: Duration,
        pollInterval: Duration = .seconds(1),
        progress: (@Sendable (Duration) -> Void)? = nil
    ) async throws -> [[UInt8]] {
        try await ApprovalWait.until(
            operationID: operation.operationID,
            providerID: operation.providerID,
            timeout: timeout,
            pollInterval: pollInterval,
            progress: progress
        ) {
            guard case .signed(let signatures) = try await status(of: operation) else { return nil }
            return signatures
        }
    }
}

/// The one polling loop of operations that wait for a person's approval.
public enum ApprovalWait {
    /// Calls `poll` every `pollInterval` until it returns a value (or throws), or `timeout` has passed.
    ///
    /// A poll that throws an error marked transient (the service answered 5xx or did not answer in
    /// time) counts as one that found the operation waiting: the next poll asks again. When the
    /// deadline passes during such a poll (a poll that outlasts the timeout, or a process that did not
    /// run for a while), one more poll asks at once: the person may have decided in time, and only an
    /// answer says so.
    /// - Parameters:
    ///   - operationID: the operation's ID, for the messages.
    ///   - providerID: its provider, for the messages.
    ///   - timeout: how long to wait at most.
    ///   - pollInterval: the pause between two polls.
    ///   - progress: called after each poll that found the operation waiting, with the time waited.
    ///   - poll: asks once; nil while the operation waits.
    /// - Returns: what `poll` returned.
    /// - Throws: `.timeout` naming the operation when it still waits after `timeout` (it stays on the
    ///   service; the reason adds the transient failure when the poll after the deadline failed too);
    ///   `.cancelled` when the task is cancelled; what `poll` throws but a transient failure.
    public static func until<Value>(
        operationID: String,
        providerID: ProviderID,
        timeout: Duration,
        pollInterval: Duration = .seconds(1),
        progress: (@Sendable (Duration) -> Void)? = nil,
        _ poll: () async throws -> Value?
    ) async throws -> Value {
        let clock = ContinuousClock()
        let start = clock.now
        var lastTransientFailure: CertificateProviderError?
        /// One poll: its value, or nil while the operation waits or after a transient failure (kept).
        func ask() async throws -> Value? {
            do {
                let value = try await poll()
                lastTransientFailure = nil
                return value
            } catch let error as CertificateProviderError where error.isTransient {
                lastTransientFailure = error
                return nil
            }
        }
        while true {
            if let value = try await ask() { return value }
            var waited = clock.now - start
            if waited >= timeout, lastTransientFailure != nil {
                if let value = try await ask() { return value }
                waited = clock.now - start
            }
            guard waited < timeout else {
                throw CertificateProviderError(
                    .timeout,
                    "operation \(operationID) (\(providerID)) was not approved within \(timeout); it still waits on "
                        + "the service: finish it later with its operation ID"
                        + (lastTransientFailure.map { " (the last poll failed: \($0.reason))" } ?? "")
                )
            }
            progress?(waited)
            do {
                try await Task.sleep(for: min(pollInterval, timeout - waited))
            } catch {
                throw CertificateProviderError(
                    .cancelled,
                    "waiting for the approval of operation \(operationID) was cancelled"
                )
            }
        }
    }
}

extension CertificateProviderError.Code {
    /// The person asked to approve a signature declined it: nothing was signed.
    public static let approvalDeclined = Self("approvalDeclined")
    /// A signature waiting for approval was neither approved nor declined before the service forgot
    /// it: nothing was signed; start again.
    public static let approvalExpired = Self("approvalExpired")
}
