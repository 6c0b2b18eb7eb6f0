#if Logging  // the whole module: without its package trait, only TraitCheck.swift's error

// `Redaction` moved down to `Runway`, so the HAR recorder (RunwayHAR) hides exactly what the log
// hides without linking swift-log. Re-exported here, so code that imports RunwayLogging alone
// still names it.
@_exported import struct Runway.Redaction

#endif
