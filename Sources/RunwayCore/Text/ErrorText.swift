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

extension RunwayError {
    /// A URL as error messages show it: without user name and password, query, fragment and
    /// the parameters of its path segments (where tokens, keys and session ids travel; `…@`,
    /// `?…` and `;…` say one was there, so the text left is not read as another URL), and cut
    /// after 300 characters.
    /// Messages reach logs, HAR files and spans, which must not carry what the URL held.
    /// Works on text that is not a valid URL too.
    package static func text(forURL text: String) -> String {
        var kept = Substring(text)
        var suffix = ""
        if let cut = kept.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            suffix = kept[cut] == "?" ? "?…" : "#…"
            kept = kept[..<cut]
        }
        if let schemeEnd = kept.firstRange(of: "://") {
            let authority = kept[schemeEnd.upperBound...]
            let authorityEnd = authority.firstIndex(of: "/") ?? authority.endIndex
            // The user information ends at the last "@" of the authority; a password may hold an
            // unescaped "/", which ends the authority early: then a "user:" before it (not a
            // "host:port", all digits) and an "@" after it mark it too.
            let head = authority[..<authorityEnd]
            let passwordCut =
                head.firstIndex(of: ":").map { !head[head.index(after: $0)...].allSatisfy { $0.isASCII && $0.isNumber } } ?? false
            let at = head.lastIndex(of: "@") ?? (passwordCut ? authority.lastIndex(of: "@") : nil)
            if let at {
                kept = kept[..<schemeEnd.upperBound] + "…" + kept[at...]
            }
        }
        // A path segment's `;name=value` parameters may carry a session id (`;jsessionid=`).
        if kept.contains(";") {
            let pathStart =
                kept.firstRange(of: "://").map { kept[$0.upperBound...].firstIndex(of: "/") ?? kept.endIndex } ?? kept.startIndex
            kept =
                kept[..<pathStart]
                + kept[pathStart...].split(separator: "/", omittingEmptySubsequences: false)
                .map { segment in segment.firstIndex(of: ";").map { segment[..<$0] + ";…" } ?? segment }.joined(separator: "/")
        }
        if kept.count > 300 { return kept.prefix(300) + "…" }
        return String(kept) + suffix
    }

    /// ``text(forURL:)`` of a URL.
    package static func text(forURL url: URL) -> String { text(forURL: url.absoluteString) }
}
