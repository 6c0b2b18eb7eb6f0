#ifndef RUNWAY_CCURL_SHIM_H
#define RUNWAY_CCURL_SHIM_H

// Typed wrappers over libcurl's variadic calls (curl_easy_setopt, curl_easy_getinfo,
// curl_multi_setopt), which Swift cannot call directly, and over CURLMsg's union.

#include <curl/curl.h>

typedef size_t (*runway_curl_data_callback)(char *data, size_t size, size_t count, void *user);
typedef int (*runway_curl_progress_callback)(void *user, curl_off_t dltotal, curl_off_t dlnow,
                                             curl_off_t ultotal, curl_off_t ulnow);

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

static inline CURLcode runway_easy_setopt_progress_callback(CURL *handle, runway_curl_progress_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
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

static inline CURLMcode runway_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

static inline CURLcode runway_msg_result(const CURLMsg *message) {
    return message->data.result;
}

static inline curl_version_info_data *runway_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

#endif
