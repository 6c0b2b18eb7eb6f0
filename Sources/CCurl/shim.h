#ifndef RUNWAY_CCURL_SHIM_H
#define RUNWAY_CCURL_SHIM_H

// Typed wrappers over libcurl's variadic calls (curl_easy_setopt, curl_easy_getinfo,
// curl_multi_setopt, curl_share_setopt), which Swift cannot call directly, and over CURLMsg's union; on Linux,
// over epoll's packed event struct for the dispatcher's loop, and over prctl to name its thread.

#include <curl/curl.h>

typedef size_t (*runway_curl_data_callback)(char *data, size_t size, size_t count, void *user);
typedef int (*runway_curl_progress_callback)(void *user, curl_off_t dltotal, curl_off_t dlnow,
                                             curl_off_t ultotal, curl_off_t ulnow);

#include <pthread.h>
#include <stdlib.h>

// A share handle for one dispatcher's TLS session cache, with a mutex for each kind of data
// libcurl may lock (easy handles are set up on callers' threads and run on the loop's).
typedef struct runway_share {
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
} runway_share;

static inline void runway_share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *user) {
    (void)handle;
    (void)access;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST) pthread_mutex_lock(&((runway_share *)user)->locks[data]);
}

static inline void runway_share_unlock(CURL *handle, curl_lock_data data, void *user) {
    (void)handle;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST) pthread_mutex_unlock(&((runway_share *)user)->locks[data]);
}

// NULL when libcurl or the system refuses one: transfers then keep sessions to themselves.
static inline runway_share *runway_share_new(void) {
    runway_share *made = calloc(1, sizeof(runway_share));
    if (!made) return NULL;
    for (int index = 0; index < CURL_LOCK_DATA_LAST; index++) pthread_mutex_init(&made->locks[index], NULL);
    made->share = curl_share_init();
    if (!made->share || curl_share_setopt(made->share, CURLSHOPT_LOCKFUNC, runway_share_lock) != CURLSHE_OK
        || curl_share_setopt(made->share, CURLSHOPT_UNLOCKFUNC, runway_share_unlock) != CURLSHE_OK
        || curl_share_setopt(made->share, CURLSHOPT_USERDATA, made) != CURLSHE_OK
        || curl_share_setopt(made->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
        if (made->share) curl_share_cleanup(made->share);
        for (int index = 0; index < CURL_LOCK_DATA_LAST; index++) pthread_mutex_destroy(&made->locks[index]);
        free(made);
        return NULL;
    }
    return made;
}

// Frees the share once no easy handle uses it; one still in use (a handle never freed) is kept.
static inline void runway_share_free(runway_share *share) {
    if (!share || curl_share_cleanup(share->share) != CURLSHE_OK) return;
    for (int index = 0; index < CURL_LOCK_DATA_LAST; index++) pthread_mutex_destroy(&share->locks[index]);
    free(share);
}

static inline CURLcode runway_easy_setopt_share(CURL *handle, runway_share *share) {
    return curl_easy_setopt(handle, CURLOPT_SHARE, share ? share->share : NULL);
}

static inline CURLcode runway_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode runway_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode runway_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode runway_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode runway_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode runway_easy_setopt_curlu(CURL *handle, CURLU *url) {
    return curl_easy_setopt(handle, CURLOPT_CURLU, url);
}

static inline CURLcode runway_easy_setopt_blob(CURL *handle, CURLoption option, void *data, size_t length) {
    struct curl_blob blob;
    blob.data = data;
    blob.len = length;
    blob.flags = CURL_BLOB_COPY;
    return curl_easy_setopt(handle, option, &blob);
}

static inline CURLcode runway_easy_setopt_data_callback(CURL *handle, CURLoption option, runway_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

typedef int (*runway_curl_prereq_callback)(void *user, char *primaryIP, char *localIP, int primaryPort, int localPort);

/// The callback libcurl calls before it sends a request on a connection, new or reused: once per
/// request it sends, so also before it sends one again on its own.
static inline CURLcode runway_easy_setopt_prereq_callback(CURL *handle, runway_curl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

static inline CURLcode runway_easy_setopt_progress_callback(CURL *handle, runway_curl_progress_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

/// Lets a transfer whose write callback returned CURL_WRITEFUNC_PAUSE receive again (a streamed
/// response body once its reader has drained the buffer). Only on the thread driving the multi handle.
static inline CURLcode runway_easy_unpause(CURL *handle) {
    return curl_easy_pause(handle, CURLPAUSE_CONT);
}

/// What a write callback returns to pause the transfer (the chunk is offered again on unpause).
static inline size_t runway_writefunc_pause(void) {
    return CURL_WRITEFUNC_PAUSE;
}

/// What a read callback returns to pause the upload (it is asked again on unpause), or to abort it.
static inline size_t runway_readfunc_pause(void) {
    return CURL_READFUNC_PAUSE;
}

static inline size_t runway_readfunc_abort(void) {
    return CURL_READFUNC_ABORT;
}

typedef int (*runway_curl_seek_callback)(void *user, curl_off_t offset, int origin);

/// The callback libcurl calls to start a streamed request body over (a send on a new connection, a
/// 307/308 redirect): CURL_SEEKFUNC_OK, or CURL_SEEKFUNC_CANTSEEK to fail the transfer.
static inline CURLcode runway_easy_setopt_seek_callback(CURL *handle, runway_curl_seek_callback callback, void *user) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_SEEKDATA, user);
}

static inline CURLcode runway_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode runway_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode runway_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode runway_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode runway_easy_getinfo_socket(CURL *handle, CURLINFO info, curl_socket_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode runway_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

static inline CURLcode runway_msg_result(const CURLMsg *message) {
    return message->data.result;
}

static inline curl_version_info_data *runway_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

// The multi handle's socket interface (curl_multi_socket_action): libcurl says which sockets
// to watch through these two callbacks, the loop waits on them itself.
typedef int (*runway_socket_callback)(CURL *easy, curl_socket_t socket, int what, void *user, void *socketUser);
typedef int (*runway_timer_callback)(CURLM *multi, long timeoutMilliseconds, void *user);
typedef int (*runway_closesocket_callback)(void *user, curl_socket_t socket);
typedef curl_socket_t (*runway_opensocket_callback)(void *user, curlsocktype purpose, struct curl_sockaddr *address);

static inline CURLMcode runway_multi_setopt_socket_callback(CURLM *handle, runway_socket_callback value, void *user) {
    CURLMcode code = curl_multi_setopt(handle, CURLMOPT_SOCKETFUNCTION, value);
    return code != CURLM_OK ? code : curl_multi_setopt(handle, CURLMOPT_SOCKETDATA, user);
}

static inline CURLMcode runway_multi_setopt_timer_callback(CURLM *handle, runway_timer_callback value, void *user) {
    CURLMcode code = curl_multi_setopt(handle, CURLMOPT_TIMERFUNCTION, value);
    return code != CURLM_OK ? code : curl_multi_setopt(handle, CURLMOPT_TIMERDATA, user);
}

/// Both socket callbacks at once: the loop sees every connection socket opened and closed.
static inline CURLcode runway_easy_setopt_socket_callbacks(CURL *handle, runway_opensocket_callback open,
                                                          runway_closesocket_callback close, void *user) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, open);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, user);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, close);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_CLOSESOCKETDATA, user);
    return code;
}

#ifdef __linux__
#include <sys/epoll.h>

// epoll_event is packed on x86-64, which Swift does not import field by field.
static inline int runway_epoll_ctl(int epoll, int operation, int fd, unsigned int events) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = 0;
    event.data.fd = fd;
    return epoll_ctl(epoll, operation, fd, &event);
}

/// Waits like epoll_wait and copies out the descriptors and their events (at most 64).
static inline int runway_epoll_wait(int epoll, int *fds, unsigned int *events, int capacity, int timeoutMilliseconds) {
    struct epoll_event ready[64];
    int count = epoll_wait(epoll, ready, capacity < 64 ? capacity : 64, timeoutMilliseconds);
    for (int i = 0; i < count; i++) {
        fds[i] = ready[i].data.fd;
        events[i] = ready[i].events;
    }
    return count;
}

#include <sys/prctl.h>

// Names the calling thread (at most 15 bytes are kept), as pthread_setname_np does; that one is
// declared only with _GNU_SOURCE, which a shim included after curl.h cannot set.
static inline void runway_name_this_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

#include <sys/syscall.h>

// The calling thread's kernel ID (its /proc/self/task entry), for tests.
static inline long runway_thread_id(void) {
    return syscall(SYS_gettid);
}
#endif

#endif
