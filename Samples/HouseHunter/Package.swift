// swift-tools-version:6.2
import Foundation
import PackageDescription

// HouseHunter, Runway's sample app: business modules that never import each other (only
// interface targets), a composition root (`house-hunter`) whose modules the mediator plugin
// registers, and its sample API server. It depends on Runway as any app does; only the path
// is local.

// A path dependency's identity is its folder name, which differs between checkouts.
let runwayFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent

func runway(_ product: String) -> Target.Dependency { .product(name: product, package: runwayFolder) }

let settings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "HouseHunter",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "house-hunter", targets: ["HouseHunter"])
    ],
    dependencies: [
        .package(path: "../..", traits: ["Signing", "Cache", "Logging", "ActionLog"]),
        // The embedded server is built on the test server Runway's own tests use.
        .package(path: "../../Tests/TestSupport"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // What business modules hand the shell: screens as values, rendered as terminal text.
        .target(name: "HouseHunterScreen", dependencies: [runway("Runway")], path: "Screen"),
        // Interface targets: names and typed helpers; they depend on the mediator only.
        .target(name: "ListingInterface", dependencies: [runway("RunwayMediator")], path: "Interfaces/ListingInterface"),
        .target(name: "DetailInterface", dependencies: [runway("RunwayMediator")], path: "Interfaces/DetailInterface"),
        .target(name: "AccountInterface", dependencies: [runway("RunwayMediator")], path: "Interfaces/AccountInterface"),
        // Business modules: Runway, RunwayMediator, the screen kit and the interfaces of the
        // modules they call; never another business module (checked by ModuleGraphTests).
        .target(
            name: "Listing",
            dependencies: [runway("Runway"), runway("RunwayMediator"), "HouseHunterScreen", "ListingInterface", "DetailInterface"],
            path: "Modules/Listing"
        ),
        .target(
            name: "Detail",
            dependencies: [runway("Runway"), runway("RunwayMediator"), "HouseHunterScreen", "ListingInterface", "AccountInterface"],
            path: "Modules/Detail"
        ),
        .target(
            name: "Account",
            dependencies: [runway("Runway"), runway("RunwayMediator"), "HouseHunterScreen", "AccountInterface", "DetailInterface"],
            path: "Modules/Account"
        ),
        // The sample API server (Hummingbird, through the test server's in-process server).
        .target(
            name: "HouseHunterServer",
            dependencies: [
                runway("Runway"), runway("RunwaySigning"), runway("RunwayCompression"), runway("RunwayActionLog"),
                .product(name: "RunwayTestServer", package: "TestSupport"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Server"
        ),
        // The composition root: services, interceptor chain, action logger, modules (generated
        // registration), and the command line.
        .executableTarget(
            name: "HouseHunter",
            dependencies: [
                runway("Runway"), runway("RunwayMediator"), runway("RunwayCurl"), runway("RunwaySigning"), runway("RunwayCache"),
                runway("RunwayDNSBypass"), runway("RunwayCompression"), runway("RunwayLogging"), runway("RunwayActionLog"),
                runway("RunwayHAR"), "HouseHunterScreen", "HouseHunterServer", "Listing", "Detail", "Account",
                "ListingInterface", "DetailInterface", "AccountInterface",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "App",
            plugins: [.plugin(name: "MediatorRegistrationPlugin", package: runwayFolder)]
        ),
        .testTarget(
            name: "HouseHunterTests",
            dependencies: [
                runway("Runway"), runway("RunwayCurl"), runway("RunwaySigning"), runway("RunwayCompression"),
                runway("RunwayDNSBypass"), runway("RunwayActionLog"), runway("RunwayMediator"), runway("RunwayHAR"),
                .product(name: "RunwayTestServer", package: "TestSupport"),
                "HouseHunterScreen", "HouseHunterServer", "Listing", "Detail", "ListingInterface",
            ]
        ),
        // A composition root of the business modules: the build-tool plugin registers them
        // across the package boundary, as in an app.
        .testTarget(
            name: "MediatorPluginTests",
            dependencies: [
                runway("RunwayMediator"), "Listing", "Detail", "Account", "AccountInterface", "DetailInterface",
                "ListingInterface", "HouseHunterScreen",
            ],
            plugins: [.plugin(name: "MediatorRegistrationPlugin", package: runwayFolder)]
        ),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + settings
}
