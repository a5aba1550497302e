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
    swiftSettings: swift6),
  .testTarget(
    name: "SimulatedHardwareTests", dependencies: ["SimulatedHardware", "HardwareAbstraction"],
    swiftSettings: swift6),
]

// MARK: - Geometry, motion truth and attitude estimation

targets += [
  .target(name: "Geometry", swiftSettings: swift6),
  .target(name: "MotionScenarios", dependencies: ["Geometry"], swiftSettings: swift6),
]

// MARK: - MPU-6050 driver and simulation

// The driver sees only the HAL protocols. The simulated chip restates the register map on its
// own (it does not import the driver), so a wrong address cannot hide in both at once.
targets += [
  .target(name: "MPU6050", dependencies: ["HardwareAbstraction"], swiftSettings: swift6),
  .target(
    name: "MPU6050Simulation",
    dependencies: ["HardwareAbstraction", "SimulatedHardware", "Geometry", "MotionScenarios"],
    swiftSettings: swift6),
  .testTarget(
    name: "MPU6050Tests",
    dependencies: ["MPU6050", "HardwareAbstraction", "SimulatedHardware"],
    swiftSettings: swift6),
  .testTarget(
    name: "MPU6050SimulationTests",
    dependencies: [
      "MPU6050Simulation", "MPU6050", "HardwareAbstraction", "SimulatedHardware", "Geometry",
      "MotionScenarios",
    ],
    swiftSettings: swift6),
]

// MARK: - Firmware, telemetry, boards, calibration

targets += [
  .target(name: "Boards", dependencies: ["Geometry", "JSON"], swiftSettings: swift6),
  .testTarget(name: "BoardsTests", dependencies: ["Boards", "Geometry"], swiftSettings: swift6),
]

// MARK: - Executables and tools

targets += [
  .target(name: "JSON", swiftSettings: swift6),
  .testTarget(name: "JSONTests", dependencies: ["JSON"], swiftSettings: swift6),
  .target(name: "CommandLineSupport", swiftSettings: swift6),
  .testTarget(
    name: "CommandLineSupportTests", dependencies: ["CommandLineSupport"], swiftSettings: swift6),
]

let package = Package(
  name: "Plumb",
  platforms: [.macOS(.v15)],
  products: products,
  targets: targets
)
