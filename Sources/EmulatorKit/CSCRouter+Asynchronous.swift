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
///   it was pending, 400 `invalid_request` for a response ID this client does not own.
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
        let operation: EmulatorApprovals.Operation
        do {
            operation = try approvals.start(
                api: "csc",
                username: user.username,
                keyID: credentialID,
                hashes: hashes,
                digestOID: digestOID,
                signAlgorithm: signAlgo,
                validity: validity
            )
        } catch {
            throw Failure(500, "server_error", "the operation could not be recorded: \(error)")
        }
        return Reply.json(200, ["responseID": .string(operation.id)])
    }

    /// `signatures/signPolling`.
    func signPolling(_ body: JSONObjectReader, _ user: EmulatorSeed.User) throws -> ServerResponse {
        try CSCRouter.allowOnly(body, ["responseID", "clientData"])
        let id = try body.string("responseID")
        guard let operation = approvals.operation(id), operation.api == "csc", operation.username == user.username
        else {
            throw Failure(
                400,
                "invalid_request",
                "Invalid parameter responseID: '\(id)' is not an operation of this client"
            )
        }
        switch operation.state {
        case .pending:
            let left = max(0, Int(operation.expiresAt.timeIntervalSinceNow.rounded(.up)))
            return Reply.json(
                202,
                ["responseID": .string(id), "status": "pending", "expiresIn": .integer(left)]
            )
        case .declined:
            throw Failure(400, "access_denied", "the user declined operation \(id)")
        case .expired:
            throw Failure(400, "expired_request", "operation \(id) expired before the user approved it")
        case .approved:
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
