import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// TLS verification against the test CA, host names and public-key pins.
extension DispatcherSuite {
    @Test("a server signed by a trusted CA answers, over HTTP/2 and HTTP/1.1", arguments: DispatcherUnderTest.all(supporting: .customCA))
    func trustedCA(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let dispatcher = dut.make()
        let pem = try pki.caCertificatePEM
        for http2 in [true, false] {
            try await withTestServer(tls: pki.server, http2: http2) { server in
                for host in ["127.0.0.1", "localhost"] {
                    let request = makeRequest(server.url("/json", hostName: host)) {
                        $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                    }
                    let response = try await dut.send(dispatcher, request)
                    #expect(response.body == TestServer.fixedJSON)
                }
                let inMemory = makeRequest(server.url("/json")) {
                    $0.tls.certificateAuthorities = .pem(pem)
                }
                let viaPEM = try await dut.send(dispatcher, inMemory)
                #expect(viaPEM.status == 200)
            }
        }
    }

    @Test("a certificate for another name is .tls", arguments: DispatcherUnderTest.all(supporting: .customCA))
    func wrongName(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        try await withTestServer(tls: pki.otherName) { server in
            let request = makeRequest(server.url("/json")) { $0.tls.certificateAuthorities = .file(pki.caCertificatePath) }
            let error = await runwayError { try await dut.send(dut.make(), request) }
            #expect(error?.code == .tls)
            #expect(server.stats.totalRequests == 0)
        }
    }

    @Test("an IP-only certificate matches the IP and not a name", arguments: DispatcherUnderTest.all(supporting: .customCA))
    func ipOnlyCertificate(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        try await withTestServer(tls: pki.ipOnly) { server in
            let byIP = makeRequest(server.url("/json")) { $0.tls.certificateAuthorities = .file(pki.caCertificatePath) }
            let response = try await dut.send(dut.make(), byIP)
            #expect(response.status == 200)
            let byName = makeRequest(server.url("/json", hostName: "localhost")) {
                $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
            }
            #expect(await runwayError { try await dut.send(dut.make(), byName) }?.code == .tls)
        }
    }

    @Test("a server signed by an untrusted CA is .tls", arguments: DispatcherUnderTest.all)
    func untrustedCA(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        try await withTestServer(tls: pki.server) { server in
            let error = await runwayError { try await dut.send(dut.make(), makeRequest(server.url("/json"))) }
            #expect(error?.code == .tls, "\(String(describing: error))")
            #expect(server.stats.totalRequests == 0)
        }
    }

    @Test("a matching pin passes, a wrong pin is .tls", arguments: DispatcherUnderTest.all(supporting: .customCA, .pinning))
    func pinning(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let dispatcher = dut.make()
        try await withTestServer(tls: pki.server) { server in
            let pinned = makeRequest(server.url("/json")) {
                $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                $0.tls.pinnedPublicKeys = [pki.otherKeyPin, pki.serverKeyPin]
            }
            let response = try await dut.send(dispatcher, pinned)
            #expect(response.status == 200)
            let wrong = makeRequest(server.url("/json")) {
                $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                $0.tls.pinnedPublicKeys = [pki.otherKeyPin]
            }
            #expect(await runwayError { try await dut.send(dispatcher, wrong) }?.code == .tls)
        }
    }

    /// A bundle libcurl cannot load is the caller's to fix, as a missing one is, not the server's
    /// TLS failing: `.configuration`, before anything is sent.
    @Test(
        "a CA bundle that cannot be used is .configuration, the request's or a proxy's",
        arguments: DispatcherUnderTest.all(supporting: .customCA))
    func unusableCABundle(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let dispatcher = dut.make()
        let directory = pki.directory.appendingPathComponent("unusable-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty.pem")
        let garbage = directory.appendingPathComponent("garbage.pem")
        try Data().write(to: empty)
        try Data("not a certificate\n".utf8).write(to: garbage)
        let bundles: [CertificateAuthorities] = [
            .file(directory.appendingPathComponent("missing.pem").path), .file(empty.path), .file(garbage.path),
            .file(directory.path), .pem(Data()), .pem(Data("not a certificate".utf8)),
        ]
        try await withTestServer(tls: pki.server) { server in
            for bundle in bundles {
                let request = makeRequest(server.url("/json")) { $0.tls.certificateAuthorities = bundle }
                let error = await runwayError { try await dut.send(dispatcher, request) }
                #expect(error?.code == .configuration, "\(bundle): \(String(describing: error))")
                #expect(error?.field == "tls.certificateAuthorities", "\(bundle)")
                #expect(error?.neverSent == true, "\(bundle)")
            }
            #expect(server.stats.totalRequests == 0)
        }
        guard dut.supports(.proxies) else { return }
        // An HTTPS proxy's own bundle: loaded once its TCP connection is up, before its handshake.
        try await withTestServer(tls: pki.server) { proxy in
            try await withTestServer { server in
                for bundle in bundles {
                    let request = makeRequest(server.url("/json")) {
                        $0.proxy = .https(host: "127.0.0.1", port: proxy.port, certificateAuthorities: bundle)
                    }
                    let error = await runwayError { try await dut.send(dispatcher, request) }
                    #expect(error?.code == .configuration, "\(bundle): \(String(describing: error))")
                    #expect(error?.field == "proxy", "\(bundle)")
                    #expect(error?.neverSent == true, "\(bundle)")
                    #expect(
                        error?.message.contains("HTTPS proxy 127.0.0.1:\(proxy.port)'s CA bundle") == true, "\(String(describing: error))")
                }
                #expect(server.stats.totalRequests == 0)
            }
            #expect(proxy.stats.totalRequests == 0)
        }
    }

    /// Over plain `http` no key is checked: following a pinned request there would skip its pin.
    @Test(
        "a pinned https request is not redirected to plain http; to https it is, pinned",
        arguments: DispatcherUnderTest.all(supporting: .customCA, .pinning))
    func pinnedRedirectStaysOnHTTPS(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let dispatcher = dut.make()
        try await withTestServer { plain in
            try await withTestServer(tls: pki.server) { server in
                func redirect(to target: URL) throws -> URL {
                    var components = URLComponents(url: server.url("/redirect-to"), resolvingAgainstBaseURL: false)
                    components?.queryItems = [URLQueryItem(name: "url", value: target.absoluteString)]
                    return try #require(components?.url)
                }
                let downgrade = makeRequest(try redirect(to: plain.url("/json"))) {
                    $0.redirects = .follow()
                    $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                    $0.tls.pinnedPublicKeys = [pki.serverKeyPin]
                }
                let error = await runwayError { try await dut.send(dispatcher, downgrade) }
                #expect(error?.code == .tls, "\(String(describing: error))")
                #expect(error?.field == "tls.pinnedPublicKeys")
                #expect(error?.neverSent == false)
                #expect(error?.message.contains("redirect to plain http was not followed") == true, "\(String(describing: error))")
                #expect(server.stats.requests(path: "/redirect-to") == 1)
                #expect(plain.stats.totalRequests == 0)

                let staysOnHTTPS = makeRequest(try redirect(to: server.url("/json"))) {
                    $0.redirects = .follow()
                    $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                    $0.tls.pinnedPublicKeys = [pki.serverKeyPin]
                }
                #expect(try await dut.send(dispatcher, staysOnHTTPS).body == TestServer.fixedJSON)
                // Without a pin the redirect policy is as documented: http and https.
                let unpinned = makeRequest(try redirect(to: plain.url("/json"))) {
                    $0.redirects = .follow()
                    $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                }
                #expect(try await dut.send(dispatcher, unpinned).body == TestServer.fixedJSON)
                #expect(plain.stats.requests(path: "/json") == 1)
            }
        }
    }

    @Test("TLS options a dispatcher cannot honour are refused, not ignored", arguments: DispatcherUnderTest.all(lacking: .customCA))
    func unsupportedTLSOptions(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let dispatcher = dut.make()
        try await withTestServer(tls: pki.server) { server in
            let withCA = makeRequest(server.url("/json")) { $0.tls.certificateAuthorities = .file(pki.caCertificatePath) }
            #expect(await runwayError { try await dut.send(dispatcher, withCA) }?.code == .configuration)
            if !dut.supports(.pinning) {
                let withPin = makeRequest(server.url("/json")) { $0.tls.pinnedPublicKeys = [pki.serverKeyPin] }
                #expect(await runwayError { try await dut.send(dispatcher, withPin) }?.code == .configuration)
            }
            #expect(server.stats.totalRequests == 0)
        }
    }
}
