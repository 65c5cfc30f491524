import Foundation
public import Validation

extension TrustedListSet {
    /// `result` with each valid signer whose chain ends at a trusted-list CA service judged by that
    /// service's status at the time the chain was checked at (the signer's `checkedAt`: a signature
    /// timestamp's time when one proves it, else the validation time): a service not granted then
    /// makes the signer INDETERMINATE (`untrustedSigner`, NO_CERTIFICATE_CHAIN_FOUND) with the reason.
    /// A service withdrawn in 2024 still anchors a signature proven to exist in 2023. Signers whose
    /// anchor is not a service of these lists are left as they are.
    public func judge(_ result: VerificationResult) -> VerificationResult {
        let judged = result.signers.map { signer -> SignerVerification in
            guard signer.isValid, signer.chainChecked, let anchor = signer.chain.last,
                let (service, list) = service(anchoring: anchor)
            else { return signer }
            let time = signer.checkedAt ?? result.validationTime
            let status = service.status(at: time)
            guard status != .granted else { return signer }
            let since = service.periods.last { $0.contains(time) }.map { " since \(TrustedList.isoText($0.start))" }
            let reason =
                "the chain's anchor is the trusted-list service \"\(service.name)\" (\(list.territory), \(list.name)), "
                + "\(status.map { "\($0)" } ?? "not yet listed")\(since ?? "") and so not granted at "
                + "\(TrustedList.isoText(time)), the time the chain was checked at"
            return signer.replacingFailure(VerificationFailure(.untrustedSigner, reason))
        }
        return result.replacingSigners(judged)
    }

    /// The trusted-list service that anchors `signer`'s verified chain, when one does.
    public func anchoringService(of signer: SignerVerification) -> TrustService? {
        guard signer.chainChecked, let anchor = signer.chain.last else { return nil }
        return service(anchoring: anchor)?.service
    }
}
