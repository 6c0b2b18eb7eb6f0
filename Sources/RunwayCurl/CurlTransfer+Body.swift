import RunwayCompression
import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The response body on the loop thread, as it arrives (inflated there when the loop decodes),
// and the guard on sending a request twice.
extension CurlTransfer {
    /// A chunk of the body as sent; returns false to abort the transfer.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !bodyStarted {
            bodyStarted = true
            // Before the download file opens: a body that cannot be decoded leaves none.
            guard startInflating() else { return false }
            if request.download != nil, (200..<300).contains(status) {
                guard startDownload() else { return false }
            } else if let length = contentLength, length <= maxResponseSize, contentEncoding == nil {
                body.reserveCapacity(length)
            }
        }
        guard !inflaters.isEmpty else { return store(bytes) }
        return inflate(bytes, layer: 0)
    }

    /// Makes the inflaters for the response's `Content-Encoding`, when the loop inflates.
    private func startInflating() -> Bool {
        guard inflatesOnLoop, let header = contentEncoding else { return true }
        var layers: [Inflater] = []
        // Listed in the order they were applied: undone last to first.
        for token in header.split(separator: ",").reversed() {
            let encoding = token.trimmingBlanks()
            if encoding.isEmpty || encoding.lowercased() == "identity" { continue }
            guard let inflater = Inflater(encoding: encoding) else {
                // What the caller asked for itself is theirs to undo: the body as sent.
                if asksOwnEncodings { return true }
                failure = RunwayError(
                    .responseInvalid,
                    "the response is \(encoding)-encoded, which was not asked for (Accept-Encoding: \(ResponseDecoder.acceptEncoding))")
                return false
            }
            layers.append(inflater)
        }
        inflaters = layers
        return true
    }

    /// Undoes encoding `layer` of `bytes` and passes the result on to the next layer, or stores it.
    private func inflate(_ bytes: UnsafeRawBufferPointer, layer: Int) -> Bool {
        do {
            return try inflaters[layer].feed(bytes) { decoded in
                layer + 1 < inflaters.count ? inflate(decoded, layer: layer + 1) : store(decoded)
            }
        } catch {
            failure = RunwayError(.responseInvalid, "the response body cannot be decoded: \(error)", underlying: error)
            return false
        }
    }

    /// The error for a body whose encoded stream ended early, if it did.
    func unfinishedEncoding() -> RunwayError? {
        for inflater in inflaters {
            do {
                try inflater.finish()
            } catch {
                return RunwayError(
                    .responseInvalid, "the response body ends before its encoded stream does (truncated): \(error)", underlying: error)
            }
        }
        return nil
    }

    /// Keeps a chunk of the (decoded) body: in the download file, or in memory up to the limit.
    private func store(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if bodyGoesToFile {
            // Downloads stream to disk, so the in-memory limit does not apply to them.
            return writeAll(bytes)
        }
        let limit = maxResponseSize
        guard body.count + bytes.count <= limit else {
            failure = RunwayError(.responseTooLarge, "response body is over the \(limit)-byte limit (counted after decompression)")
            return false
        }
        body.append(bytes.assumingMemoryBound(to: UInt8.self))
        return true
    }

    /// Whether libcurl may start sending the request (the pre-request callback, called before
    /// each send, on a new or a reused connection): the first time, and again only when a
    /// response asked for it since the last send (a 307 or 308 redirect, an authentication
    /// challenge). libcurl also sends a request again on a new connection when the reused one
    /// died before answering, and that is refused (the server may have the request already),
    /// unless a redirect has made it a GET.
    func mayStartRequest() -> Bool {
        guard sends == 0 || answeredSinceSent || redirectedAsGET else {
            refusedResend = true
            return false
        }
        sends += 1
        answeredSinceSent = false
        return true
    }
}
