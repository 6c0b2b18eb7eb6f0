#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One thing a user did, as the app records it: a name, string attributes and when it happened.
///
/// ```swift
/// actions.record(UserAction("listing.favourite", attributes: ["listing": "42", "from": "search"]))
/// actions.record("screen.view", attributes: ["screen": "detail"])   // the same, stamped now
/// ```
/// The outbox gives it a unique record ID (a UUID) when it is written.
public struct UserAction: Sendable, Hashable {
    /// What happened, e.g. `"listing.favourite"`; must not be empty.
    public var name: String
    /// Details, as strings.
    public var attributes: [String: String]
    /// When it happened, in milliseconds since 1970.
    public var millisecondsSince1970: Int64

    /// Creates an action.
    /// - Parameters:
    ///   - name: What happened; must not be empty.
    ///   - attributes: Details, as strings.
    ///   - time: When it happened (default: now).
    public init(_ name: String, attributes: [String: String] = [:], at time: Date = Date()) {
        self.init(name, attributes: attributes, millisecondsSince1970: Self.milliseconds(time))
    }

    /// Creates an action stamped in milliseconds since 1970.
    public init(_ name: String, attributes: [String: String] = [:], millisecondsSince1970: Int64) {
        self.name = name
        self.attributes = attributes
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// When it happened.
    public var time: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    /// The bytes of the name and attributes (UTF-8), which ``ActionLogger/Configuration/maxActionBytes`` bounds.
    public var byteCount: Int {
        var total = name.utf8.count
        for (key, value) in attributes { total += key.utf8.count + value.utf8.count }
        return total
    }

    static func milliseconds(_ time: Date) -> Int64 {
        Int64(exactly: (time.timeIntervalSince1970 * 1000).rounded(.down)) ?? 0
    }
}

#endif
