import CommandLineSupport
import Firmware
import JSON
import PlumbRuntime
import Telemetry

let paramsSpec = CommandSpec(
  name: "plumb params",
  abstract: "list the parameters ground stations see, with their values at start",
  discussion: """
    The run-time settings MAVLink's parameter protocol and the `set` host command change: name,
    value (the board file's, then the state folder's parameters.json), type, unit, range and what
    each does. A stream rate shows its actual rate (the output rate divided by a whole number).
    Touches no hardware.
    """,
  options: [
    .option("board", value: "FILE", help: "the board file (see Boards/README.md)"),
    .option(
      "format", value: "FORMAT", help: "binary, binary-imu, text or mavlink (default: the board's)"),
    .option(
      "state-dir", value: "DIR",
      help: "the state folder whose parameters.json to apply (default as plumb run)"),
    .flag("json", help: "one JSON document instead of a table"),
  ],
  examples: [
    "plumb params --board Boards/simulated.json",
    "plumb params --board /etc/plumb/board.json --json",
  ])

func paramsCommand(_ arguments: ParsedArguments) throws {
  guard let boardPath = arguments.value("board") else {
    throw UsageError("missing '--board FILE'", spec: paramsSpec)
  }
  let format = try arguments.choice("format", from: TelemetryFormat.allCases.map(\.rawValue))
    .flatMap(TelemetryFormat.init(rawValue:))
  var setup: PlumbSetup
  do {
    setup = try PlumbSetup.load(boardPath: boardPath, format: format)
  } catch {
    throw CommandFailure(.configuration, error.description)
  }
  if let folder = ParameterStore.folder(
    explicit: arguments.value("state-dir"), defaultToSystemFolder: !setup.board.isSimulated)
  {
    let contents = ParameterStore(folder: folder).load()
    for warning in contents.warnings { printError("plumb: warning: " + warning) }
    for warning in setup.apply(storedParameters: contents.values) {
      printError("plumb: warning: " + warning)
    }
  }
  let values = setup.parameterValues()
  if arguments.flag("json") {
    let entries = values.map { parameter, value -> JSONValue in
      .object([
        (key: "name", value: .string(parameter.nameString)),
        (key: "index", value: .number(Double(parameter.rawValue), text: "\(parameter.rawValue)")),
        (key: "value", value: .number(Double(value), text: PlumbParameter.text(value))),
        (key: "type", value: .string(parameter.valueType.name)),
        (key: "units", value: .string(parameter.units)),
        (
          key: "min",
          value: .number(
            Double(parameter.range.lowerBound),
            text: PlumbParameter.text(parameter.range.lowerBound))
        ),
        (
          key: "max",
          value: .number(
            Double(parameter.range.upperBound),
            text: PlumbParameter.text(parameter.range.upperBound))
        ),
        (key: "persists", value: .bool(parameter.persists)),
        (key: "description", value: .string(parameter.summary)),
      ])
    }
    print(JSONValue.object([(key: "parameters", value: .array(entries))]).formatted())
    return
  }
  let width = values.map { $0.parameter.nameString.count }.max() ?? 0
  for (parameter, value) in values {
    let name =
      parameter.nameString
      + String(repeating: " ", count: max(0, width - parameter.nameString.count))
    let units = parameter.units.isEmpty ? "" : " " + parameter.units
    print(
      "\(name)  \(PlumbParameter.text(value))\(units)  [\(parameter.valueType.name) "
        + "\(PlumbParameter.text(parameter.range.lowerBound))…"
        + "\(PlumbParameter.text(parameter.range.upperBound))]  \(parameter.summary)")
  }
}
