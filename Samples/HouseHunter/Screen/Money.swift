/// Amounts of money as screens show them.
public enum Money {
    /// `CNY 65,000`.
    public static func cny(_ amount: Int) -> String {
        "CNY \(grouped(amount))"
    }

    /// `65000` → `65,000`.
    public static func grouped(_ value: Int) -> String {
        let digits = Array(String(value.magnitude))
        var text = value < 0 ? "-" : ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }
}
