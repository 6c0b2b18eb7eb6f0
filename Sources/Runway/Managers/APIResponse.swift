/// A response as a manager's validators and hooks see it: the HTTP response and its body parsed
/// as JSON (`.null` for an empty body).
public struct APIResponse: Sendable {
    /// The response as the chain returned it.
    public var response: Response
    /// The body as JSON; `.null` when the body is empty.
    public var json: JSON

    /// Creates an API response.
    public init(response: Response, json: JSON) {
        self.response = response
        self.json = json
    }

    /// The HTTP status code.
    public var status: Int { response.status }
}
