import CertificateProviders
import Foundation
import JSON

/// CSC API v2 asynchronous signing: `signatures/signHash` with `operationMode` `A` uses its SAD at
/// once and answers `{"responseID"}` instead of the signatures; the operation then waits for a person
/// (``EmulatorApprovals``) for at most `validity_period` milliseconds (default
/// ``CSCRouter/defaultValidity``). `signatures/signPolling` with `{"responseID"}` answers:
/// - 202 `{"responseID", "status": "pending", "expiresIn"}` while nobody decided;
/// - 200 `{"signatures"}` once approved (the same answer a synchronous `signHash` gives);
/// - 400 `access_denied` once declined, 400 `expired_request` once the validity period passed while
///   it was pending, 400 `invalid_request` for a response ID this client does not own;
/// - once, what ``DSSEmulator/failNextPoll(of:with:)`` set for the operation.
extension CSCRouter {
    /// How long an asynchronous operation waits when the request names no `validity_period`.
    static let defaultValidity: TimeInterval = 600
    /// The longest `validity_period` accepted (one day, in milliseconds).
    static let maximumValidityMilliseconds = 86_400_000

    /// The validity of an asynchronous request in seconds, or nil for a synchronous one.
    static func asynchronousValidity(_ body: JSONObjectReader) throws -> TimeInterval? {
        let mode = try body.optionalString("operationMode") ?? "S"
        guard mode == "A" || mode == "S" else {
            throw Failure(400, "invalid_request", "Invalid parameter operationMode: A or S, not '\(mode)'")
        }
        guard body.value("validity_period") != nil else { return mode == "A" ? defaultValidity : nil }
        guard mode == "A" else {
            throw Failure(400, "invalid_request", "Invalid parameter validity_period: only with operationMode A")
        }
        let milliseconds = try body.int("validity_period")
        guard (1...maximumValidityMilliseconds).contains(milliseconds) else {
            throw Failure(
                400,
                "invalid_request",
                "Invalid parameter validity_period: 1…\(maximumValidityMilliseconds) milliseconds, not \(milliseconds)"
            )
        }
        return TimeInterval(milliseconds) / 1000
    }

    /// Records the operation and answers its `responseID`.
    func startAsynchronous(
        _ user: EmulatorSeed.User,
        credentialID: String,
        hashes: [String],
        digestOID: String,
        signAlgo: String,
        validity: TimeInterval
    ) throws -> ServerResponse {
        let operation = try recordOperation {
            try approvals.start(
                api: "csc",
                username: user.username,
                keyID: credentialID,
                hashes: hashes,
                digestOID: digestOID,
                signAlgorithm: signAlgo,
                validity: validity
            )
        }
        return Reply.json(200, ["responseID": .string(operation.id)])
    }

    /// Records an operation waiting for a person (`start`); a state file that cannot be written is a 500.
    func recordOperation(
        _ start: () throws -> EmulatorApprovals.Operation
    ) throws -> EmulatorApprovals.Operation {
        do {
            return try start()
        } catch {
            throw Failure(500, "server_error", "the operation could not be recorded: \(error)")
        }
    }

    /// Where an operation a poll asks about stands, for the answers that differ per method.
    enum PolledOperation {
        /// The poll's whole answer (a fault set for the operation).
        case answer(ServerResponse)
        /// Nobody decided yet.
        case pending(EmulatorApprovals.Operation)
        /// Approved.
        case approved(EmulatorApprovals.Operation)
    }

    /// The operation `id` of `user` started by `api`, as a poll finds it.
    /// - Throws: 400 `invalid_request` naming `parameter` for an operation of another API or client,
    ///   `access_denied` once declined, `expired_request` once expired.
    func poll(_ id: String, api: String, of user: EmulatorSeed.User, parameter: String) throws -> PolledOperation {
        guard let operation = approvals.operation(id), operation.api == api, operation.username == user.username
        else {
            throw Failure(400, "invalid_request", "Invalid parameter \(parameter): '\(id)' is not one of this client's")
        }
        if let fault = approvals.takePollFault(of: id) {
            if let response = CSCRouter.reply(to: fault) { return .answer(response) }
            Thread.sleep(forTimeInterval: DSSEmulator.PollFault.slowPollSeconds)
        }
        switch operation.state {
        case .pending: return .pending(operation)
        case .approved: return .approved(operation)
        case .declined: throw Failure(400, "access_denied", "the user declined \(id)")
        case .expired: throw Failure(400, "expired_request", "\(id) expired before the user approved it")
        }
    }

    /// `signatures/signPolling`.
    func signPolling(_ body: JSONObjectReader, _ user: EmulatorSeed.User) throws -> ServerResponse {
        try CSCRouter.allowOnly(body, ["responseID", "clientData"])
        let id = try body.string("responseID")
        switch try poll(id, api: "csc", of: user, parameter: "responseID") {
        case .answer(let response):
            return response
        case .pending(let operation):
            let left = max(0, Int(operation.expiresAt.timeIntervalSinceNow.rounded(.up)))
            return Reply.json(
                202,
                ["responseID": .string(id), "status": "pending", "expiresIn": .integer(left)]
            )
        case .approved(let operation):
            let record = try credential(operation.keyID, of: user)
            guard let key = record.identity.key as? LocalSigningKey,
                let algorithm = DigestAlgorithm.allSupported.first(where: { $0.oid == operation.digestOID })
            else {
                throw Failure(500, "server_error", "operation \(id): the credential's key is not here")
            }
            let scheme = try CSCRouter.scheme(of: key, signAlgo: operation.signAlgorithm, algorithm: algorithm)
            let hashes = operation.hashes.compactMap { Data(base64Encoded: $0).map(Array.init) }
            let signatures = try CSCRouter.sign(
                hashes,
                key: key,
                algorithm: algorithm,
                scheme: scheme,
                wrongHash: false
            )
            return Reply.json(200, ["signatures": .array(signatures)])
        }
    }

    /// The answer of a poll that fails on purpose (``DSSEmulator/failNextPoll(of:with:)``), or nil
    /// for a slow poll, which answers as usual, late.
    static func reply(to fault: DSSEmulator.PollFault) -> ServerResponse? {
        switch fault {
        case .slow:
            return nil
        case .unavailable:
            var response = reply(Failure(503, "temporarily_unavailable", "simulated outage of one poll"))
            response.headers.append(("Retry-After", "1"))
            return response
        case .malformed:
            return ServerResponse(
                status: 200,
                headers: [("Content-Type", "application/json; charset=utf-8")],
                body: Array("{\"signatures\": [\"not finished".utf8)
            )
        }
    }

    /// The scheme `signAlgo` means for `key`: the key's family decides the algorithms it takes, and
    /// each pairs with one digest, by position.
    static func scheme(of key: LocalSigningKey, signAlgo: String, algorithm: DigestAlgorithm) throws -> SignatureScheme
    {
        let families: [(fits: Bool, algorithms: [String], scheme: SignatureScheme)] = [
            (key.publicKeyAlgorithm.isRSA, rsaAlgorithms, .rsaPKCS1v15),
            (key.publicKeyAlgorithm.isEC, ecdsaAlgorithms, .ecdsa),
        ]
        guard let family = families.first(where: { $0.fits && $0.algorithms.contains(signAlgo) }),
            let index = family.algorithms.firstIndex(of: signAlgo)
        else {
            throw Failure(
                400,
                "invalid_request",
                "Invalid parameter signAlgo: \(signAlgo) is not among the key's algorithms"
            )
        }
        guard DigestAlgorithm.allSupported[index] == algorithm else {
            throw Failure(
                400,
                "invalid_request",
                "Invalid parameter signAlgo: \(signAlgo) does not go with hashAlgorithmOID \(algorithm.oid)"
            )
        }
        return family.scheme
    }

    /// Signs each hash with `key`, as base64 JSON strings; the wrong-hash fault signs the hash of the
    /// hash (a valid signature over other bytes).
    static func sign(
        _ hashes: [[UInt8]],
        key: LocalSigningKey,
        algorithm: DigestAlgorithm,
        scheme: SignatureScheme,
        wrongHash: Bool
    ) throws -> [JSONValue] {
        try hashes.map { hash in
            let signed = wrongHash ? algorithm.hash(hash) : hash
            do {
                return .string(
                    Data(try key.signSynchronously(digest: signed, digestAlgorithm: algorithm, scheme: scheme))
                        .base64EncodedString()
                )
            } catch {
                throw Failure(500, "server_error", "the key could not sign: \(error)")
            }
        }
    }
}
