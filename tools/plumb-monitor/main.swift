// plumb-monitor: decodes a Plumb telemetry stream from a serial device, a pseudo-terminal, a
// recorded file or standard input, and reports frames and link statistics. The work is in the
// Monitoring library (shared with the HIL runner); MonitorCommand.swift maps the command line
// onto it.

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

exit(plumbMonitor(Array(CommandLine.arguments.dropFirst())))
