import Foundation
import Runway
import Testing

@Suite struct RequestParametersExactTests {
    @Test func undecodableQueriesAreFlaggedAndKeepTheirOwnCanonicalForm() {
        for query in ["q=%FF", "q=%C3", "q=%ZZ", "a=1&q=%"] {
            let parameters = RequestParameters(percentEncodedQuery: query, contentType: nil, body: nil)
            #expect(!parameters.isExactlyDecoded, "\(query)")
            #expect(RequestParameters.canonicalForm(percentEncodedQuery: Substring(query)) == query)
        }
        #expect(
            RequestParameters.canonicalForm(percentEncodedQuery: "q=%FF") != RequestParameters.canonicalForm(percentEncodedQuery: "q=%FE"))
        let exact = RequestParameters(percentEncodedQuery: "b=%E4%B8%8A&a=x+y%25", contentType: nil, body: nil)
        #expect(exact.isExactlyDecoded)
        #expect(exact.canonicalForm == "a=x%20y%25&b=%E4%B8%8A")
    }
}
