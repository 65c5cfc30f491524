import CertificateProvidersTesting
public import EmulatorKit
public import Foundation

/// One emulator seed (users, certificates and keys made once per test process) shared by every test
/// target that starts an emulator.
public let sharedSeed: EmulatorSeed = {
    do { return try EmulatorSeed.standard() } catch { fatalError("cannot build the emulator seed: \(error)") }
}()

/// Starts an emulator with `configuration` and `seed` on an ephemeral loopback port for the duration
/// of `body`, which gets the emulator and its base URL; stops it however `body` ends.
public func withEmulator<R>(
    _ configuration: DSSEmulator.Configuration = .init(),
    seed: EmulatorSeed = sharedSeed,
    _ body: (DSSEmulator, URL) async throws -> R
) async throws -> R {
    let emulator = try DSSEmulator(configuration: configuration, seed: seed)
    let url = try emulator.start()
    defer { emulator.stop() }
    return try await body(emulator, url)
}

/// Starts an emulator (default configuration, the shared seed) on a loopback port and makes a fresh
/// certsign store for the duration of `body`; stops the emulator however `body` ends.
public func withEmulatorAndStore<R>(_ body: (DSSEmulator, URL, TemporaryDirectory) throws -> R) throws -> R {
    let emulator = try DSSEmulator(seed: sharedSeed)
    let url = try emulator.start()
    defer { emulator.stop() }
    return try body(emulator, url, try TemporaryDirectory())
}
