import Foundation

extension Screen {
    /// The screen as terminal text: a title line, then each block, separated by blank lines.
    ///
    /// Plain ASCII in columns, so it reads the same in any terminal, a pipe or a log:
    /// ```
    /// == Rentals in Shanghai (page 1 of 3) ==
    ///
    ///   ID  TITLE                      PRICE         AREA
    ///   --  -------------------------  ------------  ----
    ///   25  2-bedroom flat in Xuhui    CNY 5,200/mo  60m2
    /// ```
    public func rendered() -> String {
        var lines = ["== \(title) =="]
        for block in blocks {
            lines.append("")
            lines += Self.lines(of: block).map { $0.isEmpty ? "" : "  " + $0 }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func lines(of block: Block) -> [String] {
        switch block {
        case .text(let text):
            return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        case .fields(let fields):
            let width = fields.map(\.name.count).max() ?? 0
            return fields.map { pad($0.name + ":", width + 1) + " " + $0.value }
        case .table(let table):
            return TextTable.lines(columns: table.columns, rows: table.rows)
        case .network(let facts):
            let rows = facts.map { fact -> [String] in
                let address = fact.address.isEmpty ? "-" : fact.address + (fact.addressNote.map { " (\($0))" } ?? "")
                if fact.isCacheHit { return [fact.source, fact.origin, address, "-", "-", "-", "-"] }
                return [
                    fact.source, fact.origin + (fact.reused ? ", reused" : ""), address, milliseconds(fact.nameLookup),
                    milliseconds(fact.connect), milliseconds(fact.firstByte), milliseconds(fact.total),
                ]
            }
            return TextTable.lines(columns: ["REQUEST", "ORIGIN", "ADDRESS", "DNS", "CONNECT", "FIRST BYTE", "TOTAL"], rows: rows)
        case .links(let links):
            let width = links.map(\.label.count).max() ?? 0
            return links.map { "-> " + pad($0.label, width) + "  " + $0.url }
        }
    }

    /// `12.34ms`.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let value = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return String(format: "%.2fms", value)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

/// Columns of text: headings, a dashed rule, rows; cells longer than ``maxCell`` are cut.
enum TextTable {
    static let maxCell = 40

    static func lines(columns: [String], rows: [[String]]) -> [String] {
        let cells = rows.map { row in columns.indices.map { index in cut(index < row.count ? row[index] : "") } }
        let widths = columns.indices.map { index in max(columns[index].count, cells.map { $0[index].count }.max() ?? 0) }
        func line(_ values: [String]) -> String {
            var text = ""
            for (index, value) in values.enumerated() {
                text += index == values.count - 1 ? value : Screen.pad(value, widths[index]) + "  "
            }
            return String(text.reversed().drop { $0 == " " }.reversed())
        }
        var lines = [line(columns), line(widths.map { String(repeating: "-", count: $0) })]
        lines += cells.map(line)
        if rows.isEmpty { lines.append("(none)") }
        return lines
    }

    static func cut(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        return flat.count <= maxCell ? flat : String(flat.prefix(maxCell - 3)) + "..."
    }
}
