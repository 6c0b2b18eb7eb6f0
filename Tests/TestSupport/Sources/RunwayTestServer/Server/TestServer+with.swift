/// Runs `body` against a freshly started ``TestServer`` and always shuts the server down,
/// whether `body` returns or throws.
/// - Parameters: as ``TestServer/start(host:tls:http2:clientCertificateAuthority:responseDelay:port:builtInRoutes:routes:)``.
public func withTestServer<T>(
    isolation: isolated (any Actor)? = #isolation,
    host: String = "127.0.0.1", tls: TestPKI.Identity? = nil, http2: Bool = true, clientCertificateAuthority: String? = nil,
    responseDelay: Duration = .zero,
    routes: TestServer.Routes? = nil, _ body: (TestServer) async throws -> T
) async throws -> T {
    let server = try await TestServer.start(
        host: host, tls: tls, http2: http2, clientCertificateAuthority: clientCertificateAuthority, responseDelay: responseDelay,
        routes: routes)
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}
