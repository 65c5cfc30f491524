/// What a certification signature lets later revisions of the document change: the DocMDP
/// transform's `/P` (ISO 32000-1 12.8.2.2). Validation data (`/DSS`, document timestamps) may be
/// added under every level.
///
/// A certification signature is the document's first signature; its author fixes with it what
/// later signers may do:
///
/// ```swift
/// var options = PDFSignatureOptions(reason: "Issued")
/// options.certification = .fillForms
/// ```
public enum PDFDocMDPPermission: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `/P 1`: no change at all; no later signature (it would invalidate the certification).
    case noChanges = 1
    /// `/P 2`: filling in form fields and signing (approval signatures in signature fields).
    case fillForms = 2
    /// `/P 3`: as ``fillForms``, and adding, changing or deleting annotations.
    case annotate = 3

    /// `P=1 (no changes)`, `P=2 (form filling and signing)`, `P=3 (… and annotations)`.
    public var description: String {
        switch self {
        case .noChanges: return "P=1 (no changes)"
        case .fillForms: return "P=2 (form filling and signing)"
        case .annotate: return "P=3 (form filling, signing and annotations)"
        }
    }
}
