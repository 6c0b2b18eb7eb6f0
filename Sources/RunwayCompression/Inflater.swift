import CZlib

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Inflates one `Content-Encoding` layer of a body as it arrives, chunk by chunk, and says at
/// the end whether the stream was complete — so a body cut short inside a complete HTTP message
/// is an error, never a silent prefix.
///
/// For dispatchers that decode on their I/O thread (downloads to a file, for one): the output
/// goes to a sink chunk by chunk, so neither the encoded nor the decoded body is held whole.
/// Not thread-safe: one transfer's thread feeds it.
package final class Inflater {
    /// What the stream looks like once its first bytes are known.
    private enum State {
        /// `deflate` whose first two bytes are not in yet (zlib-wrapped or raw is told by them).
        case sniffing([UInt8])
        case inflating
        case ended
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private var initialised = false
    private var state: State
    private let encoding: String
    private var output = [UInt8](repeating: 0, count: 16 << 10)

    /// An inflater for `encoding` (`gzip`, `x-gzip` or `deflate`, any case), or `nil` for one it
    /// does not decode.
    package init?(encoding: String) {
        let name = encoding.lowercased()
        switch name {
        case "gzip", "x-gzip": state = .inflating
        case "deflate": state = .sniffing([])
        default: return nil
        }
        self.encoding = name
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
    }

    deinit {
        if initialised { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Whether the stream has ended (everything after its end is ignored, as a whole-body
    /// decoder ignores it).
    package var isComplete: Bool {
        if case .ended = state { true } else { false }
    }

    /// Inflates `input` and hands each piece of output to `sink`, which returns `false` to stop
    /// (it refused the bytes: over a limit, a failed write).
    /// - Returns: `false` when `sink` stopped it.
    /// - Throws: ``CompressionError/corrupt(_:)`` for data that is not the encoding.
    package func feed(_ input: UnsafeRawBufferPointer, into sink: (UnsafeRawBufferPointer) -> Bool) throws(CompressionError) -> Bool {
        switch state {
        case .ended:
            return true
        case .sniffing(let seen):
            let first = seen + input.prefix(2 - seen.count)
            guard first.count == 2 else {
                state = .sniffing(first)
                return true
            }
            // A zlib header (RFC 1950: method 8, check bits) or gzip's magic; anything else is
            // raw deflate, which some servers send as `deflate`.
            let zlib = first[0] & 0x0F == 8 && (Int(first[0]) << 8 | Int(first[1])) % 31 == 0
            let gzip = first[0] == 0x1F && first[1] == 0x8B
            try start(raw: !zlib && !gzip)
            state = .inflating
            if !seen.isEmpty {
                // The byte kept from an earlier call goes in first.
                var failure: CompressionError?
                let going = seen.withUnsafeBytes { bytes in
                    do throws(CompressionError) {
                        return try inflate(bytes, into: sink)
                    } catch {
                        failure = error
                        return false
                    }
                }
                if let failure { throw failure }
                guard going else { return false }
            }
            return try inflate(input, into: sink)
        case .inflating:
            // gzip starts on its first bytes, so a zlib set-up failure is thrown, not dropped.
            if !initialised { try start(raw: false) }
            return try inflate(input, into: sink)
        }
    }

    /// Throws ``CompressionError/truncated`` unless the stream reached its end.
    package func finish() throws(CompressionError) {
        guard isComplete else { throw .truncated }
    }

    private func start(raw: Bool) throws(CompressionError) {
        let status = raw ? runway_inflate_init_raw(stream) : runway_inflate_init_auto(stream)
        guard status == Z_OK else { throw .zlib(status) }
        initialised = true
    }

    private func inflate(_ input: UnsafeRawBufferPointer, into sink: (UnsafeRawBufferPointer) -> Bool) throws(CompressionError) -> Bool {
        guard let base = input.baseAddress, !input.isEmpty else { return true }
        // zlib never writes through next_in; the cast only satisfies its C signature.
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        let capacity = output.count
        while true {
            let (status, produced) = output.withUnsafeMutableBytes { out in
                stream.pointee.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(capacity)
                let status = CZlib.inflate(stream, Z_NO_FLUSH)
                return (status, capacity - Int(stream.pointee.avail_out))
            }
            if produced > 0 {
                let accepted = output.withUnsafeBytes { sink(UnsafeRawBufferPointer(rebasing: $0[..<produced])) }
                guard accepted else { return false }
            }
            switch status {
            case Z_STREAM_END:
                state = .ended
                return true
            case Z_OK where stream.pointee.avail_in > 0 || produced == capacity:
                continue  // more to inflate from this input
            case Z_OK, Z_BUF_ERROR:
                return true  // this input is used up; the stream goes on in the next chunk
            case Z_DATA_ERROR, Z_NEED_DICT:
                throw .corrupt(stream.pointee.msg.map { String(cString: $0) } ?? "invalid \(encoding) data")
            default:
                throw .zlib(status)
            }
        }
    }
}
