/// What a business module hands the app shell to show: a title and blocks of content.
///
/// HouseHunter's screens are values, so a module never draws anything itself and the shell
/// decides how to show them (here: text in a terminal, see ``rendered()``). A module returns a
/// `Screen` from its mediator actions; the shell renders whatever comes back.
/// ```swift
/// Screen(title: "Rentals in Shanghai", blocks: [
///     .table(Table(columns: ["ID", "TITLE"], rows: [["7", "Loft by the river"]])),
///     .network([ResponseFacts(source: "rent", response: response)]),
/// ])
/// ```
public struct Screen: Sendable, Equatable {
    /// What kind of screen this is; the shell may treat error screens differently (exit status).
    public enum Kind: String, Sendable, Equatable {
        /// Content the user asked for.
        case content
        /// A form asking the user to log in.
        case login
        /// Nothing answers the URL that was opened.
        case notFound
        /// The work behind the screen failed.
        case error
        /// The work was cancelled before it landed (a newer call superseded it).
        case cancelled
    }

    /// One block of a screen, shown in order.
    public enum Block: Sendable, Equatable {
        /// A paragraph.
        case text(String)
        /// Name-value pairs, one per line.
        case fields([Field])
        /// A table.
        case table(Table)
        /// How each request behind the screen was answered: origin, address, per-phase timings.
        case network([ResponseFacts])
        /// Deep links the user can open next.
        case links([Link])
    }

    /// The kind of screen.
    public var kind: Kind
    /// The title line.
    public var title: String
    /// The content, top to bottom.
    public var blocks: [Block]
    /// For a login screen: the URL to open once the user has logged in (what the login gate
    /// stopped), if any. The shell passes it back with the credentials the user typed.
    public var resumeURL: String?

    /// Creates a screen.
    public init(kind: Kind = .content, title: String, blocks: [Block] = [], resumeURL: String? = nil) {
        self.kind = kind
        self.title = title
        self.blocks = blocks
        self.resumeURL = resumeURL
    }

    /// Every request's facts on this screen, in order.
    public var responseFacts: [ResponseFacts] {
        blocks.flatMap { block -> [ResponseFacts] in
            if case .network(let facts) = block { return facts }
            return []
        }
    }

    /// This screen with `transform` applied to every request's facts (the shell annotates
    /// addresses this way).
    public func mappingResponseFacts(_ transform: (ResponseFacts) -> ResponseFacts) -> Screen {
        var copy = self
        copy.blocks = blocks.map { block in
            if case .network(let facts) = block { return .network(facts.map(transform)) }
            return block
        }
        return copy
    }
}

/// A name and a value, shown as `name: value`.
public struct Field: Sendable, Equatable {
    /// The name.
    public var name: String
    /// The value.
    public var value: String

    /// Creates a field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A deep link with a label.
public struct Link: Sendable, Equatable {
    /// What the link leads to.
    public var label: String
    /// The URL to open.
    public var url: String

    /// Creates a link.
    public init(_ label: String, url: String) {
        self.label = label
        self.url = url
    }
}

/// Rows under column headings.
public struct Table: Sendable, Equatable {
    /// The headings.
    public var columns: [String]
    /// The rows; each has one cell per column (missing cells show empty).
    public var rows: [[String]]

    /// Creates a table.
    public init(columns: [String], rows: [[String]]) {
        self.columns = columns
        self.rows = rows
    }
}
