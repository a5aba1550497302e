/// A command line checked against its `CommandSpec`. Typed accessors validate values and name the
/// option in their errors, so validation happens before anything runs.
public struct ParsedArguments: Sendable {
  public let spec: CommandSpec
  private var values: [String: [String]]
  private var flags: Set<String>
  /// Positional arguments, in order.
  public private(set) var positionals: [String]
  /// Whether `-h`/`--help` was given (nothing else was validated then).
  public private(set) var wantsHelp: Bool
  /// Whether `--version` was given (nothing else was validated then).
  public private(set) var wantsVersion: Bool

  /// Parses `arguments` (without the command name) against `spec`.
  ///
  /// Accepts `--name value`, `--name=value`, flags, positionals, and `--` to end options. Unknown
  /// options, missing values, repeated single options, missing required options or positionals,
  /// and surplus positionals are usage errors.
  public init(_ arguments: [String], spec: CommandSpec) throws(UsageError) {
    self.spec = spec
    values = [:]
    flags = []
    positionals = []
    wantsHelp = false
    wantsVersion = false
    var index = 0
    var optionsEnded = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if !optionsEnded && (argument == "-h" || argument == "--help") {
        wantsHelp = true
        return
      }
      if !optionsEnded && argument == "--version" {
        wantsVersion = true
        return
      }
      if !optionsEnded && argument == "--" {
        optionsEnded = true
        continue
      }
      if !optionsEnded && argument.hasPrefix("-") && argument != "-" {
        guard argument.hasPrefix("--") else {
          throw UsageError("unknown option '\(argument)' (options are spelled --name)", spec: spec)
        }
        var name = String(argument.dropFirst(2))
        var inlineValue: String?
        if let equals = name.firstIndex(of: "=") {
          inlineValue = String(name[name.index(after: equals)...])
          name = String(name[..<equals])
        }
        guard let option = spec.options.first(where: { $0.name == name }) else {
          throw UsageError(
            "unknown option '--\(name)'\(suggestion(for: name, in: spec))", spec: spec)
        }
        if option.valueName == nil {
          if inlineValue != nil {
            throw UsageError("'--\(name)' is a flag and takes no value", spec: spec)
          }
          flags.insert(name)
          continue
        }
        let value: String
        if let inlineValue {
          value = inlineValue
        } else {
          guard index < arguments.count else {
            throw UsageError(
              "'--\(name)' needs a value (\(option.valueName ?? "VALUE"))", spec: spec)
          }
          // `--rate --fast`: the next word is an option, not a forgotten value. A value that
          // really starts with two dashes is written `--rate=--x`.
          let next = arguments[index]
          if next.hasPrefix("--") || next == "-h" {
            throw UsageError(
              "'--\(name)' needs a value (\(option.valueName ?? "VALUE")), found '\(next)'; "
                + "write --\(name)=\(next) if that is the value", spec: spec)
          }
          value = arguments[index]
          index += 1
        }
        if !option.isRepeating && values[name] != nil {
          throw UsageError("'--\(name)' was given more than once", spec: spec)
        }
        values[name, default: []].append(value)
      } else {
        positionals.append(argument)
      }
    }
    for option in spec.options where option.isRequired && values[option.name] == nil {
      throw UsageError(
        "missing '--\(option.name) \(option.valueName ?? "")': \(option.help)", spec: spec)
    }
    let required = spec.positionals.filter(\.isRequired).count
    if positionals.count < required {
      let missing = spec.positionals.filter(\.isRequired)[positionals.count]
      throw UsageError("missing \(missing.name): \(missing.help)", spec: spec)
    }
    let repeating = spec.positionals.last?.isRepeating ?? false
    if !repeating && positionals.count > spec.positionals.count {
      throw UsageError(
        "unexpected argument '\(positionals[spec.positionals.count])'", spec: spec)
    }
  }

  /// Whether the flag `--name` was given.
  public func flag(_ name: String) -> Bool {
    precondition(
      spec.options.contains { $0.name == name && $0.valueName == nil }, "no flag --\(name)")
    return flags.contains(name)
  }

  /// The value of `--name`, or `nil` when absent.
  public func value(_ name: String) -> String? {
    precondition(
      spec.options.contains { $0.name == name && $0.valueName != nil }, "no option --\(name)")
    return values[name]?.last
  }

  /// Every value given for a repeating `--name`, in order.
  public func values(_ name: String) -> [String] {
    values[name] ?? []
  }

  /// A value that must be one of `choices`.
  public func choice(_ name: String, from choices: [String]) throws(UsageError) -> String? {
    guard let raw = value(name) else { return nil }
    guard choices.contains(raw) else {
      throw UsageError(
        "'--\(name)' must be one of \(choices.joined(separator: ", ")), not '\(raw)'", spec: spec)
    }
    return raw
  }

  /// A finite number, optionally within a closed range.
  public func double(_ name: String, in range: ClosedRange<Double>? = nil) throws(UsageError)
    -> Double?
  {
    guard let raw = value(name) else { return nil }
    guard let number = Double(raw), !number.isNaN else {
      throw UsageError("'--\(name)' needs a number, not '\(raw)'", spec: spec)
    }
    if number.isInfinite {
      // `1e400` parses as infinity: a number too large, not a word.
      guard raw.lowercased().contains("inf") else { throw outOfRange(name, raw, range) }
      throw UsageError("'--\(name)' needs a finite number, not '\(raw)'", spec: spec)
    }
    if let range, !range.contains(number) { throw outOfRange(name, raw, range) }
    return number
  }

  /// A whole number, optionally within a closed range.
  public func integer(_ name: String, in range: ClosedRange<Int>? = nil) throws(UsageError) -> Int?
  {
    guard let raw = value(name) else { return nil }
    guard let number = Int(raw) else {
      let digits = raw.first == "-" || raw.first == "+" ? raw.dropFirst() : raw[...]
      if !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) {
        throw outOfRange(name, raw, range)  // whole, but more than Int holds
      }
      throw UsageError("'--\(name)' needs a whole number, not '\(raw)'", spec: spec)
    }
    if let range, !range.contains(number) { throw outOfRange(name, raw, range) }
    return number
  }

  /// `raw` is a number outside `range` (or outside what the type holds, when there is none).
  private func outOfRange<Bound: Comparable>(
    _ name: String, _ raw: String, _ range: ClosedRange<Bound>?
  ) -> UsageError {
    guard let range else { return UsageError("'--\(name)' \(raw) is out of range", spec: spec) }
    return UsageError(
      "'--\(name)' must be between \(range.lowerBound) and \(range.upperBound), not \(raw)",
      spec: spec)
  }
}

/// A command line that does not fit its spec. Executables print `message` and a hint to use
/// `--help`, and exit with `ExitCode.usage` (64, `EX_USAGE` from sysexits.h).
public struct UsageError: Error, Sendable, CustomStringConvertible {
  public var message: String
  public var command: String

  public init(_ message: String, spec: CommandSpec) {
    self.message = message
    self.command = spec.name
  }

  public init(_ message: String, command: String) {
    self.message = message
    self.command = command
  }

  public var description: String {
    "\(command): \(message)\nrun '\(command) --help' for usage"
  }
}

func suggestion(for name: String, in spec: CommandSpec) -> String {
  let close = spec.options.map(\.name).filter {
    editDistance($0, name) <= max(1, name.count / 3)
  }
  guard let best = close.first else { return "" }
  return "; did you mean '--\(best)'?"
}

/// Levenshtein distance, for "did you mean" hints.
func editDistance(_ a: String, _ b: String) -> Int {
  let a = Array(a)
  let b = Array(b)
  guard !a.isEmpty else { return b.count }
  guard !b.isEmpty else { return a.count }
  var previous = Array(0...b.count)
  var current = [Int](repeating: 0, count: b.count + 1)
  for i in 1...a.count {
    current[0] = i
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
    }
    swap(&previous, &current)
  }
  return previous[b.count]
}
