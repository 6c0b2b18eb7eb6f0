import Foundation
import Runway
import Testing

@Suite struct RequestParametersTests {
    @Test func decodesQueryAndFormInOrder() throws {
        let request = try Request(
            method: .post, "https://api.test/p?b=2&a=x%20y&c",
            headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"],
            body: Data("z=1+2&a=%E4%B8%8A%E6%B5%B7".utf8))
        let parameters = RequestParameters(request)
        #expect(parameters.items.map(\.name) == ["b", "a", "c", "z", "a"])
        #expect(parameters.values(for: "a") == ["x y", "上海"])
        #expect(parameters.values(for: "z") == ["1 2"])
        #expect(parameters.values(for: "c") == [""])
    }

    @Test func jsonBodiesAreNotFormParameters() throws {
        let request = try Request(
            method: .post, "https://api.test/p", headers: ["Content-Type": "application/json"], body: Data("a=1".utf8))
        #expect(RequestParameters(request).isEmpty)
    }

    @Test func canonicalFormIsIndependentOfTheOrderOfNamesAndInjective() {
        let one = RequestParameters(percentEncodedQuery: "b=2&a=1&a=0", contentType: nil, body: nil)
        let two = RequestParameters(percentEncodedQuery: "a=1&b=2&a=0", contentType: nil, body: nil)
        #expect(one.canonicalForm == "a=1&a=0&b=2")
        #expect(one.canonicalForm == two.canonicalForm)
        // The values of one name keep their order: `a=0` first is another request.
        let turned = RequestParameters(percentEncodedQuery: "a=0&b=2&a=1", contentType: nil, body: nil)
        #expect(turned.canonicalForm == "a=0&a=1&b=2")
        let smuggled = RequestParameters(percentEncodedQuery: "a=1%26b%3D2", contentType: nil, body: nil)
        let plain = RequestParameters(percentEncodedQuery: "a=1&b=2", contentType: nil, body: nil)
        #expect(smuggled.canonicalForm != plain.canonicalForm)
        #expect(smuggled.canonicalForm == "a=1%26b%3D2")
        let spelled = RequestParameters(percentEncodedQuery: "n=%7e%41", contentType: nil, body: nil)
        #expect(spelled.canonicalForm == "n=~A")
    }

    @Test(arguments: [
        "a=1&b=2", "b=2&a=1", "a=1&a=0", "a=0&a=1&b=", "a-=1&a=2", "a=2&a-=1", "a&b=1", "a=1&&b=2", "a=1&",
        "&a=1", "a=b=c", "a=x%20y&b=1", "a=x+y", "=1", "", "page=2&city=Shanghai", "city=Shanghai&page=2&sort=price",
        "Z=1&a=1", "a=1&Z=1", "n=%7e%41",
    ])
    func canonicalFormOfAQueryMatchesTheDecodedOne(query: String) {
        let decoded = RequestParameters(percentEncodedQuery: query, contentType: nil, body: nil).canonicalForm
        #expect(RequestParameters.canonicalForm(percentEncodedQuery: Substring(query)) == decoded)
    }

    @Test func malformedEscapesSurvive() {
        let parameters = RequestParameters(percentEncodedQuery: "a=%zz&b=%4&c=100%", contentType: nil, body: nil)
        #expect(parameters.values(for: "a") == ["%zz"])
        #expect(parameters.values(for: "b") == ["%4"])
        #expect(parameters.values(for: "c") == ["100%"])
    }
}
