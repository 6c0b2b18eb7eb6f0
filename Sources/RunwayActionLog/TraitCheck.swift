// RunwayActionLog links a package of its own, which SwiftPM resolves only for apps that enable the
// package trait "ActionLog".
#if !ActionLog
#error("RunwayActionLog needs the package trait \"ActionLog\": .package(url: ..., from: ..., traits: [\"ActionLog\"])")
#endif
