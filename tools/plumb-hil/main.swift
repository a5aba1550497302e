// plumb-hil: hardware-in-the-loop runs of the real driver and loop on the simulated MPU-6050.
// The subcommands are in Commands.swift; the work is in the HIL library.

import CommandLineSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

let plumbHIL = CommandGroup(
  name: "plumb-hil",
  abstract: "hardware-in-the-loop runs of the real driver and loop on a simulated MPU-6050",
  subcommands: [
    .init(runSpec) { try runCommand($0) },
    .init(scenariosSpec) { _ in print(scenarioListing(), terminator: "") },
    .init(faultsSpec) { _ in print(faultListing(), terminator: "") },
    .init(soakSpec) { try soakCommand($0) },
  ])

exit(plumbHIL.run(Array(CommandLine.arguments.dropFirst())))
