#if Signing  // the whole module: without its package trait, only TraitCheck.swift's error

/// Comparison whose duration does not depend on where two byte strings first differ.
enum ConstantTime {
    /// Whether `a` and `b` are equal, examining every byte (the length is not secret).
    static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}

#endif
