import RunwaySync
import Testing

@Suite("Locked")
struct LockedTests {
    struct Pair {
        var count = 0
        var sum = 0
    }

    struct Refused: Error {}

    @Test("many tasks changing the state at once lose no update")
    func contention() async {
        let box = Locked(Pair())
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<64 {
                group.addTask {
                    for step in 0..<1_000 {
                        box.withLock { state in
                            state.count += 1
                            state.sum += task * 1_000 + step
                        }
                    }
                }
            }
        }
        let (count, sum) = box.withLock { ($0.count, $0.sum) }
        #expect(count == 64_000)
        #expect(sum == (0..<64_000).reduce(0, +))
    }

    @Test("a thrown error keeps what the closure wrote, releases the lock and reaches the caller")
    func thrownError() {
        let box = Locked(Pair(count: 1, sum: 10))
        #expect(throws: Refused.self) {
            try box.withLock { (state) throws(Refused) -> Void in
                state.count += 1
                throw Refused()
            }
        }
        // The lock was released (this would deadlock otherwise) and the state is whole.
        let pair = box.withLock { $0 }
        #expect(pair.count == 2)
        #expect(pair.sum == 10)
    }

    @Test("the error type is kept: a typed throw needs no cast")
    func typedThrow() {
        let box = Locked([Int]())
        let result: Result<Int, Refused> = Result { () throws(Refused) -> Int in
            try box.withLock { (values) throws(Refused) -> Int in
                values.append(1)
                guard values.count > 1 else { throw Refused() }
                return values.count
            }
        }
        #expect(throws: Refused.self) { try result.get() }
        #expect(box.withLock { $0 } == [1])
    }
}

@Suite("Lock")
struct LockTests {
    struct Refused: Error {}

    /// Plain threads, not tasks: the lock is what guards `count`.
    final class Guarded: @unchecked Sendable {
        // @unchecked Sendable: `count` is read and written only while holding `lock`.
        let lock = Lock()
        var count = 0
    }

    @Test("threads incrementing under the lock lose no update")
    func contention() async {
        let counter = Guarded()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<10_000 { counter.lock.withLock { counter.count += 1 } }
                }
            }
        }
        #expect(counter.lock.withLock { counter.count } == 80_000)
    }

    @Test("a thrown error releases the lock and keeps its type; lock and unlock pair by hand")
    func thrownError() {
        let lock = Lock()
        #expect(throws: Refused.self) { try lock.withLock { () throws(Refused) in throw Refused() } }
        lock.lock()
        lock.unlock()
        #expect(lock.withLock { 42 } == 42)
    }

    @Test("many locks made and released (each mutex in memory of its own) leave nothing locked")
    func manyLocks() {
        for index in 0..<1_000 {
            let box = Locked(index)
            #expect(box.withLock { $0 } == index)
        }
    }
}
