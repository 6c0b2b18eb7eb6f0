import RunwayDNSBypass
import Testing

@Suite struct EndpointTests {
    @Test func parsesIPv4AndIPv6WithAndWithoutPorts() throws {
        #expect(try Endpoint("203.0.113.7").description == "203.0.113.7")
        #expect(try Endpoint("203.0.113.7:8443").port == 8443)
        #expect(try Endpoint("2001:db8::7").isIPv6)
        #expect(try Endpoint("2001:db8::7").port == nil)
        let bracketed = try Endpoint("[::1]:9000")
        #expect(bracketed.address == "::1" && bracketed.port == 9000 && bracketed.description == "[::1]:9000")
    }

    @Test(arguments: [
        (" 203.0.113.7", "203.0.113.7"), ("203.0.113.7\n", "203.0.113.7"), ("\t203.0.113.7:8443\r\n", "203.0.113.7:8443"),
        ("  [::1]:9000  ", "[::1]:9000"), ("2001:db8::7\r\n", "[2001:db8::7]"),
    ])
    func ignoresBlanksAndLineBreaksAroundTheAddress(text: String, parsed: String) throws {
        #expect(try Endpoint(text).description == parsed)
    }

    @Test(arguments: [
        "", " ", "\r\n", "1.2.3.4 :80", "1.2.3.4\n5", "1.2. 3.4", "api.example.com", "256.1.1.1", "1.2.3.4:0", "1.2.3.4:70000",
        "1.2.3.4:http", "[::1", "[::1]x", "1.2.3",
    ])
    func rejectsWhatIsNotAnIPLiteral(text: String) {
        #expect(throws: DNSBypassError.invalidEndpoint(text)) { try Endpoint(text) }
    }
}
