// plumb-cal: bench calibration analyses (issue 6). Each subcommand lives in its own file;
// `RecordingLoader.standard` decides which recording formats are readable.

import CommandLineSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

let plumbCal = CommandGroup(
  name: "plumb-cal",
  abstract: "bench calibration: Allan deviation, gyro bias and temperature, calibration files",
  subcommands: [allanCommand, gyroCommand, saveCommand, signCommand, checkCommand])

exit(plumbCal.run(Array(CommandLine.arguments.dropFirst())))
