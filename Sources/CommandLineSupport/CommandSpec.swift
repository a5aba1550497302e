/// The shape of one command line: what a command is called, what it does, and what it accepts.
///
/// Written in the spirit of swift-argument-parser (which cannot be a dependency here):
/// subcommands, `--kebab-case` options, `--help` on everything, validation apart from running,
/// exit status 64 on usage errors, examples in the help that are tested end to end.
public struct CommandSpec: Sendable {
  /// The command's name as typed, e.g. `plumb replay`.
  public var name: String
  /// One line: what the command does.
  public var abstract: String
  /// More text after the usage line (may be empty).
  public var discussion: String
  public var options: [OptionSpec]
  public var positionals: [PositionalSpec]
  /// Example invocations, shown in `--help`.
  public var examples: [String]

  public init(
    name: String, abstract: String, discussion: String = "", options: [OptionSpec] = [],
    positionals: [PositionalSpec] = [], examples: [String] = []
  ) {
    self.name = name
    self.abstract = abstract
    self.discussion = discussion
    self.options = options
    self.positionals = positionals
    self.examples = examples
  }

  /// The `--help` text.
  public var help: String {
    var lines: [String] = []
    lines.append("\(name) — \(abstract)")
    lines.append("")
    var usage = "usage: \(name)"
    for option in options {
      let shown = option.valueName.map { "--\(option.name) \($0)" } ?? "--\(option.name)"
      usage += option.isRequired ? " \(shown)" : " [\(shown)]"
    }
    for positional in positionals {
      usage += positional.isRequired ? " \(positional.name)" : " [\(positional.name)]"
      if positional.isRepeating { usage += " ..." }
    }
    lines.append(usage)
    if !discussion.isEmpty {
      lines.append("")
      lines.append(discussion)
    }
    if !positionals.isEmpty {
      lines.append("")
      lines.append("arguments:")
      for positional in positionals {
        lines.append("  " + pad(positional.name, to: 24) + positional.help)
      }
    }
    lines.append("")
    lines.append("options:")
    for option in options {
      var left = "--\(option.name)"
      if let value = option.valueName { left += " \(value)" }
      var help = option.help
      if let defaultValue = option.defaultValue { help += " (default: \(defaultValue))" }
      lines.append("  " + pad(left, to: 24) + help)
    }
    lines.append("  " + pad("-h, --help", to: 24) + "show this help")
    lines.append("  " + pad("--version", to: 24) + "show Plumb's version")
    if !examples.isEmpty {
      lines.append("")
      lines.append("examples:")
      for example in examples { lines.append("  \(example)") }
    }
    return lines.joined(separator: "\n") + "\n"
  }
}

/// One `--option`: a flag (no value) or an option that takes a value.
public struct OptionSpec: Sendable {
  /// The name without dashes, in kebab-case: `duration` for `--duration`.
  public var name: String
  /// The value's placeholder, e.g. `SECONDS`; `nil` for a flag.
  public var valueName: String?
  public var help: String
  /// Shown in the help; the command applies it itself.
  public var defaultValue: String?
  public var isRequired: Bool
  /// Whether the option may be given more than once (all values are kept).
  public var isRepeating: Bool

  /// A flag: `--fast`.
  public static func flag(_ name: String, help: String) -> OptionSpec {
    OptionSpec(
      name: name, valueName: nil, help: help, defaultValue: nil, isRequired: false,
      isRepeating: false)
  }

  /// An option with a value: `--board FILE` or `--board=FILE`.
  public static func option(
    _ name: String, value: String, help: String, default defaultValue: String? = nil,
    required: Bool = false, repeating: Bool = false
  ) -> OptionSpec {
    OptionSpec(
      name: name, valueName: value, help: help, defaultValue: defaultValue, isRequired: required,
      isRepeating: repeating)
  }
}

/// A positional argument.
public struct PositionalSpec: Sendable {
  public var name: String
  public var help: String
  public var isRequired: Bool
  /// Whether it takes all remaining positional arguments.
  public var isRepeating: Bool

  public init(_ name: String, help: String, required: Bool = true, repeating: Bool = false) {
    self.name = name
    self.help = help
    self.isRequired = required
    self.isRepeating = repeating
  }
}

func pad(_ text: String, to width: Int) -> String {
  text.count >= width ? text + "  " : text + String(repeating: " ", count: width - text.count)
}
