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

    @Test("XML: hidden elements' content and hidden attributes' values, cut or odd markup hiding no less")
    func xml() throws {
        let cases: [(String, String)] = [
            ("<a><token>t<token>u</token>v</token><b>1</b></a>", "<a><token><redacted></token><b>1</b></a>"),
            (#"<a token=t1 id=2/><pin/><x:pin a="1">9</x:pin>"#, #"<a token=<redacted> id=2/><pin/><x:pin a="1"><redacted></x:pin>"#),
            (#"<a password="cut"#, #"<a password="<redacted>"#),
            ("<a><password>cut", "<a><password><redacted>"),
            ("1 < 2 and <b>3</b>", "1 < 2 and <b>3</b>"),
            ("<a><![CDATA[<password>]]></a><!-- <token> -->", "<a><![CDATA[<password>]]></a><!-- <token> -->"),
            ("<pin>1<!-- </pin> -->2<![CDATA[</pin>]]>3</pin>", "<pin><redacted></pin>"),
            (#"<a xmlns:token="urn:x"><token:id>1</token:id></a>"#, #"<a xmlns:token="urn:x"><token:id>1</token:id></a>"#),
        ]
        for (xml, shown) in cases {
            #expect(redaction.applyToXML(xml) == shown, "\(xml)")
        }
        #expect(redaction.apply(toBody: Data("<k><sid>s</sid></k>".utf8), contentType: nil) == .text("<k><sid><redacted></sid></k>"))
    }

    @Test("forms and URLs: names are percent-decoded (a + is a space in a form) before they are matched")
    func formsAndURLs() throws {
        #expect(
            redaction.applyToForm("access%5Ftoken=abc&page=2&pass+word=x&bad%ZZ=1")
                == "access%5Ftoken=<redacted>&page=2&pass+word=<redacted>&bad%ZZ=1")
        // Nested names, as forms and queries spell an object's members: any secret part hides the value.
        #expect(
            redaction.applyToForm("card[cvv]=111&user[pin]=222&items[0][otp]=333&user.pin=444&card[number]=5&page[size]=6")
                == "card[cvv]=<redacted>&user[pin]=<redacted>&items[0][otp]=<redacted>&user.pin=<redacted>&card[number]=5&page[size]=6")
        #expect(redaction.applyToForm("card%5Bcvv%5D=111") == "card%5Bcvv%5D=<redacted>")
        let url = try #require(URL(string: "https://u:secret@api.test/a?access%5Ftoken=abc&page=2"))
        #expect(redaction.apply(to: url) == "https://redacted:redacted@api.test/a?access%5Ftoken=<redacted>&page=2")
        for (text, shown) in [
            ("https://api.test/;sid=1/b;c;pin=2/", "https://api.test/;sid=<redacted>/b;c;pin=<redacted>/"),
            ("https://api.test", "https://api.test"), ("/rel;token=3?q=1#f", "/rel;token=<redacted>?q=1#redacted"),
            ("https://api.test/a%3Bb;x=1", "https://api.test/a%3Bb;x=1"),
        ] {
            #expect(redaction.apply(to: try #require(URL(string: text))) == shown, "\(text)")
        }
    }

    @Test("keys however named, a URL's user name and fragment, and the URL a Location names are hidden")
    func secretsFoundByProbing() throws {
        for name in [
            "X-Goog-Api-Key", "Ocp-Apim-Subscription-Key", "X-Runway-Caller-Key", "X-Bearer", "X-Api-Key", "X-Passwd", "X-Pin", "X-OTP",
            "X-User-PWD", "Sid",
        ] {
            #expect(redaction.hidesHeader(name), "\(name)")
        }
        for name in ["Content-Type", "Accept", "Keep-Alive", "Location", "User-Agent", "X-Pinned-Version", "Accept-Ranges"] {
            #expect(!redaction.hidesHeader(name), "\(name)")
        }
        for name in ["access_key", "accessKey", "sig", "auth", "pass", "authorization"] {
            #expect(redaction.hidesParameter(name), "\(name)")
        }
        #expect(!redaction.hidesParameter("page"))
        let url = try #require(URL(string: "https://TOKEN@api.test/cb#access_token=abc"))
        #expect(redaction.apply(to: url) == "https://redacted@api.test/cb#redacted")
        let shown = redaction.apply(to: HTTPHeaders([("Location", "/sink?code=1&access_token=abc"), ("X-Other", "v")]))
        #expect(shown.first { $0.0 == "Location" }?.1 == "/sink?code=1&access_token=<redacted>")
        #expect(shown.first { $0.0 == "X-Other" }?.1 == "v")
    }
}
