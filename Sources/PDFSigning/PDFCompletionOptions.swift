public import Signing

/// What completing a prepared PAdES signature adds, and how it writes (see
/// ``PDFSigner/complete(_:signatureValue:pdfAt:writingTo:options:)``). The field, reason, time and
/// digest were fixed when it was prepared.
public struct PDFCompletionOptions: Sendable {
    /// The TSA that timestamps the signature (B-T: a signature timestamp token in the CMS). Its
    /// token must fit the room reserved when the signature was prepared: name the same authority in
    /// the preparing ``PDFSignatureOptions/timestampAuthority`` (or give a large enough
    /// ``PDFSignatureOptions/reservedSize``). Default nil: B-B.
    public var timestampAuthority: TimestampAuthorityClient?
    /// B-LT or B-LTA after signing: a `/DSS` revision and document timestamps, as for a one-call
    /// signature. Default nil: the signature as made (B-B or B-T).
    public var longTerm: PAdESLevelUpgrade?
    /// Whether an existing output file (other than the input) is replaced, atomically. Default
    /// false: an existing output is refused with `.alreadyExists`.
    public var replacesExistingOutput: Bool

    /// Creates options; every parameter defaults to the value documented on its property.
    public init(
        timestampAuthority: TimestampAuthorityClient? = nil,
        longTerm: PAdESLevelUpgrade? = nil,
        replacesExistingOutput: Bool = false
    ) {
        self.timestampAuthority = timestampAuthority
        self.longTerm = longTerm
        self.replacesExistingOutput = replacesExistingOutput
    }

    /// The level a completion with these options reaches: B-B, B-T (with a TSA), or the long-term one.
    public var level: SignatureLevel {
        longTerm?.level ?? (timestampAuthority == nil ? .bB : .bT)
    }
}
