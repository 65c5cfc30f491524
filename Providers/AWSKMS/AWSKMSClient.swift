internal import CertificateProviders
package import Foundation
package import HTTPClient
internal import JSON
import RemoteProviderSupport

/// A client for the two AWS KMS actions a signing key needs, `GetPublicKey` and `Sign`, over the
/// JSON 1.1 protocol: `POST /` with `X-Amz-Target: TrentService.<Action>` and
/// `Content-Type: application/x-amz-json-1.1`, every request signed with Signature Version 4
/// (``SigV4Signer``, service `kms`).
///
/// Retries: `Sign` and `GetPublicKey` change nothing on the service, so both are sent again after
/// HTTP 429, 5xx, a `ThrottlingException` / `ThrottledException` answer or a connection failure,
/// at most ``Configuration/retryPolicy``'s `maxAttempts` in all, waiting its backoff with full
/// jitter (a random wait between half and all of it) so that concurrent requests do not come back
/// together. Every attempt is signed afresh (its own `X-Amz-Date`).
///
/// Errors (`CertificateProviderError`), each naming the AWS error code and AWS's message (never a
/// secret: the secret key and session token are cut out of anything the service sends back):
/// - `.authenticationFailed`: refused credentials or signature (`UnrecognizedClientException`,
///   `InvalidSignatureException`, `AccessDeniedException`, `ExpiredTokenException`, and the XML
///   `InvalidClientTokenId` / `SignatureDoesNotMatch` answers of HTTP 403);
/// - `.invalidParameter`: an unknown key (`NotFoundException`, `InvalidArnException`);
/// - `.unsupportedOperation`: a key that cannot sign (`InvalidKeyUsageException`,
///   `DisabledException`, `KMSInvalidStateException`);
/// - `.serverRejected`: any other 4xx, and throttling that outlasted the retries;
/// - `.network`: 5xx after the retries, connection failures, answers that are not the protocol;
///   `.timeout`; `.cancelled`.
package struct AWSKMSClient: Sendable {
    /// Where the service is and how requests are signed and retried.
    package struct Configuration: Sendable {
        /// The endpoint (`https://kms.<region>.amazonaws.com/`, or a stand-in's URL).
        package var endpoint: URL
        /// The SigV4 signer (credentials, region, service `kms`).
        package var signer: SigV4Signer
        /// Seconds per HTTP exchange.
        package var timeout: TimeInterval
        /// Attempts and backoff for throttling, 5xx and connection failures (default: 4 attempts,
        /// 0.2 s doubling to at most 5 s, each with jitter).
        package var retryPolicy: RetryPolicy
        /// Headers sent with every request (and signed), for tests.
        package var additionalHeaders: [(name: String, value: String)]

        /// Creates a configuration; see the properties.
        package init(
            endpoint: URL,
            signer: SigV4Signer,
            timeout: TimeInterval = 30,
            retryPolicy: RetryPolicy = AWSKMSClient.defaultRetryPolicy,
            additionalHeaders: [(name: String, value: String)] = []
        ) {
            self.endpoint = endpoint
            self.signer = signer
            self.timeout = timeout
            self.retryPolicy = retryPolicy
            self.additionalHeaders = additionalHeaders
        }
    }

    /// Four attempts, 0.2 s then 0.4 s then 0.8 s apart (before jitter), on 429 and 5xx.
    package static let defaultRetryPolicy = RetryPolicy(
        maxAttempts: 4,
        initialBackoff: 0.2,
        maxBackoff: 5,
        retryableStatuses: [429, 500, 502, 503, 504]
    )

    /// The configuration in force.
    package let configuration: Configuration
    private let transport: any HTTPTransport

    /// Creates a client; no request is made.
    package init(configuration: Configuration, transport: any HTTPTransport) {
        self.configuration = configuration
        let credentials = configuration.signer.credentials
        self.transport = SecretRedactingTransport(
            transport,
            secrets: [credentials.secretAccessKey, credentials.sessionToken]
        )
    }

    /// `GetPublicKey`: the key's public half, usage and algorithms.
    /// - Parameter keyID: a key ID, key ARN, alias name (`alias/…`) or alias ARN.
    /// - Throws: `.unsupportedOperation` for a key whose `KeyUsage` is not `SIGN_VERIFY`;
    ///   `.malformedInput` for a public key OpenSSL cannot read; as the type's documentation says.
    package func publicKey(keyID: String) async throws -> AWSKMSKeyDescription {
        let reader = try await call("GetPublicKey", ["KeyId": .string(keyID)])
        let spec = try reader.optionalString("KeySpec") ?? reader.optionalString("CustomerMasterKeySpec") ?? ""
        let arn = try reader.optionalString("KeyId") ?? keyID
        let usage = try reader.optionalString("KeyUsage") ?? ""
        guard usage == "SIGN_VERIFY" else {
            throw CertificateProviderError.unsupportedOperation(
                "AWS KMS key \(arn) has KeyUsage \(usage.isEmpty ? "(none)" : usage) and KeySpec \(spec), not "
                    + "SIGN_VERIFY: it cannot sign; use an asymmetric key created with KeyUsage SIGN_VERIFY"
            )
        }
        return try AWSKMSKeyDescription(
            keyID: arn,
            keyUsage: usage,
            keySpec: spec,
            signingAlgorithms: (reader.value("SigningAlgorithms")?.arrayValue ?? []).compactMap(\.stringValue),
            subjectPublicKeyInfo: try reader.base64("PublicKey")
        )
    }

    /// `Sign`: the signature of `message` (a digest with `messageType` `DIGEST`, the message itself
    /// with `RAW`) under `signingAlgorithm`.
    /// - Returns: the signature value (DER `ECDSA-Sig-Value` for ECDSA).
    /// - Throws: as the type's documentation says.
    package func sign(
        keyID: String,
        message: [UInt8],
        messageType: String,
        signingAlgorithm: String
    ) async throws -> [UInt8] {
        let reader = try await call(
            "Sign",
            [
                "KeyId": .string(keyID), "Message": .string(Data(message).base64EncodedString()),
                "MessageType": .string(messageType), "SigningAlgorithm": .string(signingAlgorithm),
            ]
        )
        return try reader.base64("Signature")
    }

    // MARK: Exchange

    /// Sends one action, retrying as the type's documentation says; the answer's JSON object.
    private func call(_ action: String, _ body: JSONValue) async throws -> JSONObjectReader {
        let context = "AWS KMS \(action)"
        let policy = configuration.retryPolicy
        var attempt = 1
        while true {
            var request = HTTPRequest(method: .post, url: configuration.endpoint, timeout: configuration.timeout)
            request.body = try body.jsonBytes()
            request.setHeader("Content-Type", "application/x-amz-json-1.1")
            request.setHeader("X-Amz-Target", "TrentService.\(action)")
            for (name, value) in configuration.additionalHeaders { request.setHeader(name, value) }
            configuration.signer.sign(&request)
            let response: HTTPResponse
            do {
                response = try await CertificateProviderError.convertingHTTPErrors { try await transport.send(request) }
            } catch let error as CertificateProviderError where error.code == .network && attempt < policy.maxAttempts {
                attempt += 1
                try await wait(beforeAttempt: attempt)
                continue
            }
            if response.isSuccess {
                return try JSONObjectReader(try response.json(context: context), context: context, errorCode: .network)
            }
            let failure = AWSKMSServiceError(response: response, action: action, redacting: secretsToRedact())
            if failure.isRetryable, attempt < policy.maxAttempts {
                attempt += 1
                try await wait(beforeAttempt: attempt)
                continue
            }
            throw failure.providerError(attempts: attempt)
        }
    }

    /// The texts cut out of anything the service sends back.
    private func secretsToRedact() -> [String] {
        let credentials = configuration.signer.credentials
        return [credentials.secretAccessKey, credentials.sessionToken].compactMap { secret in
            secret.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
        }.filter { !$0.isEmpty }
    }

    /// Sleeps the policy's backoff before `attempt`, scaled by a random factor in [0.5, 1].
    private func wait(beforeAttempt attempt: Int) async throws {
        let seconds = configuration.retryPolicy.backoff(beforeAttempt: attempt) * Double.random(in: 0.5...1)
        do {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        } catch {
            throw CertificateProviderError(.cancelled, "the AWS KMS request was cancelled while waiting to retry")
        }
    }
}
