public import CertificateProviders
import Foundation

/// A baseline level of ETSI EN 319 122-1 (CAdES) and EN 319 142-1 (PAdES): an open set of values.
public struct SignatureLevel: Hashable, Sendable, CustomStringConvertible {
    /// The level as the command line writes it: `b-b`, `b-t`, `b-lt`, `b-lta`.
    public let rawValue: String
    /// Its rank: B-B 0, B-T 1, B-LT 2, B-LTA 3.
    public let rank: Int

    private init(_ rawValue: String, rank: Int) {
        self.rawValue = rawValue
        self.rank = rank
    }

    /// B-B: the signature alone.
    public static let bB = SignatureLevel("b-b", rank: 0)
    /// B-T: with a signature timestamp.
    public static let bT = SignatureLevel("b-t", rank: 1)
    /// B-LT: B-T with the validation data of every path (certificates, OCSP, CRLs).
    public static let bLT = SignatureLevel("b-lt", rank: 2)
    /// B-LTA: B-LT with an archive timestamp over it all.
    public static let bLTA = SignatureLevel("b-lta", rank: 3)

    /// Every level, lowest first.
    public static let all: [SignatureLevel] = [.bB, .bT, .bLT, .bLTA]

    /// The level named `text` (`b-lt`, `B-LT`), or nil.
    public init?(_ text: String) {
        guard let level = Self.all.first(where: { $0.rawValue == text.lowercased() }) else { return nil }
        self = level
    }

    /// `B-LT`.
    public var description: String { rawValue.uppercased() }

    /// Throws unless this is B-LT or B-LTA.
    /// - Parameter belowHint: how a lower level is made instead (for the message).
    /// - Throws: `.invalidParameter` for B-B and B-T.
    package func requireLongTerm(belowHint: String) throws {
        guard rank < SignatureLevel.bLT.rank else { return }
        throw CertificateProviderError(.invalidParameter, "\(self) is not a long-term level: \(belowHint)")
    }

    /// The CAdES format of a signature at this level: CAdES-BES, CAdES-T, CAdES-LT, CAdES-LTA.
    public var cadesFormat: SignatureFormat {
        switch rank {
        case 0: .cadesBES
        case 1: .cadesT
        case 2: .cadesLT
        default: .cadesLTA
        }
    }
}

extension SignatureFormat {
    /// CAdES B-LT: CAdES-T whose SignedData carries the certificates and revocation answers (CRLs,
    /// RFC 5940 OCSP responses) of the signer's and the TSAs' paths (ETSI EN 319 122-1 §5.5.3).
    public static let cadesLT = SignatureFormat("cades-lt")
    /// CAdES B-LTA: CAdES-LT with an `archive-time-stamp-v3` over it (ETSI EN 319 122-1 §5.5.3).
    public static let cadesLTA = SignatureFormat("cades-lta")
}
