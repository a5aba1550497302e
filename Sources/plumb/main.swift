// plumb: the firmware's command-line entry point. Each subcommand lives in its own file and
// is listed here; `CommandLineSupport` parses and dispatches (`--help` everywhere, exit status 64
// on usage errors).

import CommandLineSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

let plumb = CommandGroup(
  name: "plumb",
  abstract: "attitude firmware core for Linux single-board computers",
  subcommands: [
    .init(runSpec) { try runCommand($0) },
    .init(checkBoardSpec) { try checkBoardCommand($0) },
    .init(paramsSpec) { try paramsCommand($0) },
    .init(recordSpec) { try recordCommand($0) },
    .init(exportSpec) { try exportCommand($0) },
    .init(calibrateSpec) { try calibrateCommand($0) },
    ReplayCommand.subcommand,
  ])

exit(plumb.run(Array(CommandLine.arguments.dropFirst())))
