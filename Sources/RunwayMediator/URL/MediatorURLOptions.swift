/// How the mediator reads URL strings. A struct so that new rules never break callers.
public struct MediatorURLOptions: Sendable {
    /// How `+` in a query value is read.
    public var plusInQuery: PlusHandling
    /// What an empty path segment (`app://user//42`) means.
    public var emptySegments: EmptySegmentPolicy
    /// The longest URL accepted, in UTF-8 bytes; longer input is `.malformedURL`. Below 1,
    /// `Mediator.Builder.build()` throws `.invalidRegistration`.
    public var maxLength: Int

    /// Creates options; the defaults read `+` as a space, skip empty segments and accept 8 KiB.
    public init(
        plusInQuery: PlusHandling = .space, emptySegments: EmptySegmentPolicy = .ignore, maxLength: Int = 8192
    ) {
        self.plusInQuery = plusInQuery
        self.emptySegments = emptySegments
        self.maxLength = maxLength
    }

    /// How `+` in a query is read (it is always literal in the path).
    public struct PlusHandling: Hashable, Sendable {
        private enum Base: Hashable, Sendable { case space, literal }
        private let base: Base
        /// `+` is a space, as HTML forms encode it (`q=a+b` is `"a b"`).
        public static let space = PlusHandling(base: .space)
        /// `+` is a plus sign; a space must be sent as `%20`.
        public static let literal = PlusHandling(base: .literal)
        var isSpace: Bool { base == .space }
    }

    /// What an empty path segment means. A single trailing slash is always ignored.
    public struct EmptySegmentPolicy: Hashable, Sendable {
        private enum Base: Hashable, Sendable { case ignore, reject }
        private let base: Base
        /// `app://user//42` is read as `app://user/42`.
        public static let ignore = EmptySegmentPolicy(base: .ignore)
        /// `app://user//42` is `.malformedURL`.
        public static let reject = EmptySegmentPolicy(base: .reject)
        var rejects: Bool { base == .reject }
    }
}
