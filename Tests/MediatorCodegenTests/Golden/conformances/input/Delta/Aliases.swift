import RunwayMediator

public typealias Routable = MediatorTarget
public typealias SendableRoutable = Sendable & Routable
public typealias Unrelated = Sendable
