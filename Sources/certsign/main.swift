// certsign: until the CLI issue lands this executable lists the providers a default registry holds.
import CertificateProviders

let registry = ProviderRegistry()
print("certsign: registered providers (\(registry.registeredIDs.count)):")
for registration in registry.registrationsByID {
    print("  \(registration.id)  \(registration.description)")
}
if registry.registeredIDs.isEmpty {
    print("  (none yet: the PKCS#12, FMP DSS and CryptoPro DSS providers register here as they land)")
}
