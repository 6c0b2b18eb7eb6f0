import Foundation
import Runway
import Synchronization
import Testing

/// The jar's rules, through its public API: what a `Set-Cookie` from a URL stores, and what goes
/// back to which URL.
@Suite struct CookieJarTests {
    /// A clock the test moves.
    final class Clock: Sendable {
        private let seconds = Atomic<Int>(0)
        static let start = Date(timeIntervalSince1970: 2_000_000_000)

        func now() -> Date { Self.start.addingTimeInterval(TimeInterval(seconds.load(ordering: .relaxed))) }
        func advance(_ by: Int) { seconds.add(by, ordering: .relaxed) }
    }

    private func url(_ text: String) -> URL { URL(string: text)! }

    private func header(_ jar: CookieJar, _ text: String) -> String? { jar.cookieHeader(for: url(text)) }

    @Test func hostOnlyCookiesGoToTheirHostAndPathOnly() {
        let jar = CookieJar()
        jar.store(setCookie: ["sid=abc; Path=/; HttpOnly", "pref=dark", "deep=1; Path=/a/b"], from: url("https://api.example.com/a/b/c"))
        // `pref` has no Path: the default is the URL's path up to its last slash, /a/b.
        #expect(header(jar, "https://api.example.com/a/b") == "pref=dark; deep=1; sid=abc")
        #expect(header(jar, "https://api.example.com/a/b/x/y") == "pref=dark; deep=1; sid=abc")
        #expect(header(jar, "https://api.example.com/a/bc") == "sid=abc")
        #expect(header(jar, "http://api.example.com:8080/") == "sid=abc")  // ports and schemes do not separate cookies
        #expect(header(jar, "https://www.api.example.com/") == nil)
        #expect(header(jar, "https://example.com/") == nil)
        #expect(header(jar, "https://API.Example.COM./") == "sid=abc")
        #expect(header(jar, "ftp://api.example.com/") == nil)
    }

    @Test func aDomainCookieGoesToTheDomainAndItsSubdomains() {
        let jar = CookieJar()
        jar.store(setCookie: ["d=1; Domain=.Example.com"], from: url("https://api.example.com/"))
        #expect(jar.cookies.first?.domain == "example.com")
        #expect(jar.cookies.first?.hostOnly == false)
        for target in ["https://example.com/", "https://www.example.com/x", "https://a.b.example.com/"] {
            #expect(header(jar, target) == "d=1", "\(target)")
        }
        for target in ["https://notexample.com/", "https://example.org/", "https://example.com.evil.test/"] {
            #expect(header(jar, target) == nil, "\(target)")
        }
    }

    @Test(arguments: [
        ("a=1; Domain=other.com", "https://api.example.com/"),  // not a domain of the host
        ("a=1; Domain=www.api.example.com", "https://api.example.com/"),  // a subdomain of the host
        ("a=1; Domain=com", "https://example.com/"),  // one label
        ("a=1; Domain=0.1", "http://127.0.0.1/"),  // from an address, a domain other than it
        ("a=1; Domain=localhost", "http://127.0.0.1/"),
        ("a=1; Secure", "http://api.example.com/"),  // Secure from plain HTTP
        ("novalue", "https://api.example.com/"),
        ("=1", "https://api.example.com/"),
        ("a=1\u{01}; Path=/", "https://api.example.com/"),
        ("a=\(String(repeating: "x", count: 4_096))", "https://api.example.com/"),
    ])
    func refusedCookiesAreNotKept(setCookie: String, from: String) {
        let jar = CookieJar()
        jar.store(setCookie: [setCookie, "kept=1"], from: url(from))
        #expect(jar.cookies.map(\.name) == ["kept"])
    }

    /// A public suffix (the Public Suffix List's rules, wildcards and internationalized names in
    /// their `xn--` form included) is no domain for a cookie.
    @Test(arguments: [
        ("a=1; Domain=co.uk", "https://shop.example.co.uk/"),
        ("a=1; Domain=.CO.UK", "https://shop.example.co.uk/"),
        ("a=1; Domain=github.io", "https://me.github.io/"),  // the list's private section
        ("a=1; Domain=foo.ck", "https://www.foo.ck/"),  // *.ck
        ("a=1; Domain=b.kawasaki.jp", "https://a.b.kawasaki.jp/"),  // *.kawasaki.jp
        ("a=1; Domain=xn--55qx5d.cn", "https://shop.xn--55qx5d.cn/"),  // 公司.cn
        ("a=1; Domain=公司.cn", "https://shop.公司.cn/"),
        ("a=1; Domain=localhost", "http://api.localhost/"),  // one label
    ])
    func publicSuffixesAreNoCookieDomain(setCookie: String, from: String) {
        let jar = CookieJar()
        jar.store(setCookie: [setCookie, "kept=1"], from: url(from))
        #expect(jar.cookies.map(\.name) == ["kept"])
    }

    @Test(arguments: [
        ("example.co.uk", "https://shop.example.co.uk/", "https://www.example.co.uk/", "https://other.co.uk/"),
        ("me.github.io", "https://api.me.github.io/", "https://me.github.io/", "https://you.github.io/"),
        ("www.ck", "https://a.www.ck/", "https://b.www.ck/", "https://foo.ck/"),  // !www.ck: an exception to *.ck
        ("city.kawasaki.jp", "https://a.city.kawasaki.jp/", "https://b.city.kawasaki.jp/", "https://c.kawasaki.jp/"),
        ("shop.xn--55qx5d.cn", "https://www.shop.xn--55qx5d.cn/", "https://shop.xn--55qx5d.cn/", "https://xn--55qx5d.cn/"),
    ])
    func aDomainJustUnderAPublicSuffixIsKept(domain: String, from: String, sentTo: String, notSentTo: String) {
        let jar = CookieJar()
        jar.store(setCookie: ["d=1; Domain=\(domain)"], from: url(from))
        #expect(jar.cookies.map(\.domain) == [domain])
        #expect(header(jar, sentTo) == "d=1")
        #expect(header(jar, notSentTo) == nil)
    }

    @Test func aHostThatIsAPublicSuffixKeepsTheCookieItNamesItselfFor() {
        let jar = CookieJar()
        jar.store(setCookie: ["own=1; Domain=github.io"], from: url("https://github.io/"))
        #expect(jar.cookies.first?.hostOnly == true)
        #expect(header(jar, "https://github.io/") == "own=1")
        #expect(header(jar, "https://me.github.io/") == nil)
    }

    @Test func aRestoredDomainCookieForAPublicSuffixGoesToThatHostAlone() {
        let jar = CookieJar(cookies: [
            Cookie(name: "wide", value: "1", domain: ".co.uk", hostOnly: false),
            Cookie(name: "site", value: "1", domain: "example.co.uk", hostOnly: false),
        ])
        #expect(jar.cookies.first { $0.name == "wide" }?.hostOnly == true)
        #expect(header(jar, "https://shop.example.co.uk/") == "site=1")
        #expect(header(jar, "https://co.uk/") == "wide=1")
    }

    @Test func aRestoredDomainOfAMillionBytesIsReadInOnePass() {
        // A corrupt file: the public suffix check must not try each of its 500,000 suffixes.
        let long = String(repeating: "a.", count: 500_000) + "com"
        let jar = CookieJar(cookies: [Cookie(name: "long", value: "1", domain: long, hostOnly: false)])
        #expect(jar.cookies.first?.hostOnly == false)
        #expect(header(jar, "https://a.com/") == nil)
    }

    @Test func anAddressKeepsItsOwnCookiesAndADomainOfItsOwnNameIsAllowed() {
        let jar = CookieJar()
        jar.store(setCookie: ["a=1; Domain=127.0.0.1"], from: url("http://127.0.0.1:8080/"))
        #expect(header(jar, "http://127.0.0.1:9090/") == "a=1")
        #expect(jar.cookies.first?.hostOnly == true)
        jar.store(setCookie: ["v6=1"], from: url("http://[::1]:8080/"))
        #expect(header(jar, "http://[::1]/") == "v6=1")
        #expect(header(jar, "http://127.0.0.1/") == "a=1")
    }

    @Test func secureCookiesGoOverHTTPSOnlyAndAreNotShadowedFromHTTP() {
        let jar = CookieJar()
        jar.store(setCookie: ["id=secret; Secure", "open=1"], from: url("https://api.example.com/"))
        #expect(header(jar, "https://api.example.com/") == "id=secret; open=1")
        #expect(header(jar, "http://api.example.com/") == "open=1")
        // Plain HTTP may not replace it, nor set one of its name for a narrower path.
        jar.store(setCookie: ["id=forged", "id=forged; Path=/x"], from: url("http://api.example.com/x/y"))
        #expect(header(jar, "https://api.example.com/x/z") == "id=secret; open=1")
    }

    @Test func expiryComesFromMaxAgeBeforeExpires() throws {
        let clock = Clock()
        let jar = CookieJar(now: clock.now)
        let origin = url("https://api.example.com/")
        jar.store(
            setCookie: [
                "both=1; Expires=Wed, 21 Oct 2065 07:28:00 GMT; Max-Age=60", "rfc850=1; Expires=Wednesday, 21-Oct-65 07:28:00 GMT",
                "asctime=1; expires=Wed Oct 21 07:28:00 2065", "badDate=1; Expires=Wed, 31 Feb 2065 07:28:00 GMT",
                "badAge=1; Max-Age=12abc", "far=1; Max-Age=999999999999999999999",
            ], from: origin)
        let byName = Dictionary(uniqueKeysWithValues: jar.cookies.map { ($0.name, $0) })
        #expect(byName["both"]?.expires == Clock.start.addingTimeInterval(60))
        // 2065 is further than 400 days ahead: brought back to 400 days.
        let limit = Clock.start.addingTimeInterval(400 * 86_400)
        #expect(byName["rfc850"]?.expires == limit)
        #expect(byName["asctime"]?.expires == limit)
        #expect(byName["far"]?.expires == limit)
        #expect(byName["badDate"]?.expires == nil)
        #expect(byName["badAge"]?.expires == nil)

        clock.advance(61)
        #expect(jar.cookies(for: origin).contains { $0.name == "both" } == false)
        #expect(jar.cookies.count == 5)
    }

    @Test func cookieDatesAreReadLeniently() {
        let clock = Clock()
        let jar = CookieJar(now: clock.now)
        // Within 400 days of the clock's start (2033-05-18): kept as written.
        let dates = [
            "Thu, 01 Sep 2033 10:20:30 GMT", "Thursday, 01-Sep-33 10:20:30 GMT", "Thu Sep  1 10:20:30 2033", "1 sep 2033 10:20:30",
            "2033 Sep 01 10:20:30 UTC",
        ]
        jar.store(setCookie: dates.enumerated().map { "c\($0.offset)=1; Expires=\($0.element)" }, from: url("https://a.example.com/"))
        let expected = ISO8601DateFormatter().date(from: "2033-09-01T10:20:30Z")
        #expect(jar.cookies.count == dates.count)
        for cookie in jar.cookies { #expect(cookie.expires == expected, "\(cookie.name)") }
        // Out of range: the attribute is ignored, the cookie is a session cookie.
        for (index, bad) in ["Thu, 01 Sep 1600 10:20:30 GMT", "Thu, 01 Sep 2033 24:00:00 GMT", "Thu, 32 Sep 2033 10:20:30", "tomorrow"]
            .enumerated()
        {
            jar.store(setCookie: ["bad\(index)=1; Expires=\(bad)"], from: url("https://a.example.com/"))
        }
        #expect(jar.cookies.filter { $0.name.hasPrefix("bad") }.allSatisfy { $0.expires == nil })
    }

    @Test func aCookieIsReplacedByNameDomainAndPathAndRemovedByAPastExpiry() {
        let clock = Clock()
        let jar = CookieJar(now: clock.now)
        let origin = url("https://api.example.com/")
        jar.store(setCookie: ["a=1", "b=1"], from: origin)
        clock.advance(5)
        jar.store(setCookie: ["b=2", "a=2; Path=/x"], from: origin)
        // The longer path first; `b` kept its creation time and its place after `a`.
        #expect(header(jar, "https://api.example.com/x") == "a=2; a=1; b=2")
        jar.store(setCookie: ["a=; Max-Age=0", "b=; Expires=Thu, 01 Jan 1970 00:00:00 GMT"], from: origin)
        #expect(header(jar, "https://api.example.com/x") == "a=2")
    }

    @Test func aDomainKeepsAtMostFiftyCookiesDroppingThoseSetLongestAgo() {
        let jar = CookieJar()
        let origin = url("https://api.example.com/")
        for index in 0..<60 {
            jar.store(setCookie: ["c\(index)=1"], from: origin)
            // The first cookie is set again and again: it is not among the dropped.
            if index > 0 { jar.store(setCookie: ["c0=\(index)"], from: origin) }
        }
        let names = Set(jar.cookies.map(\.name))
        #expect(names.count == CookieJar.maximumCookiesPerDomain)
        #expect(names == Set(([0] + Array(11..<60)).map { "c\($0)" }))
    }

    @Test func cookiesSurviveARoundTripThroughCodable() throws {
        let jar = CookieJar()
        jar.store(
            setCookie: ["sid=abc; Secure; HttpOnly; Max-Age=3600", "d=1; Domain=example.com; Path=/v1"],
            from: url("https://api.example.com/"))
        let saved = try JSONEncoder().encode(jar.cookies)
        let restored = CookieJar(cookies: try JSONDecoder().decode([Cookie].self, from: saved))
        #expect(Set(restored.cookies) == Set(jar.cookies))
        #expect(restored.cookieHeader(for: url("https://www.example.com/v1/x")) == "d=1")
        #expect(restored.cookieHeader(for: url("https://api.example.com/v1")) == "d=1; sid=abc")
    }

    @Test func restoredCookiesThatExpiredAreDropped() {
        let clock = Clock()
        let old = Cookie(name: "old", value: "1", domain: "Example.com", expires: Clock.start.addingTimeInterval(-1))
        let fresh = Cookie(name: "fresh", value: "1", domain: "Example.com")
        let jar = CookieJar(cookies: [old, fresh], now: clock.now)
        #expect(jar.cookies.map(\.name) == ["fresh"])
        #expect(jar.cookies.first?.domain == "example.com")
    }

    @Test func removing() {
        let jar = CookieJar()
        jar.store(setCookie: ["s=1", "p=1; Max-Age=60"], from: url("https://a.example.com/"))
        jar.store(setCookie: ["s=1"], from: url("https://b.example.com/"))
        jar.remove { $0.domain == "b.example.com" }
        #expect(jar.cookies.count == 2)
        jar.removeSessionCookies()
        #expect(jar.cookies.map(\.name) == ["p"])
        jar.removeAll()
        #expect(jar.cookies.isEmpty)
    }

    @Test func descriptionsNeverShowTheValue() {
        let jar = CookieJar()
        jar.store(setCookie: ["sid=TOP-SECRET-VALUE; Secure"], from: url("https://api.example.com/"))
        let cookie = jar.cookies[0]
        var dumped = ""
        dump(cookie, to: &dumped)
        for text in [cookie.description, cookie.debugDescription, String(reflecting: cookie), "\(cookie)", dumped] {
            #expect(!text.contains("TOP-SECRET"), "\(text)")
            #expect(text.contains("sid"))
        }
    }

    @Test func concurrentStoresAndReadsKeepTheJarWhole() async {
        let jar = CookieJar()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<200 {
                        jar.store(setCookie: ["w\(worker)=\(index)"], from: URL(string: "https://w\(worker).example.com/")!)
                        _ = jar.cookieHeader(for: URL(string: "https://w\((worker + 1) % 8).example.com/")!)
                    }
                }
            }
        }
        #expect(jar.cookies.count == 8)
        #expect(jar.cookieHeader(for: url("https://w3.example.com/")) == "w3=199")
    }
}
