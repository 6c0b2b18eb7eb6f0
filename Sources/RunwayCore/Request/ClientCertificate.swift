#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A client certificate and its private key, presented when a server asks for one (mutual TLS).
///
/// Set it in ``TLSOptions/clientCertificate``, for one request or for every call of a service
/// through its request options:
/// ```swift
/// var options = RequestOptions()
/// options.tls.clientCertificate = .pemFiles(certificate: "/etc/app/client.pem", privateKey: "/etc/app/client.key")
/// ```
/// The certificate file may hold the intermediate certificates after the client's own, which
/// are sent along with it. A connection is only reused by a request with the same client
/// certificate, so a request never goes out on a connection made with another identity.
///
/// Neither the key nor its password ever appears in a description, a log or an error message.
public struct ClientCertificate: Sendable, Hashable {
    enum Source: Sendable, Hashable {
        case pemFiles(certificate: String, privateKey: String?)
        case pem(certificate: Data, privateKey: Data?)
        case pkcs12File(String)
        case pkcs12(Data)
    }

    let source: Source
    /// The password of an encrypted private key or PKCS #12 bundle. Kept out of every description.
    public let keyPassword: String?

    /// A PEM certificate file and its PEM private key file.
    /// - Parameters:
    ///   - certificate: The certificate's path; intermediate certificates may follow it.
    ///   - privateKey: The private key's path; `nil` when the key is in the certificate file.
    ///   - password: The password of an encrypted private key.
    public static func pemFiles(certificate: String, privateKey: String? = nil, password: String? = nil) -> ClientCertificate {
        ClientCertificate(source: .pemFiles(certificate: certificate, privateKey: privateKey), keyPassword: password)
    }

    /// A PEM certificate and its PEM private key, in memory.
    /// - Parameters:
    ///   - certificate: The certificate's PEM bytes; intermediate certificates may follow it.
    ///   - privateKey: The private key's PEM bytes; `nil` when the key is in `certificate`.
    ///   - password: The password of an encrypted private key.
    public static func pem(certificate: Data, privateKey: Data? = nil, password: String? = nil) -> ClientCertificate {
        ClientCertificate(source: .pem(certificate: certificate, privateKey: privateKey), keyPassword: password)
    }

    /// A PKCS #12 bundle file (`.p12`, `.pfx`) holding the certificate and its private key.
    ///
    /// OpenSSL 3 (which libcurl uses on Linux) does not read a bundle encrypted with the legacy
    /// algorithms older tools export with (RC2, 3DES): `CurlDispatcher` fails such a request
    /// with `.configuration`. Convert the bundle once:
    /// `openssl pkcs12 -legacy -in old.p12 -nodes | openssl pkcs12 -export -out new.p12`.
    public static func pkcs12File(_ path: String, password: String?) -> ClientCertificate {
        ClientCertificate(source: .pkcs12File(path), keyPassword: password)
    }

    /// A PKCS #12 bundle in memory, holding the certificate and its private key.
    public static func pkcs12(_ data: Data, password: String?) -> ClientCertificate {
        ClientCertificate(source: .pkcs12(data), keyPassword: password)
    }

    /// Whether the certificate and key are PKCS #12 rather than PEM.
    public var isPKCS12: Bool {
        switch source {
        case .pkcs12File, .pkcs12: true
        case .pemFiles, .pem: false
        }
    }

    /// The files the certificate and key are read from (the key's, when apart), or none when
    /// they are in memory.
    public var filePaths: [String] {
        switch source {
        case .pemFiles(let certificate, let privateKey): [certificate] + (privateKey.map { [$0] } ?? [])
        case .pkcs12File(let path): [path]
        case .pem, .pkcs12: []
        }
    }

    /// The certificate's bytes, when in memory: PEM (a private key may follow) or PKCS #12.
    public var certificateData: Data? {
        switch source {
        case .pem(let certificate, _): certificate
        case .pkcs12(let data): data
        case .pemFiles, .pkcs12File: nil
        }
    }

    /// The private key's PEM bytes, when in memory and apart from the certificate.
    public var privateKeyData: Data? {
        if case .pem(_, let key) = source { key } else { nil }
    }
}

extension ClientCertificate: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The kind and the files, never the key, the bytes or the password.
    public var description: String {
        let secret = keyPassword == nil ? "" : ", password: <redacted>"
        switch source {
        case .pemFiles(let certificate, let key):
            return "ClientCertificate(PEM file \(certificate)\(key.map { ", key file \($0)" } ?? "")\(secret))"
        case .pem(let certificate, let key):
            return "ClientCertificate(PEM, \(certificate.count) bytes\(key.map { ", key \($0.count) bytes" } ?? "")\(secret))"
        case .pkcs12File(let path):
            return "ClientCertificate(PKCS #12 file \(path)\(secret))"
        case .pkcs12(let data):
            return "ClientCertificate(PKCS #12, \(data.count) bytes\(secret))"
        }
    }

    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the description alone.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .struct)
    }
}
