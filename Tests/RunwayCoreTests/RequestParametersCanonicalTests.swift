import Foundation
import Runway
import Testing

@Suite struct RequestParametersCanonicalTests {
    @Test(arguments: [
        "", "a=1", "a=", "a=&b=", "a=1&b=2", "a=1&a=1", "a=1&a=2", "a=2&a=1", "a=10&a=9", "a=9&a=10", "B=1&a=1", "a=1&ab=1",
        "a-._~=Z9",
    ])
    func canonicalQueries(_ query: String) {
        #expect(RequestParameters.isCanonical(Substring(query)))
        #expect(RequestParameters.canonicalForm(percentEncodedQuery: Substring(query)) == query)
    }

    @Test(arguments: [
        "b=2&a=1", "a=1&B=1", "ab=1&a=1", "a=2&b=1&a=1",  // names out of order (by bytes)
        "a", "=1", "a=1&", "&a=1", "a=1&&b=2", "a==1", "a=1=2",  // not name=value pieces
        "a=%20", "a=b+c", "a=é", "a b=1", "a=1#f",  // characters that are not unreserved
    ])
    func nonCanonicalQueries(_ query: String) {
        #expect(!RequestParameters.isCanonical(Substring(query)))
    }

    /// A server that reads one value of a name reads the first (or the last): the values of a name
    /// keep the order they were sent in, so `a=1&a=2` and `a=2&a=1` never share a signature or a
    /// cache entry.
    @Test func theValuesOfOneNameKeepTheirOrder() {
        #expect(RequestParameters.canonicalForm(percentEncodedQuery: "b=1&a=2&a=1&b=0") == "a=2&a=1&b=1&b=0")
        #expect(
            RequestParameters.canonicalForm(percentEncodedQuery: "a=2&a=1")
                != RequestParameters.canonicalForm(percentEncodedQuery: "a=1&a=2"))
        #expect(RequestParameters.canonicalForm(percentEncodedQuery: "a=%20&c=1&a=x") == "a=%20&a=x&c=1")
        let items = (0..<40).map { RequestParameters.Item(name: $0 % 2 == 0 ? "k" : "j", value: String($0)) }
        let form = RequestParameters(items).canonicalForm
        #expect(
            form
                == (items.filter { $0.name == "j" } + items.filter { $0.name == "k" }).map { "\($0.name)=\($0.value)" }.joined(
                    separator: "&"))
    }

    @Test func aSubstringIsReadWithinItsBounds() {
        let url = "https://api.test/x?a=1&b=2#c=0"
        let query = url[url.index(after: url.firstIndex(of: "?")!)..<url.firstIndex(of: "#")!]
        #expect(RequestParameters.isCanonical(query))
        #expect(!RequestParameters.isCanonical(url[url.firstIndex(of: "?")!...]))
    }

    @Test func theCanonicalFormOfAnyParametersIsItsOwnCanonicalForm() {
        let names = ["a", "B", "ab", "é", "x y", "-"]
        let values = ["", "1", "10", "9", "+", "%", "两"]
        var items: [RequestParameters.Item] = []
        for (index, name) in names.enumerated() {
            for value in values.shuffled().prefix(index % 3 + 1) { items.append(.init(name: name, value: value)) }
        }
        for _ in 0..<20 {
            let form = RequestParameters(items.shuffled()).canonicalForm
            // Escapes are canonical too, but only a query of unreserved characters is taken as it is.
            #expect(RequestParameters.isCanonical(Substring(form)) == !form.contains("%"), "\(form)")
            #expect(RequestParameters.canonicalForm(percentEncodedQuery: Substring(form)) == form)
        }
    }
}
