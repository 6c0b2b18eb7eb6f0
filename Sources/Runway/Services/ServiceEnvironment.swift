import RunwayCore

/// The server environment an app talks to: development, release candidate or release.
///
/// A struct over a private enum so that new environments never break a `switch` in user code.
/// The ``ServiceRegistry`` picks one at start-up; every ``Service`` gives a base URL for each.
public struct ServiceEnvironment: Hashable, Sendable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable {
        case develop, releaseCandidate, release
    }

    private let base: Base

    /// Development servers.
    public static let develop = ServiceEnvironment(base: .develop)
    /// Release-candidate (staging) servers.
    public static let releaseCandidate = ServiceEnvironment(base: .releaseCandidate)
    /// Production servers.
    public static let release = ServiceEnvironment(base: .release)

    /// Every environment, in the order develop, release candidate, release.
    public static let all: [ServiceEnvironment] = [.develop, .releaseCandidate, .release]

    public var description: String { base.rawValue }
}

/// The base URL of a ``Service`` in each ``ServiceEnvironment``.
///
/// ```swift
/// BaseURLs(develop: "https://dev.rent.example.com/v1",
///          releaseCandidate: "https://rc.rent.example.com/v1",
///          release: "https://rent.example.com/v1")
/// ```
/// One server for every environment (tests, a single-server app): `BaseURLs("http://127.0.0.1:8080/v1")`.
/// The registry checks every URL when it is built (absolute `http(s)`, no query, no space or
/// control character), so a typo is a start-up error.
public struct BaseURLs: Sendable, Hashable {
    /// The development base URL.
    public var develop: String
    /// The release-candidate base URL.
    public var releaseCandidate: String
    /// The production base URL.
    public var release: String

    /// Creates base URLs for the three environments.
    public init(develop: String, releaseCandidate: String, release: String) {
        self.develop = develop
        self.releaseCandidate = releaseCandidate
        self.release = release
    }

    /// The same base URL in every environment (tests, single-server apps).
    public init(_ everywhere: String) {
        self.init(develop: everywhere, releaseCandidate: everywhere, release: everywhere)
    }

    /// The base URL text for `environment`.
    public subscript(environment: ServiceEnvironment) -> String {
        switch environment {
        case .develop: develop
        case .releaseCandidate: releaseCandidate
        default: release
        }
    }
}
