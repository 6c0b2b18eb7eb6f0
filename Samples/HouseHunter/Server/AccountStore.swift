import Foundation

/// The server's users, sessions and favourites: access tokens that expire, refresh tokens that
/// mint new ones.
public final class AccountStore: Sendable {
    /// What happened to a presented access token.
    enum TokenCheck: Equatable {
        case valid(user: String)
        case expired
        case unknown
    }

    private struct State {
        var accessTokens: [String: (user: String, expires: Date)] = [:]
        var refreshTokens: [String: String] = [:]
        var logins = 0
        var refreshes = 0
    }

    /// User names and passwords.
    let users: [String: String]
    /// How long an access token lives.
    let tokenLifetime: Duration
    /// The time tokens are issued and checked at.
    private let now: @Sendable () -> Date
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var state = State()

    init(users: [String: String], tokenLifetime: Duration, now: @escaping @Sendable () -> Date) {
        self.users = users
        self.tokenLifetime = tokenLifetime
        self.now = now
    }

    /// Successful logins so far.
    public var loginCount: Int { lock.withLock { state.logins } }

    /// Access tokens minted from a refresh token so far.
    public var refreshCount: Int { lock.withLock { state.refreshes } }

    /// Favourite listing ids of `user` (the same three for everybody in the sample).
    func favourites(of user: String) -> [Int] { [42, 7, 88] }

    /// A new session for `user`, or `nil` when the password is wrong.
    func login(user: String, password: String) -> (access: String, refresh: String)? {
        guard let expected = users[user], ConstantTimeText.equals(expected, password) else { return nil }
        let access = Self.token()
        let refresh = Self.token()
        let expires = now().addingTimeInterval(tokenLifetime.seconds)
        lock.withLock {
            state.accessTokens[access] = (user, expires)
            state.refreshTokens[refresh] = user
            state.logins += 1
        }
        return (access, refresh)
    }

    /// A new access token for the session of `refreshToken`, or `nil` when it is unknown.
    func refresh(_ refreshToken: String) -> String? {
        let expires = now().addingTimeInterval(tokenLifetime.seconds)
        return lock.withLock {
            guard let user = state.refreshTokens[refreshToken] else { return nil }
            let access = Self.token()
            state.accessTokens[access] = (user, expires)
            state.refreshes += 1
            return access
        }
    }

    /// Whether `accessToken` is valid now.
    func check(_ accessToken: String) -> TokenCheck {
        let now = now()
        return lock.withLock {
            guard let entry = state.accessTokens[accessToken] else { return .unknown }
            return entry.expires > now ? .valid(user: entry.user) : .expired
        }
    }

    /// Ends the session of `refreshToken`.
    func logout(_ refreshToken: String) {
        _ = lock.withLock { state.refreshTokens.removeValue(forKey: refreshToken) }
    }

    private static func token() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Compares secrets without an early exit on the first difference.
enum ConstantTimeText {
    static func equals(_ lhs: String, _ rhs: String) -> Bool {
        let (a, b) = (Array(lhs.utf8), Array(rhs.utf8))
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
