import Foundation
import Runway
import Testing

/// `Redaction` reads and writes JSON with Runway's own `JSON` (it used `JSONSerialization`),
/// decodes names with its own percent-decoding, and quotes nothing itself.
@Suite("Redaction")
struct RedactionTests {
    let redaction = Redaction.standard

    @Test("JSON: hidden values replaced at any depth, keys sorted, numbers as they were typed")
    func json() throws {
        let body = Data(
            #"{"user":"li","password":"p","nested":{"items":[{"token":"t","id":1},{"ratio":1.5}]},"list":[1,2.0,null,true],"n":-0}"#
                .utf8)
        #expect(
            redaction.applyToJSON(body)
                == #"{"list":[1,2.0,null,true],"n":0,"nested":{"items":[{"id":1,"token":"<redacted>"},{"ratio":1.5}]},"#
                + #""password":"<redacted>","user":"li"}"#)
        #expect(redaction.applyToJSON(Data(#""just a string""#.utf8)) == #""just a string""#)
        #expect(redaction.applyToJSON(Data(#"{"a":"\u00e9\n\"/"}"#.utf8)) == #"{"a":"é\n\"/"}"#)
        #expect(redaction.applyToJSON(Data("{\"a\":".utf8)) == nil)
        #expect(redaction.applyToJSON(Data("not json".utf8)) == nil)
    }

    @Test("forms and URLs: names are percent-decoded (a + is a space in a form) before they are matched")
    func formsAndURLs() throws {
        #expect(
            redaction.applyToForm("access%5Ftoken=abc&page=2&pass+word=x&bad%ZZ=1")
                == "access%5Ftoken=<redacted>&page=2&pass+word=<redacted>&bad%ZZ=1")
        let url = try #require(URL(string: "https://u:secret@api.test/a?access%5Ftoken=abc&page=2"))
        #expect(redaction.apply(to: url) == "https://u:redacted@api.test/a?access%5Ftoken=<redacted>&page=2")
    }
}
