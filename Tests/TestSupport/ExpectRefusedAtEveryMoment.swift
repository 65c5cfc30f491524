public import CertificateProviders
public import Testing

/// Expects the parameters `bad` to be refused the same way at each of the three moments parameters
/// reach a provider: its initializer (`make(bad)`), ``CertificateProvider/setParameters(_:)`` (the
/// previous parameters stay in force) and ``CertificateProvider/initialize(options:)``. Each must throw
/// `.invalidParameter`, and the three reasons must be equal.
/// - Parameters:
///   - bad: parameters the provider's schema refuses.
///   - make: makes the provider with the given parameters (called with `bad`, then with none).
/// - Returns: the one reason, for checks of its wording; nil after a recorded issue.
@discardableResult
public func expectRefusedAtEveryMoment<Provider: CertificateProvider>(
    _ bad: ProviderParameters,
    sourceLocation: SourceLocation = #_sourceLocation,
    make: (ProviderParameters) throws -> Provider
) async throws -> String? {
    let atInit = expectError(.invalidParameter, sourceLocation: sourceLocation) { try make(bad) }
    let provider = try make(ProviderParameters())
    let before = provider.parameters
    let atSet = expectError(.invalidParameter, sourceLocation: sourceLocation) { try provider.setParameters(bad) }
    #expect(
        provider.parameters == before,
        "a refused setParameters changed the parameters",
        sourceLocation: sourceLocation
    )
    let atInitialize = await expectError(.invalidParameter, sourceLocation: sourceLocation) {
        try await provider.initialize(options: bad)
    }
    guard let atInit, let atSet, let atInitialize else { return nil }
    #expect(atSet.reason == atInit.reason, "setParameters and init disagree", sourceLocation: sourceLocation)
    #expect(
        atInitialize.reason == atInit.reason,
        "initialize(options:) and init disagree",
        sourceLocation: sourceLocation
    )
    return atInit.reason
}
