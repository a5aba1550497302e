import CommandLineSupport

#if canImport(Glibc)
  import Glibc
#endif

let plumb = CommandGroup(
  name: "plumb", abstract: "attitude firmware for Linux single-board computers",
  subcommands: [
    .init(runSpec) { try runCommand($0) },
    .init(checkBoardSpec) { try checkBoardCommand($0) },
  ])

exit(plumb.run(Array(CommandLine.arguments.dropFirst())))
