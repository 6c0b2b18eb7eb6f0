import CCurl
import Foundation

/// The baseline: libcurl's multi interface driven from Swift with nothing on top — one thread,
/// a locked hand-over queue, recycled easy handles, the body collected in memory. No chain,
/// no header parsing, no timings. What Runway's dispatcher is measured against.
///
/// `@unchecked Sendable`: `queue` is guarded by `lock`; everything else is touched only by
/// the loop thread.
final class RawCurlMulti: @unchecked Sendable {
    final class Job: @unchecked Sendable {
        let url: String
        let caFile: String?
        let http1Only: Bool
        var body = Data()
        var continuation: CheckedContinuation<Int, any Error>?
        init(url: String, caFile: String?, http1Only: Bool) {
            self.url = url
            self.caFile = caFile
            self.http1Only = http1Only
        }
    }

    private let multi: UnsafeMutableRawPointer
    private let lock = NSLock()
    private var queue: [Job] = []
    private var active: [UnsafeMutableRawPointer: Job] = [:]
    private var idle: [UnsafeMutableRawPointer] = []

    init(maxConnectionsPerHost: Int) {
        curl_global_init(Int(CURL_GLOBAL_ALL))
        multi = curl_multi_init()
        runway_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        runway_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let thread = Thread { [self] in loop() }
        thread.start()
    }

    func get(_ url: String, caFile: String? = nil, http1Only: Bool = false) async throws -> Int {
        let job = Job(url: url, caFile: caFile, http1Only: http1Only)
        return try await withCheckedThrowingContinuation { continuation in
            job.continuation = continuation
            lock.withLock { queue.append(job) }
            curl_multi_wakeup(multi)
        }
    }

    private func loop() {
        var running: Int32 = 0
        while true {
            let jobs = lock.withLock {
                let jobs = queue
                queue = []
                return jobs
            }
            for job in jobs {
                let easy = idle.popLast() ?? curl_easy_init()!
                runway_easy_setopt_string(easy, CURLOPT_URL, job.url)
                runway_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
                runway_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "")
                runway_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, rawWrite)
                runway_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(job).toOpaque())
                if let ca = job.caFile {
                    runway_easy_setopt_string(easy, CURLOPT_CAINFO, ca)
                    runway_easy_setopt_long(easy, CURLOPT_PIPEWAIT, job.http1Only ? 0 : 1)
                }
                if job.http1Only {
                    runway_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
                }
                active[easy] = job
                curl_multi_add_handle(multi, easy)
            }
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let job = active.removeValue(forKey: easy)
                else { continue }
                let code = runway_msg_result(message)
                curl_multi_remove_handle(multi, easy)
                curl_easy_reset(easy)
                idle.append(easy)
                if code == CURLE_OK {
                    job.continuation?.resume(returning: job.body.count)
                } else {
                    job.continuation?.resume(throwing: NSError(domain: "curl", code: Int(code.rawValue)))
                }
            }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }
}

private let rawWrite: runway_curl_data_callback = { data, size, count, user in
    let job = Unmanaged<RawCurlMulti.Job>.fromOpaque(user!).takeUnretainedValue()
    job.body.append(UnsafeRawBufferPointer(start: data, count: size * count).assumingMemoryBound(to: UInt8.self))
    return size * count
}
