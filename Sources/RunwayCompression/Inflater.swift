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
        /// gzip after the end of a member: the bytes seen of what follows, which must be
        /// another member (RFC 1952 §2.2), told by its first two bytes.
        case betweenMembers([UInt8])
        /// `deflate` after the end of its stream: nothing may follow.
        case ended
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private var initialised = false
    private var state: State
    private let encoding: String
    /// Whether the encoding is gzip, whose data may hold several members.
    private let isGzip: Bool
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
        isGzip = name != "deflate"
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
    }

    deinit {
        if initialised { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Whether the data has ended where it may: after the end of the stream (of a gzip member:
    /// more members may follow).
    package var isComplete: Bool {
        switch state {
        case .ended, .betweenMembers([]): true
        default: false
        }
    }

    /// Inflates `input` and hands each piece of output to `sink`, which returns `false` to stop
    /// (it refused the bytes: over a limit, a failed write).
    /// - Returns: `false` when `sink` stopped it.
    /// - Throws: ``CompressionError/corrupt(_:)`` for data that is not the encoding.
    package func feed(_ input: UnsafeRawBufferPointer, into sink: (UnsafeRawBufferPointer) -> Bool) throws(CompressionError) -> Bool {
        switch state {
        case .ended:
            guard input.isEmpty else { throw .corrupt("\(input.count) bytes after the end of the \(encoding) data") }
            return true
        case .sniffing(let seen):
            let first = seen + input.prefix(2 - seen.count)
            guard first.count == 2 else {
                state = .sniffing(first)
                return true
            }
            // Raw deflate, which some servers send as `deflate`, unless zlib or gzip.
            try start(raw: Gzip.Format.ofDeflate(startingWith: first[0], first[1]) == .rawDeflate)
            state = .inflating
            return try inflate(kept: seen, then: input, into: sink)
        case .betweenMembers(let seen):
            let first = seen + input.prefix(2 - seen.count)
            guard first.count == 2 else {
                state = .betweenMembers(first)
                return true
            }
            try startNextMember(first[0], first[1])
            state = .inflating
            return try inflate(kept: seen, then: input, into: sink)
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

    /// Starts the next gzip member, told by its first two bytes (gzip's magic), or throws for
    /// bytes after the end of the data that are not one.
    private func startNextMember(_ first: UInt8, _ second: UInt8) throws(CompressionError) {
        guard first == 0x1F, second == 0x8B else {
            throw .corrupt("data after the end of the \(encoding) data that is not another gzip member")
        }
        let status = inflateReset(stream)
        guard status == Z_OK else { throw .zlib(status) }
    }

    /// Inflates the bytes kept from an earlier call (the start of a stream or member, read to
    /// tell what it is), then `input`.
    private func inflate(
        kept: [UInt8], then input: UnsafeRawBufferPointer, into sink: (UnsafeRawBufferPointer) -> Bool
    ) throws(CompressionError) -> Bool {
        if !kept.isEmpty {
            var failure: CompressionError?
            let going = kept.withUnsafeBytes { bytes in
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
        // The kept bytes may have been a whole member's end already; `feed` goes on from there.
        if case .inflating = state { return try inflate(input, into: sink) }
        return try feed(input, into: sink)
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
                // What follows in this input: another gzip member, inflated in this same loop (a
                // body of many small members must not nest calls), or bytes that must not be there.
                let rest = UnsafeRawBufferPointer(start: stream.pointee.next_in, count: Int(stream.pointee.avail_in))
                guard isGzip else {
                    state = .ended
                    guard rest.isEmpty else { throw .corrupt("\(rest.count) bytes after the end of the \(encoding) data") }
                    return true
                }
                guard rest.count >= 2 else {
                    // Whether a member follows is told by its first two bytes, in the next chunk.
                    state = .betweenMembers(Array(rest))
                    return true
                }
                try startNextMember(rest[0], rest[1])
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
