import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import TestHelpers
import Testing

/// Mutual TLS: a server that asks for a client certificate signed by the test client CA.
extension DispatcherSuite {
    /// A request to `server` trusting the test CA, presenting `certificate`.
    private func request(_ server: TestServer, _ pki: TestPKI, _ certificate: ClientCertificate?, path: String = "/json") -> Request {
        makeRequest(server.url(path)) {
            $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
            $0.tls.clientCertificate = certificate
        }
    }

    /// A server's refusal of the client's certificate. Under TLS 1.3 the server checks it after
    /// the client has finished its side of the handshake: its alert is read (`.tls`), unless the
    /// connection's close reaches the client first (`.connectionLost`).
    private static func isRefusal(_ error: RunwayError?) -> Bool {
        error?.code == .tls || error?.code == .connectionLost
    }

    @Test(
        "a client certificate in every form is presented, over HTTP/2 and HTTP/1.1",
        arguments: DispatcherUnderTest.all(supporting: .clientCertificates))
    func clientCertificateForms(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let read = { (path: String) in try Data(contentsOf: URL(fileURLWithPath: path)) }
        let forms: [ClientCertificate] = [
            .pemFiles(certificate: pki.client.certificatePath, privateKey: pki.client.privateKeyPath),
            .pemFiles(
                certificate: pki.client.certificatePath, privateKey: pki.clientEncryptedKeyPath, password: pki.clientKeyPassword),
            .pem(certificate: try read(pki.client.certificatePath), privateKey: try read(pki.client.privateKeyPath)),
            .pem(certificate: try read(pki.client.certificatePath) + read(pki.client.privateKeyPath)),
            .pem(
                certificate: try read(pki.client.certificatePath), privateKey: try read(pki.clientEncryptedKeyPath),
                password: pki.clientKeyPassword),
            .pkcs12File(pki.clientPKCS12Path, password: pki.clientKeyPassword),
            .pkcs12(try read(pki.clientPKCS12Path), password: pki.clientKeyPassword),
        ]
        for http2 in [true, false] {
            try await withTestServer(tls: pki.server, http2: http2, clientCertificateAuthority: pki.clientCACertificatePath) { server in
                let dispatcher = dut.make()
                for certificate in forms {
                    let response = try await dut.send(dispatcher, request(server, pki, certificate))
                    #expect(response.body == TestServer.fixedJSON, "\(certificate)")
                }
            }
        }
    }

    @Test(
        "a server that asks for a client certificate refuses none, and one of a CA it does not trust",
        arguments: DispatcherUnderTest.all(supporting: .clientCertificates))
    func clientCertificateRefused(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let stranger = ClientCertificate.pemFiles(
            certificate: pki.strangerClient.certificatePath, privateKey: pki.strangerClient.privateKeyPath)
        for http2 in [true, false] {
            try await withTestServer(tls: pki.server, http2: http2, clientCertificateAuthority: pki.clientCACertificatePath) { server in
                for certificate in [nil, stranger] {
                    let error = await runwayError { try await dut.send(dut.make(), request(server, pki, certificate)) }
                    #expect(Self.isRefusal(error), "\(String(describing: certificate)): \(String(describing: error))")
                }
                #expect(server.stats.totalRequests == 0)
            }
        }
    }

    /// One identity's connection (or TLS session) must never carry another identity's request:
    /// the server would take it as the first one's.
    @Test(
        "a connection made with one client certificate is never reused by a request with another or none",
        arguments: DispatcherUnderTest.all(supporting: .clientCertificates))
    func clientCertificateConnectionsKeptApart(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let trusted = ClientCertificate.pemFiles(certificate: pki.client.certificatePath, privateKey: pki.client.privateKeyPath)
        let stranger = ClientCertificate.pemFiles(
            certificate: pki.strangerClient.certificatePath, privateKey: pki.strangerClient.privateKeyPath)
        for http2 in [true, false] {
            try await withTestServer(tls: pki.server, http2: http2, clientCertificateAuthority: pki.clientCACertificatePath) { server in
                let dispatcher = dut.make()
                for other in [nil, stranger] {
                    let first = try await dut.send(dispatcher, request(server, pki, trusted))
                    let error = await runwayError { try await dut.send(dispatcher, request(server, pki, other)) }
                    let again = try await dut.send(dispatcher, request(server, pki, trusted))
                    #expect(Self.isRefusal(error), "\(String(describing: other)) after the trusted one: \(String(describing: error))")
                    #expect(first.status == 200 && again.status == 200)
                }
                // While a trusted request is in flight on the connection (HTTP/2 would multiplex).
                async let slow = dut.send(dispatcher, request(server, pki, trusted, path: "/delay?ms=300"))
                let error = await runwayError { try await dut.send(dispatcher, request(server, pki, nil)) }
                let slowStatus = try await slow.status
                #expect(Self.isRefusal(error), "\(String(describing: error))")
                #expect(slowStatus == 200)
                #expect(server.stats.totalRequests == 5)
            }
        }
    }

    @Test(
        "a client certificate that cannot be used is .configuration, and nothing is sent",
        arguments: DispatcherUnderTest.all(supporting: .clientCertificates))
    func clientCertificateUnusable(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let cases: [(String, ClientCertificate)] = [
            ("missing file", .pemFiles(certificate: pki.directory.appendingPathComponent("missing.pem").path)),
            ("not a certificate", .pemFiles(certificate: pki.directory.appendingPathComponent("client.ext").path)),
            ("garbage bytes", .pem(certificate: Data("not a certificate".utf8), privateKey: Data("nor a key".utf8))),
            ("another certificate's key", .pemFiles(certificate: pki.client.certificatePath, privateKey: pki.server.privateKeyPath)),
            ("no password", .pemFiles(certificate: pki.client.certificatePath, privateKey: pki.clientEncryptedKeyPath)),
            (
                "wrong password",
                .pemFiles(certificate: pki.client.certificatePath, privateKey: pki.clientEncryptedKeyPath, password: "wrong")
            ),
            ("PKCS #12, wrong password", .pkcs12File(pki.clientPKCS12Path, password: "wrong")),
            ("PKCS #12, legacy encryption", .pkcs12File(pki.clientLegacyPKCS12Path, password: pki.clientKeyPassword)),
            ("PEM read as PKCS #12", .pkcs12File(pki.client.certificatePath, password: nil)),
        ]
        try await withTestServer(tls: pki.server, clientCertificateAuthority: pki.clientCACertificatePath) { server in
            let dispatcher = dut.make()
            for (name, certificate) in cases {
                let error = await runwayError { try await dut.send(dispatcher, request(server, pki, certificate)) }
                #expect(error?.code == .configuration, "\(name): \(String(describing: error))")
                #expect(error?.field == "tls.clientCertificate", "\(name)")
                #expect(error?.neverSent == true, "\(name)")
                #expect(!(error?.message.contains(pki.clientKeyPassword) ?? false))
            }
            // A good certificate still works on the same dispatcher.
            let good = ClientCertificate.pemFiles(certificate: pki.client.certificatePath, privateKey: pki.client.privateKeyPath)
            let response = try await dut.send(dispatcher, request(server, pki, good))
            #expect(response.status == 200)
            #expect(server.stats.totalRequests == 1)
        }
    }

    @Test(
        "a dispatcher that cannot present a client certificate refuses it", arguments: DispatcherUnderTest.all(lacking: .clientCertificates)
    )
    func clientCertificateUnsupported(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        try await withTestServer(tls: pki.server) { server in
            let request = makeRequest(server.url("/json")) {
                $0.tls.clientCertificate = .pemFiles(certificate: pki.client.certificatePath, privateKey: pki.client.privateKeyPath)
            }
            let error = await runwayError { try await dut.send(dut.make(), request) }
            #expect(error?.code == .configuration)
            #expect(error?.field == "tls.clientCertificate")
            #expect(server.stats.totalRequests == 0)
        }
    }

    @Test("a service's client certificate goes with its calls; a caller's own wins")
    func serviceClientCertificate() async throws {
        let pki = try await TestPKI.load()
        let trusted = ClientCertificate.pemFiles(certificate: pki.client.certificatePath, privateKey: pki.client.privateKeyPath)
        let stranger = ClientCertificate.pemFiles(
            certificate: pki.strangerClient.certificatePath, privateKey: pki.strangerClient.privateKeyPath)
        try await withTestServer(tls: pki.server, clientCertificateAuthority: pki.clientCACertificatePath) { server in
            let base = server.baseURL.absoluteString
            var builder = ServiceRegistry.Builder(environment: .develop, pipeline: Pipeline(interceptors: [], dispatcher: CurlDispatcher()))
            builder.register(
                MutualTLSService(baseURLs: BaseURLs(develop: base, releaseCandidate: base, release: base), clientCertificate: trusted))
            let registry = try builder.build()
            var options = RequestOptions()
            options.tls.certificateAuthorities = .file(pki.caCertificatePath)

            let sent = try await registry.send(api: "json", of: MutualTLSService.serviceID, method: .get, options: options)
            #expect(sent.body == TestServer.fixedJSON)
            let loaded = try await MutualTLSAPIManager(engine: ManagerEngine(registry: registry), options: options).load()
            #expect(loaded == (try JSON(parsing: TestServer.fixedJSON)))

            options.tls.clientCertificate = stranger
            let error = await runwayError {
                try await registry.send(api: "json", of: MutualTLSService.serviceID, method: .get, options: options)
            }
            #expect(Self.isRefusal(error), "\(String(describing: error))")
            #expect(server.stats.totalRequests == 2)
        }
    }

    @Test("a client certificate's description shows neither its key nor its password")
    func clientCertificateDescription() throws {
        let key = Data("-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n".utf8)
        let certificate = ClientCertificate.pem(certificate: Data("cert".utf8), privateKey: key, password: "hunter2-password")
        var options = RequestOptions()
        options.tls.clientCertificate = certificate
        var dumped = ""
        dump(options, to: &dumped)
        for text in [certificate.description, String(describing: options), String(reflecting: options), dumped] {
            #expect(!text.contains("hunter2-password"), "\(text)")
            #expect(!text.contains("c2VjcmV0"), "\(text)")
        }
        #expect(ClientCertificate.pkcs12File("/etc/app/client.p12", password: "p").description.contains("/etc/app/client.p12"))
    }
}

/// A service whose calls present the client certificate the test sets.
struct MutualTLSService: Service {
    static let serviceID: ServiceID = "mutual-tls"
    let id = MutualTLSService.serviceID
    let baseURLs: BaseURLs
    let clientCertificate: ClientCertificate?
}

/// `GET json` of ``MutualTLSService``, with the test's request options.
final class MutualTLSAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "json"
    let serviceID = MutualTLSService.serviceID
    let requestOptions: RequestOptions

    init(engine: ManagerEngine, options: RequestOptions) {
        self.engine = engine
        requestOptions = options
    }
}
