internal import CPostgres
import CertificateProviders
import Foundation
import SignatureJournal

/// One libpq result in binary format, cleared in `deinit`.
final class PostgresResult {
    private let handle: OpaquePointer

    init(takingOwnershipOf handle: OpaquePointer) { self.handle = handle }

    deinit { PQclear(handle) }

    /// The number of rows.
    var rows: Int32 { PQntuples(handle) }

    /// The number of rows an INSERT, UPDATE or DELETE changed.
    var changedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    func isNull(_ row: Int32, _ column: Int32) -> Bool { PQgetisnull(handle, row, column) == 1 }

    /// The raw binary value, or nil for NULL.
    func bytes(_ row: Int32, _ column: Int32) -> [UInt8]? {
        guard !isNull(row, column), let value = PQgetvalue(handle, row, column) else { return nil }
        let length = Int(PQgetlength(handle, row, column))
        return value.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    func text(_ row: Int32, _ column: Int32) -> String? {
        bytes(row, column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// An `int8`, `int4` or `int2` column.
    func integer(_ row: Int32, _ column: Int32) -> Int64? {
        guard let bytes = bytes(row, column) else { return nil }
        var value: Int64 = bytes.first.map { $0 & 0x80 != 0 ? -1 : 0 } ?? 0
        for byte in bytes { value = (value << 8) | Int64(byte) }
        return value
    }

    /// A `float8` column.
    func double(_ row: Int32, _ column: Int32) -> Double? {
        guard let bytes = bytes(row, column), bytes.count == 8 else { return nil }
        return Double(bitPattern: bytes.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) })
    }

    /// A `bool` column.
    func bool(_ row: Int32, _ column: Int32) -> Bool? { bytes(row, column).map { $0.first == 1 } }

    /// The SQLSTATE of a failed result.
    var sqlState: String {
        guard let field = PQresultErrorField(handle, Int32(UInt8(ascii: "C"))) else { return "" }
        return String(cString: field)
    }

    /// The error of a failed result, by its SQLSTATE: the server's primary message only (its
    /// detail may quote values), scrubbed.
    func error(location: String, connectionMessage: String) -> CertificateProviderError {
        let primary = PQresultErrorField(handle, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
        let message = PostgresConnection.scrub(primary ?? connectionMessage).trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        let state = sqlState
        switch state {
        case "23505":
            return CertificateProviderError(.alreadyExists, "the PostgreSQL journal \(location): \(message)")
        case "42501":
            return CertificateProviderError(
                .authenticationFailed,
                "the PostgreSQL journal \(location) refused this role: \(message); grant it INSERT, UPDATE, DELETE "
                    + "on the journal's tables, or use a role that may write"
            )
        case "57014", "55P03", "40P01":
            return CertificateProviderError(.timeout, "the PostgreSQL journal \(location): \(message)")
        case "":
            return CertificateProviderError(.network, "the PostgreSQL journal \(location): \(message)")
        default:
            if state.hasPrefix("08") || state.hasPrefix("57P") {
                return CertificateProviderError(.network, "the PostgreSQL journal \(location): \(message)")
            }
            return CertificateProviderError(
                .serverRejected,
                "the PostgreSQL journal \(location) refused a statement (SQLSTATE \(state)): \(message)"
            )
        }
    }
}

/// A parameter of a statement, sent in binary.
enum PostgresValue {
    case null(Oid)
    case integer(Int64)
    case double(Double)
    case text(String)
    case bytes([UInt8])
    case bool(Bool)

    /// The parameter's type OID (`int8`, `float8`, `text`, `bytea`, `bool`).
    var type: Oid {
        switch self {
        case .null(let type): return type
        case .integer: return 20
        case .double: return 701
        case .text: return 25
        case .bytes: return 17
        case .bool: return 16
        }
    }

    /// The binary wire form (nil for NULL).
    var binary: [UInt8]? {
        switch self {
        case .null: return nil
        case .integer(let value): return withUnsafeBytes(of: value.bigEndian) { Array($0) }
        case .double(let value): return withUnsafeBytes(of: value.bitPattern.bigEndian) { Array($0) }
        case .text(let value): return Array(value.utf8)
        case .bytes(let value): return value
        case .bool(let value): return [value ? 1 : 0]
        }
    }

    static let textType: Oid = 25
    static let integerType: Oid = 20
    static let doubleType: Oid = 701
    static let bytesType: Oid = 17
    static let boolType: Oid = 16
}
