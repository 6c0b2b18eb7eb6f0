import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// Response and request size limits, and transparent decompression.
extension DispatcherSuite {
    @Test("a body over the response limit fails, one at the limit passes", arguments: DispatcherUnderTest.all)
    func responseSizeLimit(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let atLimit = makeRequest(server.url("/bytes/1048576")) { $0.maxResponseSize = 1 << 20 }
            let passed = try await dut.send(dispatcher, atLimit)
            #expect(passed.body.count == 1 << 20)

            let over = makeRequest(server.url("/bytes/4194304")) { $0.maxResponseSize = 1 << 20 }
            let error = await runwayError { try await dut.send(dispatcher, over) }
            #expect(error?.code == .responseTooLarge)
        }
    }

    @Test("gzip bodies are decompressed transparently", arguments: DispatcherUnderTest.all)
    func gzip(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let response = try await dut.send(dispatcher, makeRequest(server.url("/gzip/200000")))
            #expect(response.status == 200)
            #expect(response.body == DeterministicBytes.data(count: 200_000))
        }
    }

    @Test("a gzip bomb stops at the response limit", arguments: DispatcherUnderTest.all)
    func gzipBomb(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            // About 256 KiB on the wire, 256 MiB decompressed.
            let request = makeRequest(server.url("/gzip-bomb/256")) { $0.maxResponseSize = 8 << 20 }
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .responseTooLarge)
        }
    }

    @Test("a request body over the limit is refused before anything is sent", arguments: DispatcherUnderTest.all)
    func requestTooLarge(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let request = makeRequest(.post, server.url("/upload"), body: Data(count: 2048)) { $0.maxRequestBodySize = 1024 }
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .requestTooLarge)
            #expect(server.stats.totalRequests == 0)
        }
    }
}
