/// Why gzip encoding or decoding failed.
///
/// A struct over a private code, so new cases never break a `switch` in user code.
public struct CompressionError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case tooLarge, corrupt, truncated, zlib
    }

    private let code: Code
    /// What happened, for people.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The decoded data would be larger than the limit (a gzip bomb, or simply too big).
    public static func tooLarge(limit: Int) -> CompressionError {
        CompressionError(.tooLarge, "decompressed data exceeds \(limit) bytes")
    }
    /// The input is not gzip or zlib data, or its checksum is wrong.
    public static func corrupt(_ detail: String) -> CompressionError { CompressionError(.corrupt, "corrupt compressed data: \(detail)") }
    /// The input ends before the compressed stream does.
    public static let truncated = CompressionError(.truncated, "compressed data is truncated")
    /// zlib itself failed (out of memory, bad parameters).
    public static func zlib(_ status: Int32) -> CompressionError { CompressionError(.zlib, "zlib error \(status)") }

    /// Whether this is the limit being exceeded.
    public var isTooLarge: Bool { code == .tooLarge }

    public static func == (lhs: CompressionError, rhs: CompressionError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { message }
}
