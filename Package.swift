// swift-tools-version: 6.0
//
// Plumb: an attitude firmware core for Linux single-board computers. One package, Swift 6
// language mode, no outside packages. Layout and layering: ../shared/DESIGN.md and README.md.
//
// Dependencies point one way: executables and tools → firmware wiring → driver, estimation,
// telemetry → HAL protocols. Only executables (and tests) see LinuxHardware or
// SimulatedHardware.

import PackageDescription

let swift6: [SwiftSetting] = [.swiftLanguageMode(.v6)]

var targets: [Target] = []
var products: [Product] = []

// MARK: - HAL: protocols and value types (no dependencies)

targets += [
  .target(name: "HardwareAbstraction", path: "HAL/HardwareAbstraction", swiftSettings: swift6),
  .testTarget(
    name: "HardwareAbstractionTests", dependencies: ["HardwareAbstraction"],
    swiftSettings: swift6),
]

// MARK: - HAL: Linux (libi2c, libgpiod v1, termios, CLOCK_MONOTONIC)

// (filled in by the Linux HAL work)

// MARK: - HAL: simulated hardware

targets += [
  .target(
    name: "SimulatedHardware", dependencies: ["HardwareAbstraction"], path: "HAL/SimulatedHardware",
    swiftSettings: swift6)
]

// MARK: - Geometry, motion truth and attitude estimation

targets += [
  .target(name: "Geometry", swiftSettings: swift6),
  .target(
    name: "MotionScenarios", dependencies: ["Geometry"],
    swiftSettings: swift6 + [.unsafeFlags(["-O"])]),
  .testTarget(name: "GeometryTests", dependencies: ["Geometry"], swiftSettings: swift6),
  // Optimised even in debug builds: the estimator is the hot path of every accuracy test
  // (and of the firmware); `-O` keeps the ten-minute scenarios in `make test` to seconds.
  .target(
    name: "AttitudeEstimation", dependencies: ["Geometry"], exclude: ["README.md"],
    swiftSettings: swift6 + [.unsafeFlags(["-O"])]),
  .testTarget(
    name: "MotionScenariosTests", dependencies: ["MotionScenarios", "Geometry"],
    swiftSettings: swift6),
  .testTarget(
    name: "AttitudeEstimationTests",
    dependencies: ["AttitudeEstimation", "Geometry", "MotionScenarios"], swiftSettings: swift6),
  // The 200-seed, ten-minute accuracy scenario runs optimised so `make test` stays fast.
  .testTarget(
    name: "AttitudeEstimationAccuracyTests",
    dependencies: ["AttitudeEstimation", "Geometry", "MotionScenarios"],
    swiftSettings: swift6 + [.unsafeFlags(["-O"])]),
  .executableTarget(
    name: "plumb", dependencies: ["AttitudeEstimation", "Geometry"], path: "Sources/plumb",
    swiftSettings: swift6),
  .testTarget(
    name: "PlumbReplayTests", dependencies: ["plumb", "MotionScenarios", "Geometry"],
    swiftSettings: swift6),
  .executableTarget(
    name: "plumb-broad", dependencies: ["AttitudeEstimation", "Geometry"],
    path: "tools/plumb-broad", swiftSettings: swift6),
]

// MARK: - MPU-6050 driver and simulation

// (filled in by the driver work)

// MARK: - Firmware, telemetry, boards, calibration

// (filled in by later issues)

// MARK: - Executables and tools

// (filled in by later issues)

let package = Package(
  name: "Plumb",
  platforms: [.macOS(.v15)],
  products: products,
  targets: targets
)
