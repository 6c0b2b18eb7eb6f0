// The Benchmarks package's own view of the system SQLite (pkg-config sqlite3), independent of
// Runway's targets: the hand-written logger the action log is compared with.
#include <sqlite3.h>
