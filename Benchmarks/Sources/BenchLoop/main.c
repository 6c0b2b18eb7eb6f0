// The libcurl loop: the limit every client is measured against.
//
// One thread, one multi handle, curl_multi_perform + curl_multi_poll. Each completed transfer is
// replaced by the next right in the completion handling, on the same thread: no other thread,
// no queue, no wake-up. Easy handles are reused (libcurl keeps their connections alive).
//
//   bench-loop --url URL --c 16 --n 20000 [--ca FILE] [--h2] [--gzip] [--expect-bytes N] [--label S]
//
// Prints one JSON line: req/s, client CPU µs per request (getrusage, the timed part only),
// p50/p99 latency in µs, peak RSS in MB (ru_maxrss).
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef struct {
    CURL *easy;
    size_t bytes;
    double started;
} Slot;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static double cpu_us(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    (void)data;
    ((Slot *)user)->bytes += size * count;
    return size * count;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *url = NULL, *ca = NULL, *label = "plain";
static int h2 = 0, gzip = 0;
static long expect_bytes = -1;

static void configure(Slot *slot) {
    CURL *e = slot->easy;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, slot);
    curl_easy_setopt(e, CURLOPT_PRIVATE, slot);
    if (gzip) curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "gzip");
    if (ca) curl_easy_setopt(e, CURLOPT_CAINFO, ca);
    if (h2) {
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    } else {
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    }
}

// Runs `total` transfers with `c` in flight; records each latency into `latencies` if given.
static void run(CURLM *multi, Slot *slots, int c, long total, double *latencies) {
    long started = 0, done = 0;
    for (int i = 0; i < c && started < total; i++, started++) {
        slots[i].bytes = 0;
        slots[i].started = now_us();
        curl_multi_add_handle(multi, slots[i].easy);
    }
    int running = 0;
    while (done < total) {
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        int left;
        while ((message = curl_multi_info_read(multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            Slot *slot;
            curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&slot);
            long status = 0;
            curl_easy_getinfo(slot->easy, CURLINFO_RESPONSE_CODE, &status);
            if (message->data.result != CURLE_OK || status != 200 ||
                (expect_bytes >= 0 && (long)slot->bytes != expect_bytes)) {
                fprintf(stderr, "loop: transfer failed: %s, status %ld, %zu bytes\n",
                        curl_easy_strerror(message->data.result), status, slot->bytes);
                exit(1);
            }
            if (latencies) latencies[done] = now_us() - slot->started;
            done++;
            curl_multi_remove_handle(multi, slot->easy);
            if (started < total) {
                started++;
                slot->bytes = 0;
                slot->started = now_us();
                curl_multi_add_handle(multi, slot->easy);
            }
        }
        if (done < total) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
}

int main(int argc, char **argv) {
    int c = 16;
    long n = 20000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--url")) url = v, i++;
        else if (!strcmp(a, "--c")) c = atoi(v), i++;
        else if (!strcmp(a, "--n")) n = atol(v), i++;
        else if (!strcmp(a, "--ca")) ca = v, i++;
        else if (!strcmp(a, "--label")) label = v, i++;
        else if (!strcmp(a, "--expect-bytes")) expect_bytes = atol(v), i++;
        else if (!strcmp(a, "--h2")) h2 = 1;
        else if (!strcmp(a, "--gzip")) gzip = 1;
        else { fprintf(stderr, "unknown argument %s\n", a); return 2; }
    }
    if (!url || c < 1 || n < c) { fprintf(stderr, "usage: bench-loop --url URL [--c C] [--n N] ...\n"); return 2; }

    curl_global_init(CURL_GLOBAL_ALL);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)c);
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    Slot *slots = calloc(c, sizeof(Slot));
    for (int i = 0; i < c; i++) {
        slots[i].easy = curl_easy_init();
        configure(&slots[i]);
    }
    // Warm-up: open the connections and fill libcurl's caches, untimed.
    run(multi, slots, c, c * 20L, NULL);

    double *latencies = malloc(n * sizeof(double));
    double cpu0 = cpu_us(), t0 = now_us();
    run(multi, slots, c, n, latencies);
    double t1 = now_us(), cpu1 = cpu_us();

    qsort(latencies, n, sizeof(double), by_value);
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    printf("{\"client\":\"loop\",\"scenario\":\"%s\",\"c\":%d,\"n\":%ld,\"rps\":%.1f,\"cpu_us\":%.2f,"
           "\"p50_us\":%.1f,\"p99_us\":%.1f,\"rss_mb\":%.1f}\n",
           label, c, n, n / ((t1 - t0) / 1e6), (cpu1 - cpu0) / n, latencies[n / 2],
           latencies[(long)(n * 0.99)], u.ru_maxrss / 1024.0);
    return 0;
}
