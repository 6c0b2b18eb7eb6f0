import Foundation

/// A test certificate authority and server certificates, generated with the `openssl` command
/// line into a temporary directory, once per test process.
///
/// ```swift
/// let pki = try await TestPKI.load()
/// let server = try await TestServer.start(tls: pki.server)
/// request.options.tls.certificateAuthorities = .file(pki.caCertificatePath)
/// request.options.tls.pinnedPublicKeys = [pki.serverKeyPin]
/// ```
public struct TestPKI: Sendable {
    /// A certificate (PEM file) and its private key (PEM file).
    public struct Identity: Sendable, Equatable {
        /// The certificate file.
        public let certificatePath: String
        /// The private key file.
        public let privateKeyPath: String
    }

    /// The directory holding every file.
    public let directory: URL
    /// The test CA's certificate (PEM), to trust in clients.
    public let caCertificatePath: String
    /// For `127.0.0.1`, `localhost` and `api.runway.test`, signed by the test CA.
    public let server: Identity
    /// For `other.example` only, signed by the test CA: a name mismatch for every test URL.
    public let otherName: Identity
    /// With `IP:127.0.0.1` as its only subject alternative name, signed by the test CA.
    public let ipOnly: Identity
    /// The pin of ``server``'s public key: `sha256//` and the base64 SHA-256 of its
    /// SubjectPublicKeyInfo (libcurl's `CURLOPT_PINNEDPUBLICKEY` format).
    public let serverKeyPin: String
    /// The pin of another key (``otherName``'s), for pin-mismatch tests.
    public let otherKeyPin: String
    /// A second CA, which signs client certificates only: the one a server that asks for client
    /// certificates trusts (`TestServer.start(clientCertificateAuthority:)`).
    public let clientCACertificatePath: String
    /// A client certificate (`CN=runway-client`) signed by the client CA, and its key.
    public let client: Identity
    /// A client certificate (`CN=stranger`) signed by the server CA, which a server trusting the
    /// client CA refuses.
    public let strangerClient: Identity
    /// ``client``'s key, encrypted (AES-256) with ``clientKeyPassword``.
    public let clientEncryptedKeyPath: String
    /// ``client``'s certificate and key as a PKCS #12 bundle, encrypted with ``clientKeyPassword``.
    public let clientPKCS12Path: String
    /// ``clientPKCS12Path`` encrypted with the legacy algorithms (RC2, 3DES) OpenSSL 3 does not read.
    public let clientLegacyPKCS12Path: String
    /// The password of ``clientEncryptedKeyPath``, ``clientPKCS12Path`` and ``clientLegacyPKCS12Path``.
    public let clientKeyPassword = "runway-test-password"

    /// The PEM bytes of the CA certificate.
    public var caCertificatePEM: Data {
        get throws { try Data(contentsOf: URL(fileURLWithPath: caCertificatePath)) }
    }

    private static let cached: Result<TestPKI, any Error> = Result {
        let pki = try TestPKI.generate()
        // Removed when the process exits, so test runs leave no directory behind.
        atexit {
            guard case .success(let pki) = TestPKI.cached else { return }
            try? FileManager.default.removeItem(at: pki.directory)
        }
        return pki
    }

    /// The process-wide PKI, generated on first use; safe to call from parallel tests.
    ///
    /// The first call blocks its thread while `openssl` runs (about a second); in async tests
    /// prefer ``load()``, which waits without holding a thread of the cooperative pool that
    /// the in-process server needs.
    public static func shared() throws -> TestPKI {
        try cached.get()
    }

    /// The process-wide PKI, generated on first use on a thread of its own.
    public static func load() async throws -> TestPKI {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: cached) }
        }
    }

    /// Generates a fresh PKI in a new temporary directory.
    public static func generate() throws -> TestPKI {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("runway-test-pki-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let openssl = OpenSSLRunner(directory: directory)

        try openssl.run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "3650", "-subj", "/CN=Runway Test CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        let server = try openssl.issue(
            name: "server", subject: "/CN=api.runway.test",
            altNames: "DNS:api.runway.test,DNS:localhost,IP:127.0.0.1")
        let other = try openssl.issue(name: "other", subject: "/CN=other.example", altNames: "DNS:other.example")
        let ipOnly = try openssl.issue(name: "ip-only", subject: "/CN=127.0.0.1", altNames: "IP:127.0.0.1")

        try openssl.run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "client-ca.key", "-out", "client-ca.pem", "-days", "3650", "-subj", "/CN=Runway Test Client CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        let client = try openssl.issue(name: "client", subject: "/CN=runway-client", ca: "client-ca", usage: "clientAuth")
        let stranger = try openssl.issue(name: "stranger", subject: "/CN=stranger", usage: "clientAuth")
        let password = "pass:runway-test-password"
        try openssl.run(["pkey", "-in", "client.key", "-aes256", "-passout", password, "-out", "client-encrypted.key"])
        try openssl.run([
            "pkcs12", "-export", "-in", "client.pem", "-inkey", "client.key", "-passout", password, "-out", "client.p12",
        ])
        try openssl.run([
            "pkcs12", "-export", "-legacy", "-in", "client.pem", "-inkey", "client.key", "-passout", password, "-out", "client-legacy.p12",
        ])

        let path = { (name: String) in directory.appendingPathComponent(name).path }
        return TestPKI(
            directory: directory,
            caCertificatePath: path("ca.pem"),
            server: server, otherName: other, ipOnly: ipOnly,
            serverKeyPin: try openssl.pin(ofKey: "server.key"),
            otherKeyPin: try openssl.pin(ofKey: "other.key"),
            clientCACertificatePath: path("client-ca.pem"), client: client, strangerClient: stranger,
            clientEncryptedKeyPath: path("client-encrypted.key"), clientPKCS12Path: path("client.p12"),
            clientLegacyPKCS12Path: path("client-legacy.p12"))
    }
}

/// Runs `openssl` in the PKI directory.
private struct OpenSSLRunner {
    let directory: URL

    /// Makes a key and a certificate for `altNames` (none for a client's), signed by the CA
    /// `ca` (`ca.pem`/`ca.key` by default), for `usage` (`serverAuth`, `clientAuth`).
    func issue(name: String, subject: String, altNames: String? = nil, ca: String = "ca", usage: String = "serverAuth") throws
        -> TestPKI.Identity
    {
        let extensions = """
            basicConstraints=CA:FALSE
            keyUsage=critical,digitalSignature,keyEncipherment
            extendedKeyUsage=\(usage)
            \(altNames.map { "subjectAltName=" + $0 } ?? "")

            """
        try Data(extensions.utf8).write(to: directory.appendingPathComponent("\(name).ext"))
        try run([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "\(name).key", "-out", "\(name).csr", "-subj", subject,
        ])
        try run([
            "x509", "-req", "-in", "\(name).csr", "-CA", "\(ca).pem", "-CAkey", "\(ca).key", "-set_serial",
            String(UInt32.random(in: 1...UInt32.max)), "-days", "825", "-sha256",
            "-extfile", "\(name).ext", "-out", "\(name).pem",
        ])
        return TestPKI.Identity(
            certificatePath: directory.appendingPathComponent("\(name).pem").path,
            privateKeyPath: directory.appendingPathComponent("\(name).key").path)
    }

    /// `sha256//` + base64 of the SHA-256 of the key's DER SubjectPublicKeyInfo.
    func pin(ofKey keyFile: String) throws -> String {
        try run(["pkey", "-in", keyFile, "-pubout", "-outform", "DER", "-out", "\(keyFile).spki.der"])
        try run(["dgst", "-sha256", "-binary", "-out", "\(keyFile).spki.sha256", "\(keyFile).spki.der"])
        let digest = try Data(contentsOf: directory.appendingPathComponent("\(keyFile).spki.sha256"))
        guard digest.count == 32 else {
            throw TestServerError("openssl produced a \(digest.count)-byte SHA-256 digest")
        }
        return "sha256//" + digest.base64EncodedString()
    }

    func run(_ arguments: [String]) throws {
        let openssl = try ChildProcess(
            "/usr/bin/env", ["openssl"] + arguments, currentDirectory: directory.path, standardOutput: .null, standardError: .pipe)
        let output = openssl.standardError.map(readToEnd) ?? Data()
        let exit = openssl.waitForExitBlocking()
        guard exit == .exited(0) else {
            throw TestServerError(
                "openssl \(arguments.joined(separator: " ")) failed (\(exit)): " + (String(data: output, encoding: .utf8) ?? ""))
        }
    }
}
