import CertificateProviders
import CryptoProDSSProvider
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport

/// The remote clients' response decoding: the `package` decoders `FMPClient` and
/// `CryptoProDSSClient` call on every answer, plus the public envelope and seed helpers.
/// Synchronous on purpose: an async round trip through the actors frees task memory after the
/// input returns, which makes libFuzzer's per-input leak check run (and slow down) on every input.
///
/// Input layout: byte 0 picks the answer being decoded (low 3 bits) and the HTTP status (high 4
/// bits, an index into ``statuses``); the rest is the response body.
enum ClientTargets {
    static let statuses = [200, 200, 200, 201, 400, 401, 403, 404, 409, 500, 502, 204, 200, 200, 200, 299]

    private static func response(_ input: [UInt8]) -> (answer: Int, response: HTTPResponse) {
        let first = input.first ?? 0
        let response = HTTPResponse(
            status: statuses[Int(first >> 4)],
            headers: [("Content-Type", "application/json")],
            body: Array(input.dropFirst())
        )
        return (Int(first & 7), response)
    }

    static func fmp(_ input: [UInt8]) -> String {
        let (answer, response) = response(input)
        do {
            // As FMPClient.call: a success must be JSON; an error body is read when it is.
            let raw: JSONValue? =
                response.isSuccess ? try response.json(context: "FMP fuzz") : try? JSONValue(parsing: response.body)
            let envelope = FMPEnvelope(response: response, raw: raw)
            _ = envelope.jsonValue
            _ = FMPClient.signatureID(from: envelope)
            _ = FMPClient.responseStatus(from: envelope)
            guard response.isSuccess, let raw else { return "error envelope: \(envelope.errors.map(\.code))" }
            switch answer {
            case 0:
                let reader = try FMPClient.decodeTokens(response, context: "FMP auth")
                return
                    "tokens: \(try reader.string("token").count), \(try reader.string("refresh_token").count) characters"
            case 1:
                return "\(try FMPClient.decodeCertificates(raw).map(\.certificate.description))"
            case 2:
                return "signature \(try FMPClient.decodeSignResult(raw))"
            case 3:
                return "\(try FMPClient.decodeSigns(raw).map(\.signature.count)) signature bytes"
            default:
                return "envelope status \(envelope.status)"
            }
        } catch {
            return "\(error)"
        }
    }

    static func cryptoPro(_ input: [UInt8]) -> String {
        let (answer, response) = response(input)
        let message = CryptoProDSSClient.serverMessage(response)
        guard response.isSuccess else { return "error\(message)" }
        do {
            switch answer % 3 {
            case 0:
                let token = try CryptoProDSSClient.decodeToken(response, issuedAt: Date())
                return "token until \(token.expiresAt)"
            case 1:
                var cache: [String: Certificate] = [:]
                let json = try response.json(context: "CryptoPro DSS certificates")
                let first = try CryptoProDSSClient.decodeCertificates(json, cache: &cache)
                // A second decode takes the cached path.
                let second = try CryptoProDSSClient.decodeCertificates(json, cache: &cache)
                return "\(first.count) + \(second.count) certificates: \(first.map(\.certificate.description))"
            default:
                return
                    "\(try CryptoProDSSClient.decodeSignature(try response.json(context: "CryptoPro DSS sign")).count) signature bytes"
            }
        } catch {
            return "\(error)"
        }
    }
}
