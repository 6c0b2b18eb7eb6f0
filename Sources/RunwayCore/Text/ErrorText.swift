#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RunwayError {
    /// A foreign error as the end of a message, in place of Foundation's `localizedDescription`
    /// (not in FoundationEssentials): a POSIX error, or a file error of Foundation's with one
    /// under it, as the C library words it ("No such file or directory"); a `RunwayError` by its
    /// message; anything else as it describes itself.
    package static func text(describing error: any Error) -> String {
        switch error {
        case let error as RunwayError: error.message
        case let error as POSIXError: error.message
        case let error as CocoaError: (error.underlying as? POSIXError)?.message ?? "\(error)"
        default: "\(error)"
        }
    }
}
