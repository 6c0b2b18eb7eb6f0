import Dispatch
import RunwaySync
import Testing

@Suite("Condition", .timeLimit(.minutes(1)))
struct ConditionTests {
    /// Items handed from producers to one consumer thread.
    final class Queue: @unchecked Sendable {
        // @unchecked Sendable: `items` and `done` are read and written only holding `condition`.
        let condition = Condition()
        var items: [Int] = []
        var done = false
    }

    @Test("a thread waiting on the condition takes every item producers hand over while it sleeps")
    func handOver() async {
        let queue = Queue()
        // The consumer is a thread of its own: it blocks in `wait`, which no pool thread may.
        let sum = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            DispatchQueue(label: "consumer").async {
                var sum = 0
                queue.condition.lock()
                while true {
                    while queue.items.isEmpty, !queue.done { queue.condition.wait() }
                    if queue.items.isEmpty { break }
                    sum += queue.items.reduce(0, +)
                    queue.items = []
                }
                queue.condition.unlock()
                continuation.resume(returning: sum)
            }
            Task {
                await withTaskGroup(of: Void.self) { group in
                    for producer in 0..<8 {
                        group.addTask {
                            for n in 0..<250 {
                                queue.condition.withLock { queue.items.append(producer * 250 + n) }
                                queue.condition.signal()
                            }
                        }
                    }
                }
                queue.condition.withLock { queue.done = true }
                queue.condition.broadcast()
            }
        }
        #expect(sum == (0..<2_000).reduce(0, +))
    }
}
