// The Benchmarks package's own view of the system libcurl (pkg-config libcurl), independent of
// Runway's targets.
#include <curl/curl.h>
