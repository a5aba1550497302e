// plumb: the firmware's command-line entry point. Subcommands are dispatched here; each lives
// in its own file (`ReplayCommand.swift`, …). Until the shared argument parser lands in
// `CommandLineSupport`, each subcommand parses its own arguments with the same conventions:
// `--kebab-case` options, `--help` everywhere, exit status 64 on usage errors.

import Foundation

func printError(_ message: String) {
  FileHandle.standardError.write(Data("plumb: \(message)\n".utf8))
}

let topUsage = """
  USAGE: plumb <subcommand> [options]

  SUBCOMMANDS:
    \(ReplayCommand.name)     \(ReplayCommand.summary)

  Run `plumb <subcommand> --help` for a subcommand's options.
  """

var arguments = Array(CommandLine.arguments.dropFirst())
guard let subcommand = arguments.first else {
  printError("missing subcommand\n\n\(topUsage)")
  exit(64)
}
arguments.removeFirst()
switch subcommand {
case "-h", "--help", "help":
  print(topUsage)
case ReplayCommand.name:
  do throws(ReplayCommand.Failure) {
    guard let command = try ReplayCommand.parse(arguments) else {
      print(ReplayCommand.usage)
      exit(0)
    }
    _ = try command.run()
  } catch {
    if case .usage = error {
      printError("replay: \(error.message)\n\n\(ReplayCommand.usage)")
    } else {
      printError("replay: \(error.message)")
    }
    exit(error.status)
  }
default:
  printError("unknown subcommand '\(subcommand)'\n\n\(topUsage)")
  exit(64)
}
