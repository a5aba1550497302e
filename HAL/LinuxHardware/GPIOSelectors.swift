/// Which GPIO chip: by device path, by kernel name, or by label.
///
/// Labels matter because chip numbers are not stable: on a Raspberry Pi 5 the header's chip is
/// `gpiochip4` on older kernels and `gpiochip0` on newer ones, while its label
/// (`pinctrl-rp1`) stays put; on a Pi 4 the label is `pinctrl-bcm2711`. `gpiodetect` (package
/// gpiod) lists names and labels.
public enum GPIOChipSelector: Hashable, Sendable, CustomStringConvertible {
  /// A device path, e.g. `/dev/gpiochip0`.
  case path(String)
  /// A kernel name, e.g. `gpiochip0` (opened as `/dev/` + name).
  case name(String)
  /// A label, e.g. `pinctrl-bcm2711`: every chip is looked at until one matches.
  case label(String)

  /// Reads a board file's or command line's chip: a path starts with `/`, `gpiochipN` or a bare
  /// number is a name, anything else is a label.
  public init(_ text: String) {
    if text.hasPrefix("/") {
      self = .path(text)
    } else if text.hasPrefix("gpiochip"), UInt(text.dropFirst("gpiochip".count)) != nil {
      self = .name(text)
    } else if UInt(text) != nil {
      self = .name("gpiochip" + text)
    } else {
      self = .label(text)
    }
  }

  /// The chip as given, for messages.
  public var description: String {
    switch self {
    case .path(let path): path
    case .name(let name): name
    case .label(let label): label
    }
  }
}

/// Which line of a chip: by offset (on a Raspberry Pi the BCM GPIO number, e.g. 17 for GPIO17)
/// or by the name the device tree gives it (e.g. `GPIO17`).
public enum GPIOLineSelector: Hashable, Sendable, CustomStringConvertible {
  case offset(UInt32)
  case name(String)

  /// A number is an offset; anything else a line name.
  public init(_ text: String) {
    if let offset = UInt32(text) {
      self = .offset(offset)
    } else {
      self = .name(text)
    }
  }

  /// The line as given, for messages.
  public var description: String {
    switch self {
    case .offset(let offset): String(offset)
    case .name(let name): name
    }
  }
}
