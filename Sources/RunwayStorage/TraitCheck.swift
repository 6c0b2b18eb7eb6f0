// RunwayStorage is built on GRDB, which SwiftPM resolves only for apps that enable the package
// trait "Cache" or "ActionLog" (the two products built on this module).
#if !Cache && !ActionLog
#error("RunwayStorage is built for RunwayCache and RunwayActionLog: enable the package trait \"Cache\" or \"ActionLog\"")
#endif
