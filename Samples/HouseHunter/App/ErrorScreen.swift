import HouseHunterScreen
import Runway
import RunwayMediator

/// The screen for a call that failed: the typed error, never a stack trace.
enum ErrorScreen {
    static func make(_ error: any Error, url: String) -> Screen {
        var fields: [Field] = []
        if let mediatorError = error as? MediatorError {
            if mediatorError.code == .notFound {
                return Screen(kind: .notFound, title: "Not found", blocks: [.text("Nothing in HouseHunter answers \(url).")])
            }
            fields = [Field("error", "MediatorError.\(mediatorError.code)"), Field("message", mediatorError.message)]
            if let field = mediatorError.field { fields.append(Field("field", field)) }
        }
        // An action's own error (a manager's RunwayError) reaches the caller as itself.
        let problem = error
        if let runway = problem as? RunwayError {
            fields = [Field("error", "RunwayError.\(runway.code)")]
            if let stage = runway.stage { fields.append(Field("stage", stage.description)) }
            fields.append(Field("message", runway.message))
            if let field = runway.field { fields.append(Field("field", field)) }
            if let response = runway.response { fields.append(Field("HTTP status", String(response.status))) }
        } else if fields.isEmpty {
            fields = [Field("error", String(describing: type(of: problem))), Field("message", String(describing: problem))]
        }
        return Screen(kind: .error, title: "Error", blocks: [.text("Could not open \(url)."), .fields(fields)])
    }
}
