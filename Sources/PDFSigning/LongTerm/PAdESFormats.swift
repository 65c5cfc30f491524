public import CertificateProviders
public import Signing

extension SignatureFormat {
    /// PAdES B-B: a CAdES signature in a PDF signature field (ETSI EN 319 142-1), as the journal
    /// names the rows of `sign --format pades`.
    public static let pades = SignatureFormat("pades")
    /// PAdES B-T: B-B with a signature timestamp (or a document timestamp after it).
    public static let padesT = SignatureFormat("pades-t")
    /// PAdES B-LT: B-T with the validation data of its paths in the document security store.
    public static let padesLT = SignatureFormat("pades-lt")
    /// PAdES B-LTA: B-LT with a document timestamp over it.
    public static let padesLTA = SignatureFormat("pades-lta")
}

extension SignatureLevel {
    /// The PAdES format of a signature at this level: ``SignatureFormat/pades``, `pades-t`,
    /// `pades-lt`, `pades-lta` (the journal's names, beside ``cadesFormat``).
    public var padesFormat: SignatureFormat {
        switch self {
        case .bB: .pades
        case .bT: .padesT
        case .bLT: .padesLT
        default: .padesLTA
        }
    }
}
