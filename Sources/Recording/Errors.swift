import HardwareAbstraction

/// Why a `.plumbraw` file could not be written or read: the kind, where (file, byte offset,
/// record index), the errno when a system call failed, and a message that says what to do.
///
/// A file cut short by a power loss is *not* an error: the reader returns the records up to the
/// last whole one and reports the torn bytes (`PlumbRawReader.tornBytes`).
public struct PlumbRawError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Kind: String, Hashable, Sendable {
    /// The file could not be opened or read (the errno says why).
    case unreadable
    /// The file does not start with the `PLUMBRAW` magic: it is something else.
    case notPlumbRaw
    /// The file was written in a format version this reader does not read.
    case unsupportedVersion
    /// The header's CRC does not match: the header is damaged.
    case headerCorrupt
    /// The header is cut short or holds a value no writer produces.
    case headerMalformed
    /// A record's CRC fails and valid records follow it: damage inside the file, not a torn end.
    case corruptRecord
    /// A record's CRC is right but its content is impossible (a writer bug, or a newer writer).
    case malformedRecord
    /// The header given to the writer cannot be written (a string too long, a bad value).
    case invalidHeader
    /// A record given to the writer cannot be written (a note too long, an empty transfer).
    case invalidRecord
    /// Creating, writing, syncing or closing the file failed (the errno says why).
    case writeFailed
    /// The file was deleted, moved or replaced while it was being written: the records are not
    /// at its path (deleted: lost; moved: under its new name).
    case fileGone
    /// The writer was closed, or failed earlier and refuses to append after a hole.
    case writerClosed
  }

  public var kind: Kind
  /// The file, as given.
  public var path: String
  /// The byte offset in the file the problem is at, when there is one.
  public var offset: Int?
  /// The 0-based index of the record the problem is at (records counted after the header).
  public var recordIndex: Int?
  /// The errno of a failed system call.
  public var errno: Errno?
  /// What happened and what to do.
  public var message: String

  public init(
    _ kind: Kind, path: String, offset: Int? = nil, recordIndex: Int? = nil, errno: Errno? = nil,
    _ message: String
  ) {
    self.kind = kind
    self.path = path
    self.offset = offset
    self.recordIndex = recordIndex
    self.errno = errno
    self.message = message
  }

  /// `rec.plumbraw, record 12 at byte 1234: … [ENOSPC (28)]`.
  public var description: String {
    var place: [String] = []
    if let recordIndex { place.append("record \(recordIndex)") }
    if let offset { place.append("byte \(offset)") }
    var text = path
    if !place.isEmpty { text += ", " + place.joined(separator: " at ") }
    text += ": " + message
    if let errno { text += " [\(errno)]" }
    return text
  }
}
