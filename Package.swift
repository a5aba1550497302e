// swift-tools-version: 6.0
//
// Plumb: an attitude firmware core for Linux single-board computers. One package, Swift 6
// language mode, no outside packages. Layout and layering: ../shared/DESIGN.md and README.md.
//
// The layers, bottom up; a target depends only on targets in its own layer or below (the
// sections of this file group targets by subsystem, each with its tests):
//
//   executables, tools   plumb, plumb-probe, plumb-cal, plumb-monitor, plumb-hil, plumb-bench,
//                        plumb-broad, bench-estimator
//   composition          PlumbRuntime (board and calibration files → settings; Linux or
//                        simulated hardware; signals), HIL (scenario runs on simulated hardware)
//   around the core      Recording, MPU6050Replay, MPU6050Simulation, MotionScenarios, Boards,
//                        Calibration, Monitoring, Plotting, SystemdNotify, CommandLineSupport
//   the loop             Firmware: HardwareAbstraction, MPU6050, AttitudeEstimation, Telemetry,
//                        Geometry (and BuildInfo's version string), nothing else
//   the core             MPU6050 (driver), AttitudeEstimation, Telemetry
//   HAL                  HardwareAbstraction (protocols); POSIXSupport; LinuxHardware and
//                        SimulatedHardware, which only the composition layer and tests see
//   leaves               ByteFormats, Geometry, Randomness, JSON, BuildInfo
//   (tests only)         TestSupport, TestSupportC
//
// The loop takes its hardware, its corrections (`FirmwareCalibration`) and its recorder
// (`FirmwareLoopObserver`) as parameters; the composition layer builds them.

import PackageDescription

// Release builds (what `make bench` measures and a board runs) use cross-module optimisation:
// the firmware loop and the driver are generic over the HAL protocols and compiled in their own
// modules, and without it every sample ran the unspecialised generic code, looking up
// `MPU6050Driver<Bus>`'s metadata and calling the bus, line, port and clock through witness
// tables. With it the executables get copies specialised for their concrete hardware types
// (Linux or simulated) and the per-sample calls across modules are inlined. It changes no
// result (no floating-point reassociation; the replay and golden-frame checks are byte for
// byte); a clean release build of `plumb-bench` took 86 s with it, 89 s without.
let swift6: [SwiftSetting] = [
  .swiftLanguageMode(.v6),
  .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

var targets: [Target] = []
var products: [Product] = []

// MARK: - Byte formats (a leaf: Glibc only)

// Byte- and text-level encodings with no dependency on Plumb's domain: the bounds-checked byte
// cursor, CRC-32C, the CRC-16s, SHA-256, hex, decimal and ISO 8601 text, atomic files and the
// Errno they report (Sources/ByteFormats/README.md). Below everything, the HAL included.
targets += [
  .target(name: "ByteFormats", exclude: ["README.md"], swiftSettings: swift6),
  .testTarget(
    name: "ByteFormatsTests", dependencies: ["ByteFormats", "TestSupport"], swiftSettings: swift6),
]

// MARK: - HAL: protocols and value types (no dependencies but ByteFormats)

// Test-only support: an allocation-counting malloc interposer and a way to test permission
// errors as root. Linked into the (single) test executable by every test target that needs it.
targets += [
  .target(name: "TestSupportC", path: "Tests/TestSupportC"),
  .target(
    name: "TestSupport", dependencies: ["TestSupportC", "Randomness", "JSON"],
    path: "Tests/TestSupport",
    swiftSettings: swift6),
]

targets += [
  .target(
    name: "HardwareAbstraction", dependencies: ["ByteFormats"], path: "HAL/HardwareAbstraction",
    swiftSettings: swift6),
  .testTarget(
    name: "HardwareAbstractionTests", dependencies: ["HardwareAbstraction"],
    swiftSettings: swift6),
]

// MARK: - HAL: Linux (libi2c, libgpiod v1 or v2, termios, CLOCK_MONOTONIC)

targets += [
  // libi2c has no pkg-config file on Debian: the module map links "i2c" by name.
  .systemLibrary(name: "CLibI2C", path: "HAL/CLibI2C", providers: [.apt(["libi2c-dev"])]),
  // libgpiod v1 (1.x, Debian 12) or v2 (2.x, Debian 13): the shim header picks the API the
  // installed <gpiod.h> has and gives LinuxHardware one set of functions over either.
  .systemLibrary(
    name: "CLibGPIOD", path: "HAL/CLibGPIOD", pkgConfig: "libgpiod",
    providers: [.apt(["libgpiod-dev"])]),
  // The thin syscall seam shared by LinuxHardware and SimulatedHardware.
  .target(
    name: "POSIXSupport", dependencies: ["ByteFormats", "HardwareAbstraction"],
    path: "HAL/POSIXSupport",
    swiftSettings: swift6),
  .target(
    name: "LinuxHardware",
    dependencies: ["HardwareAbstraction", "POSIXSupport", "CLibI2C", "CLibGPIOD"],
    path: "HAL/LinuxHardware", swiftSettings: swift6),
  .testTarget(
    name: "POSIXSupportTests", dependencies: ["POSIXSupport", "HardwareAbstraction"],
    swiftSettings: swift6),
  .testTarget(
    name: "LinuxHardwareTests",
    dependencies: [
      "LinuxHardware", "POSIXSupport", "HardwareAbstraction", "SimulatedHardware", "TestSupport",
    ],
    swiftSettings: swift6),
]

// MARK: - HAL: simulated hardware

targets += [
  .target(
    name: "SimulatedHardware",
    dependencies: ["ByteFormats", "HardwareAbstraction", "POSIXSupport", "Randomness"],
    path: "HAL/SimulatedHardware", swiftSettings: swift6),
  .testTarget(
    name: "SimulatedHardwareTests", dependencies: ["SimulatedHardware", "HardwareAbstraction"],
    swiftSettings: swift6),
]

// MARK: - Geometry, motion truth and attitude estimation

targets += [
  .target(name: "Randomness", swiftSettings: swift6),
  .testTarget(name: "RandomnessTests", dependencies: ["Randomness"], swiftSettings: swift6),
  .target(name: "Geometry", swiftSettings: swift6),
  .target(
    name: "MotionScenarios", dependencies: ["Geometry", "Randomness"],
    swiftSettings: swift6 + [.unsafeFlags(["-O"])]),
  .testTarget(name: "GeometryTests", dependencies: ["Geometry"], swiftSettings: swift6),
  // Optimised even in debug builds: the estimator is the hot path of every accuracy test
  // (and of the firmware); `-O` keeps the ten-minute scenarios in `make test` to seconds.
  .target(
    name: "AttitudeEstimation", dependencies: ["Geometry"], exclude: ["README.md"],
    swiftSettings: swift6 + [.unsafeFlags(["-O", "-Xllvm", "-vectorize-slp=false"])]),
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
  .testTarget(
    name: "PlumbReplayTests",
    dependencies: ["plumb", "plumb-broad", "MotionScenarios", "Geometry", "TestSupport"],
    swiftSettings: swift6),
  .executableTarget(
    name: "plumb-broad", dependencies: ["AttitudeEstimation", "CommandLineSupport", "Geometry"],
    path: "tools/plumb-broad", swiftSettings: swift6),
  // Issue 9, item 1: the estimator's cost per update against a minimal complementary filter
  // (`swift build -c release --product bench-estimator`; README.md there). The reference filter
  // is compiled as scalar code, like the C reference it stands for: LLVM's SLP vectoriser packs
  // its quaternion into one register and costs it 9 ns of shuffles on its critical path.
  .executableTarget(
    name: "bench-estimator",
    dependencies: [
      "AttitudeEstimation", "CommandLineSupport", "Geometry", "Randomness", "ByteFormats",
    ],
    path: "tools/bench-estimator", exclude: ["README.md", "count-instructions.sh"],
    swiftSettings: swift6 + [.unsafeFlags(["-Xllvm", "-vectorize-slp=false"])]),
]

// MARK: - MPU-6050 driver and simulation

// The driver sees only the HAL protocols. The simulated chip restates the register map on its
// own (it does not import the driver), so a wrong address cannot hide in both at once.
targets += [
  .target(
    name: "MPU6050", dependencies: ["ByteFormats", "HardwareAbstraction"], swiftSettings: swift6),
  .target(
    name: "MPU6050Simulation",
    dependencies: [
      "ByteFormats", "HardwareAbstraction", "SimulatedHardware", "Geometry", "MotionScenarios",
    ],
    swiftSettings: swift6),
  .testTarget(
    name: "MPU6050Tests",
    dependencies: ["MPU6050", "HardwareAbstraction", "SimulatedHardware"],
    swiftSettings: swift6),
  .testTarget(
    name: "MPU6050SimulationTests",
    dependencies: [
      "MPU6050Simulation", "MPU6050", "HardwareAbstraction", "SimulatedHardware", "Geometry",
      "MotionScenarios", "TestSupport",
    ],
    swiftSettings: swift6),
]

// MARK: - Firmware, telemetry, boards, calibration

targets += [
  .target(name: "Boards", dependencies: ["Geometry", "JSON", "Telemetry"], swiftSettings: swift6),
  .testTarget(
    name: "BoardsTests", dependencies: ["Boards", "Geometry", "JSON", "TestSupport"],
    swiftSettings: swift6),
]

// Telemetry: frame encodings (binary, text, MAVLink v2), their decoders, the link budget and the
// host-command parser. Geometry only: no Foundation, no HAL.
targets += [
  .target(
    name: "Telemetry", dependencies: ["ByteFormats", "Geometry"], exclude: ["FORMATS.md"],
    swiftSettings: swift6),
  .testTarget(
    name: "TelemetryTests",
    dependencies: ["Telemetry", "ByteFormats", "Geometry", "JSON", "TestSupport"],
    exclude: ["Vectors"],
    swiftSettings: swift6),
]

// Recordings (issue 6): the `.plumbraw` raw-capture format (writer, reader, bus-transcript
// recorder, CSV export). HardwareAbstraction and the driver's types only: no Foundation.
targets += [
  .target(
    name: "Recording", dependencies: ["ByteFormats", "HardwareAbstraction", "MPU6050"],
    exclude: ["PLUMBRAW.md"], swiftSettings: swift6),
  .testTarget(
    name: "RecordingTests",
    dependencies: [
      "Recording", "RecordingTestSupport", "ByteFormats", "MPU6050", "MPU6050Simulation",
      "MPU6050Replay", "HardwareAbstraction", "SimulatedHardware", "Calibration", "TestSupport",
    ],
    exclude: ["Golden"], swiftSettings: swift6),
  // What RecordingTests and MPU6050ReplayTests share: the driver-level loops a live run and its
  // replay go through, and a recorded run with its replay.
  .target(
    name: "RecordingTestSupport",
    dependencies: [
      "Recording", "MPU6050", "MPU6050Replay", "MPU6050Simulation", "HardwareAbstraction",
      "SimulatedHardware", "MotionScenarios", "Geometry", "TestSupport",
    ],
    path: "Tests/RecordingTestSupport", swiftSettings: swift6),
]

// The replay chip: a `.plumbraw` recording played back to the real driver as the chip it was
// made on, every transfer answered as it was answered, and the clock that reproduces the live
// loop's timer wake-ups (`plumb run --replay`, plumb-bench). Its tests record a live run of
// the real driver and replay it: every tick the same.
targets += [
  .target(
    name: "MPU6050Replay",
    dependencies: ["ByteFormats", "HardwareAbstraction", "SimulatedHardware", "Recording"],
    swiftSettings: swift6),
  .testTarget(
    name: "MPU6050ReplayTests",
    dependencies: [
      "MPU6050Replay", "RecordingTestSupport", "Recording", "MPU6050", "MPU6050Simulation",
      "HardwareAbstraction", "SimulatedHardware", "TestSupport",
    ],
    swiftSettings: swift6),
]

// The firmware: the loop that wires driver, estimation and telemetry together over the HAL
// protocols. No Linux or simulated hardware, no calibration file, no recording format: the
// hardware, a `FirmwareCalibration` of plain values and a `FirmwareLoopObserver` are handed in
// (PlumbRuntime, HIL). BuildInfo is the one exception, on purpose: the loop answers the
// `version` host command with PlumbVersion.current, the one constant every tool and the Debian
// package read, so a loop built anywhere (tests, HIL, bench) says what it is.
targets += [
  .target(
    name: "Firmware",
    dependencies: [
      "HardwareAbstraction", "MPU6050", "AttitudeEstimation", "Telemetry", "Geometry",
      "BuildInfo",
    ], swiftSettings: swift6),
  .testTarget(
    name: "FirmwareTests",
    dependencies: [
      "Firmware", "MPU6050", "MPU6050Simulation", "SimulatedHardware", "MotionScenarios",
      "Telemetry", "Geometry", "HardwareAbstraction", "TestSupport", "BuildInfo",
      "AttitudeEstimation",
    ], swiftSettings: swift6),
]

// MARK: - Executables and tools

// The executables' composition root: board and calibration files to firmware settings, the
// Linux or simulated hardware a board names, signals, real-time scheduling. Used by
// executables only (it is the one library that sees LinuxHardware and SimulatedHardware).
targets += [
  .target(
    name: "PlumbRuntime",
    dependencies: [
      "Firmware", "AttitudeEstimation", "Boards", "Calibration", "Telemetry", "MPU6050",
      "MPU6050Simulation", "MPU6050Replay", "MotionScenarios", "SimulatedHardware", "LinuxHardware",
      "HardwareAbstraction", "Geometry", "SystemdNotify", "Recording", "JSON", "ByteFormats",
    ], swiftSettings: swift6),
  .executableTarget(
    name: "plumb",
    dependencies: [
      "PlumbRuntime", "Firmware", "Telemetry", "CommandLineSupport", "AttitudeEstimation",
      "Geometry", "Recording", "Calibration", "Plotting", "ByteFormats", "Boards", "MPU6050",
      "JSON", "LinuxHardware",
    ],
    swiftSettings: swift6),
  .executableTarget(
    name: "plumb-probe",
    dependencies: ["PlumbRuntime", "MPU6050", "Geometry", "CommandLineSupport", "ByteFormats"],
    path: "tools/plumb-probe", swiftSettings: swift6),
  .testTarget(
    name: "PlumbRuntimeTests",
    dependencies: [
      "PlumbRuntime", "plumb", "plumb-probe", "plumb-monitor", "plumb-cal", "BuildInfo",
      "Telemetry", "SimulatedHardware", "LinuxHardware",
      "HardwareAbstraction", "Calibration", "Geometry", "MPU6050Simulation", "Boards",
      "Firmware", "MotionScenarios", "Recording", "AttitudeEstimation", "MPU6050", "Randomness",
      "TestSupport",
    ], exclude: ["Golden"], swiftSettings: swift6),
]

targets += [
  // The version every tool prints and `make deb` packages (Sources/BuildInfo/PlumbVersion.swift).
  .target(name: "BuildInfo", swiftSettings: swift6),
  .target(name: "JSON", swiftSettings: swift6),
  .testTarget(name: "JSONTests", dependencies: ["JSON", "TestSupport"], swiftSettings: swift6),
  .target(
    name: "CommandLineSupport", dependencies: ["BuildInfo", "ByteFormats"], swiftSettings: swift6),
  .testTarget(
    name: "CommandLineSupportTests", dependencies: ["CommandLineSupport", "BuildInfo"],
    swiftSettings: swift6),
]

// Bench calibration (issue 6): the calibration maths and file, a small SVG plotter, `plumb-cal`.
targets += [
  .target(name: "Plotting", dependencies: ["ByteFormats"], swiftSettings: swift6),
  .testTarget(
    name: "PlottingTests", dependencies: ["Plotting", "TestSupport"], swiftSettings: swift6),
  .target(
    name: "Calibration",
    dependencies: [
      "AttitudeEstimation", "ByteFormats", "Geometry", "JSON", "Randomness", "Recording",
    ],
    swiftSettings: swift6),
  .testTarget(
    name: "CalibrationTests",
    dependencies: [
      "Calibration", "ByteFormats", "Geometry", "JSON", "CommandLineSupport", "plumb-cal",
      "Randomness", "TestSupport", "MotionScenarios", "Recording", "HardwareAbstraction",
    ],
    swiftSettings: swift6),
  .executableTarget(
    name: "plumb-cal",
    dependencies: [
      "Calibration", "ByteFormats", "Plotting", "CommandLineSupport", "Geometry", "Recording",
    ],
    path: "tools/plumb-cal", exclude: ["CALIBRATION-FILE.md", "BENCH-GUIDE.md", "guide"],
    swiftSettings: swift6),
]
products += [.executable(name: "plumb-cal", targets: ["plumb-cal"])]

// Link monitoring (issue 5, item 6): the reusable monitor library (decoding a serial port or a
// file into link statistics, latency percentiles, printing) for `plumb-monitor` and the HIL
// runner; and sd_notify over NOTIFY_SOCKET for running under systemd (item 7).
targets += [
  .target(
    name: "Monitoring",
    dependencies: ["Telemetry", "Geometry", "HardwareAbstraction", "POSIXSupport", "JSON"],
    swiftSettings: swift6),
  .executableTarget(
    name: "plumb-monitor",
    dependencies: [
      "Monitoring", "CommandLineSupport", "LinuxHardware", "HardwareAbstraction", "Telemetry",
      "WebMonitor",
    ],
    path: "tools/plumb-monitor", swiftSettings: swift6),
  .testTarget(
    name: "PlumbMonitorTests",
    dependencies: [
      "Monitoring", "plumb-monitor", "Telemetry", "Geometry", "JSON", "CommandLineSupport",
      "HardwareAbstraction", "LinuxHardware", "SimulatedHardware", "TestSupport", "Randomness",
    ],
    swiftSettings: swift6),
  .target(
    name: "SystemdNotify", dependencies: ["POSIXSupport", "HardwareAbstraction"],
    swiftSettings: swift6),
  .testTarget(
    name: "SystemdNotifyTests",
    dependencies: ["SystemdNotify", "HardwareAbstraction", "TestSupport"],
    swiftSettings: swift6),
]
products += [.executable(name: "plumb-monitor", targets: ["plumb-monitor"])]

// The monitor's web page (issue 26): a small HTTP server written for it (the page, a
// Server-Sent Events stream of the decoded frames at up to 30 Hz, host commands when allowed)
// on its own thread, so a slow or vanished browser never delays the serial reading; and the
// self-contained page (no outside scripts or fonts).
targets += [
  .target(
    name: "WebMonitor",
    dependencies: [
      "Monitoring", "Telemetry", "Geometry", "HardwareAbstraction", "POSIXSupport", "JSON",
      "ByteFormats",
    ],
    exclude: ["README.md"],
    swiftSettings: swift6),
  .testTarget(
    name: "WebMonitorTests",
    dependencies: [
      "WebMonitor", "Monitoring", "Telemetry", "Geometry", "HardwareAbstraction", "POSIXSupport",
      "JSON", "LinuxHardware", "SimulatedHardware", "TestSupport", "plumb-monitor",
      "CommandLineSupport",
    ],
    swiftSettings: swift6),
]

// Hardware-in-the-loop (issue 7): the HIL library (scenario runs through the real driver and
// loop on the simulated MPU-6050, host-side decoding, truth comparison, reconciliation, reports,
// soak), `plumb-hil`, and the HIL tests (fault matrix, golden frames, short soak, real time).
targets += [
  .target(
    name: "HIL",
    dependencies: [
      "Firmware", "MPU6050", "MPU6050Simulation", "SimulatedHardware", "HardwareAbstraction",
      "MotionScenarios", "Telemetry", "Monitoring", "Plotting", "JSON", "Geometry", "Randomness",
      "Recording", "ByteFormats", "AttitudeEstimation",
    ],
    swiftSettings: swift6),
  .executableTarget(
    name: "plumb-hil",
    dependencies: [
      "HIL", "CommandLineSupport", "PlumbRuntime", "Calibration", "Boards", "Firmware",
      "ByteFormats", "LinuxHardware", "HardwareAbstraction", "MPU6050Simulation", "MotionScenarios",
      "Telemetry",
    ],
    path: "tools/plumb-hil",
    exclude: ["README.md"], swiftSettings: swift6),
  .testTarget(
    name: "HILTests",
    dependencies: [
      "HIL", "plumb-hil", "Firmware", "MPU6050", "MPU6050Simulation", "SimulatedHardware",
      "HardwareAbstraction", "MotionScenarios", "Telemetry", "Geometry", "TestSupport",
      "Calibration", "PlumbRuntime",
    ],
    exclude: ["Golden"], swiftSettings: swift6),
]
products += [.executable(name: "plumb-hil", targets: ["plumb-hil"])]

// Benchmarks (issue 9, items 2-7): `make bench` builds `plumb-bench` in release mode and runs
// `plumb-bench all`, which prints `name value unit` lines and rewrites BENCHMARKS.md.
targets += [
  .executableTarget(
    name: "plumb-bench",
    dependencies: [
      "Firmware", "PlumbRuntime", "MPU6050", "MPU6050Simulation", "MPU6050Replay",
      "SimulatedHardware",
      "HardwareAbstraction", "MotionScenarios", "Recording", "Telemetry", "Calibration", "Geometry",
      "CommandLineSupport", "ByteFormats",
    ],
    path: "tools/plumb-bench", exclude: ["README.md", "NOTES.md"], swiftSettings: swift6)
]

// MARK: - Fuzzing (issue 21): libFuzzer targets for every decoder of outside bytes

// Only with PLUMB_FUZZ set (`make fuzz`, Tests/Fuzz/README.md): they link libFuzzer's runtime
// (`-sanitize=fuzzer,address`, which the Makefile passes to every module of that build), which
// an ordinary `swift build` or `make test` neither has nor needs. Each is an executable whose
// `@main` hands its `LLVMFuzzerTestOneInput` to libFuzzer's driver (FuzzSupport); they are built
// in their own scratch path, `.build/fuzz`, never beside the test build.
if Context.environment["PLUMB_FUZZ"] != nil {
  let fuzzSettings = swift6 + [.unsafeFlags(["-parse-as-library"])]
  targets += [
    // libFuzzer's driver entry point, declared for Swift (the library comes with the toolchain).
    .systemLibrary(name: "CLibFuzzer", path: "Tests/Fuzz/CLibFuzzer"),
    .target(
      name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Tests/Fuzz/FuzzSupport",
      swiftSettings: swift6),
    .target(
      name: "MonitorFuzzing",
      dependencies: ["FuzzSupport", "Monitoring", "Telemetry", "Geometry", "JSON"],
      path: "Tests/Fuzz/MonitorFuzzing", swiftSettings: swift6),
  ]
  let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
    ("json", ["JSON"]),
    ("board-file", ["Boards", "PlumbRuntime", "JSON"]),
    ("calibration-file", ["Calibration", "Boards", "PlumbRuntime", "JSON", "Geometry"]),
    ("csv", ["Calibration"]),
    ("plumbraw", ["Recording", "ByteFormats", "Calibration", "HardwareAbstraction"]),
    ("host-commands", ["Telemetry"]),
    ("monitor-binary", ["MonitorFuzzing"]),
    ("monitor-text", ["MonitorFuzzing"]),
    ("monitor-mavlink", ["MonitorFuzzing"]),
    ("monitor-auto", ["MonitorFuzzing"]),
    ("mavlink", ["Telemetry", "ByteFormats"]),
    ("mavlink-receiver", ["Telemetry", "ByteFormats"]),
    ("web-request", ["WebMonitor"]),
  ]
  for target in fuzzTargets {
    targets.append(
      .executableTarget(
        name: "fuzz-\(target.name)", dependencies: ["FuzzSupport"] + target.dependencies,
        path: "Tests/Fuzz/\(target.name)", swiftSettings: fuzzSettings))
  }
}

let package = Package(
  name: "Plumb",
  platforms: [.macOS(.v15)],
  products: products,
  targets: targets
)
