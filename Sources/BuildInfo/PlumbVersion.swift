/// Plumb's version: what every tool's `--version` prints, what the `version` host command
/// answers, what recordings record, and the version `make deb` gives the Debian packages (it reads
/// it from this file). One place, so the four can never disagree.
///
/// Semantic versioning: the minor number grows with each release while the major is 0.
public enum PlumbVersion {
  public static let current = "0.1.0"
}
