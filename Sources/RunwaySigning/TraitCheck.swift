// RunwaySigning links a package of its own, which SwiftPM resolves only for apps that enable the
// package trait "Signing".
#if !Signing
#error("RunwaySigning needs the package trait \"Signing\": .package(url: ..., from: ..., traits: [\"Signing\"])")
#endif
