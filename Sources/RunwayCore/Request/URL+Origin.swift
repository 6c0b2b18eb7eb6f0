#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension URL {
    /// Whether `other` has this URL's origin: the same scheme, host and port (80 for `http`,
    /// 443 for `https` when none is written), compared without case. A URL without a scheme or
    /// a host has no origin, and shares none.
    package func isSameOrigin(as other: URL) -> Bool {
        guard let scheme = scheme?.lowercased(), other.scheme?.lowercased() == scheme,
            let host = host(percentEncoded: true)?.lowercased(), other.host(percentEncoded: true)?.lowercased() == host
        else { return false }
        return originPort == other.originPort
    }

    /// The port, or the scheme's default one (`http` and `https` only).
    private var originPort: Int? {
        port ?? (scheme?.lowercased() == "https" ? 443 : scheme?.lowercased() == "http" ? 80 : nil)
    }
}
