import ByteFormats
import HardwareAbstraction

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// When, and how, the writer asks the kernel to put appended records on the device.
///
/// Without a sync the kernel writes dirty pages back on its own (after about 30 s by default,
/// `vm.dirty_expire_centisecs`): a power loss can take that much of the end of a recording, and
/// never more. The file never holds a half-written record that a reader would mistake for
/// data: every record carries its CRC, and a torn end is dropped.
public struct PlumbRawSyncPolicy: Hashable, Sendable {
  /// How often.
  public enum Interval: Hashable, Sendable {
    /// After every `n` appended records (of any kind).
    case records(Int)
    /// When a sample's timestamp is this far past the last sync's: seconds of *sample* time, so
    /// a replay or a simulated run syncs at the same records as a live one.
    case sampleTime(nanoseconds: Int64)
  }

  /// How.
  public enum Method: Hashable, Sendable {
    /// `fdatasync(2)`: returns once the data and the file size are on the device. It waits for
    /// the device — milliseconds on an SSD, 5–100 ms on an SD card — so it is the one call in
    /// the writer that can hold the loop longer than a `write()`. For bench recordings, where
    /// losing at most one interval matters more than a late frame (the kernel queues 16 edges,
    /// 160 ms at 100 Hz, so no sample is lost while it waits).
    case dataSync
    /// `posix_fadvise(POSIX_FADV_DONTNEED)`: on Linux it starts writing the dirty pages back and
    /// returns without waiting for the device to finish. The data reaches the device within
    /// milliseconds; the file size is committed with the file system's next journal commit (5 s
    /// on ext4). For recording alongside the live loop. The call does not wait for the writes,
    /// but it can wait to *queue* them when the device is congested: on the development VM
    /// the syncing appends took 20–30 µs at p99 and up to 12 ms at worst, against up to 25 ms
    /// for `fdatasync` (an SD card is slower on both).
    case startWriteback
  }

  /// `nil`: never sync before `close()`.
  public var interval: Interval?
  public var method: Method

  public init(interval: Interval?, method: Method = .dataSync) {
    self.interval = interval
    self.method = method
  }

  /// Leave it to the kernel; `close()` syncs.
  public static let never = PlumbRawSyncPolicy(interval: nil)

  /// `fdatasync` at every `interval`.
  public static func dataSync(every interval: Interval) -> PlumbRawSyncPolicy {
    PlumbRawSyncPolicy(interval: interval, method: .dataSync)
  }

  /// Start write-back (without waiting) at every `interval`.
  public static func startWriteback(every interval: Interval) -> PlumbRawSyncPolicy {
    PlumbRawSyncPolicy(interval: interval, method: .startWriteback)
  }
}

/// Writes a `.plumbraw` file: the header when it is created, then one record per `append`.
///
/// **On the hot path.** The loop may append on every sample. `append` encodes the record into a
/// buffer made when the writer was (no allocation) and hands it to the kernel with exactly one
/// `write(2)` of at most 261 bytes (33 for a sample), which copies it into the page cache and
/// returns without waiting for the device: 1.2 µs median, 4 µs at p99 on the development VM
/// (an hour of 100 Hz samples; PLUMBRAW.md, *Writing*). A `write` can still
/// be held by the kernel when far too many dirty pages wait for a slow device (dirty-page
/// throttling): that is the "one write()" the loop must budget for. The periodic
/// `fdatasync` of `PlumbRawSyncPolicy.Method.dataSync` waits for the device; use
/// `.startWriteback` (or no sync) beside the live loop.
///
/// **Append-safe.** The file is opened `O_APPEND` and every record is one `write`, so records
/// never interleave or overlap. If the kernel takes only part of a record (the disk filled up),
/// the writer cuts the file back to its last whole record and fails; after any failure it
/// refuses further appends, because a recording with a hole would replay wrongly. A power loss
/// leaves at most one torn record at the end, which readers drop.
///
/// A class: it owns the file descriptor and the buffer. Not `Sendable`: it belongs to the loop.
public final class PlumbRawWriter {
  /// The file.
  public let path: String
  /// The header as written.
  public let header: PlumbRawHeader
  /// When it syncs.
  public let sync: PlumbRawSyncPolicy
  /// Records appended.
  public private(set) var recordsWritten: UInt64 = 0
  /// The file's length: header and records.
  public private(set) var bytesWritten: Int64 = 0
  /// Syncs made (`fdatasync` or write-back starts).
  public private(set) var syncs: UInt64 = 0
  /// Write-back starts the kernel refused (they are not retried; the close sync covers them).
  public private(set) var writebackRefusals: UInt64 = 0
  /// The failure that stopped the writer, if one did.
  public private(set) var failure: PlumbRawError?
  /// Whether `close()` was called.
  public private(set) var isClosed = false

  private var fd: Int32
  /// The file's identity when it was created, to notice it deleted or replaced under the writer.
  private let device: UInt64
  private let inode: UInt64
  /// `path` as a C string made once: passing the `String` to `stat` would allocate.
  private let cPath: UnsafeMutablePointer<CChar>
  private let buffer: UnsafeMutableRawBufferPointer
  private var recordsSinceSync = 0
  private var lastSyncSampleTime: Timestamp?
  private var syncedUpTo: Int64 = 0

  /// Creates the file at `path` and writes `header`, then syncs it (and its folder), so a file
  /// that exists is always readable. Refuses to replace an existing file unless `overwrite`.
  public init(
    creating path: String, header: PlumbRawHeader, sync: PlumbRawSyncPolicy = .never,
    overwrite: Bool = false
  ) throws(PlumbRawError) {
    if case .records(let n)? = sync.interval, n < 1 {
      throw PlumbRawError(.invalidHeader, path: path, "sync every \(n) records: give at least 1")
    }
    if case .sampleTime(let n)? = sync.interval, n < 1 {
      throw PlumbRawError(.invalidHeader, path: path, "sync every \(n) ns: give at least 1")
    }
    let bytes = try header.encoded(path: path)
    // Without blocking: opening a named pipe for writing would wait for a reader for ever (and
    // retry the open through SIGTERM). Truncated only once known to be a regular file.
    let flags = O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_NOCTTY | (overwrite ? 0 : O_EXCL)
    let fd: Int32
    do {
      fd = try POSIXFile.open(path, flags)
    } catch {
      let hint =
        error.errno.rawValue == EEXIST
        ? "; choose another name, or remove the old recording first" : ""
      throw PlumbRawError(
        .writeFailed, path: path, errno: error.errno,
        "cannot create the recording: \(POSIXFile.message(error.errno))\(hint)")
    }
    var status = stat()
    guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
      _ = Glibc.close(fd)
      throw PlumbRawError(
        .writeFailed, path: path,
        "not a regular file: a recording must be a file it can be read back from")
    }
    // One writer per recording: another run given the same file (with overwrite) would truncate
    // it and interleave its records with these. The lock goes with the descriptor.
    // A file system without locks (ENOLCK, EOPNOTSUPP) records unlocked.
    if flock(fd, LOCK_EX | LOCK_NB) != 0 && Glibc.errno == EWOULDBLOCK {
      _ = Glibc.close(fd)
      throw PlumbRawError(
        .writeFailed, path: path, errno: Errno(rawValue: EWOULDBLOCK),
        "the file is being recorded by another process (plumb record or plumb run --record); "
          + "wait for it to end, or choose another name")
    }
    _ = fcntl(fd, F_SETFL, O_APPEND)
    do throws(POSIXFile.Failure) {
      if overwrite && Glibc.ftruncate(fd, 0) != 0 { throw .current }
      var failure: POSIXFile.Failure?
      bytes.withUnsafeBytes { raw in
        do throws(POSIXFile.Failure) {
          try POSIXFile.writeAll(fd, raw)
        } catch {
          failure = error
        }
      }
      if let failure { throw failure }
      try POSIXFile.dataSync(fd)
    } catch {
      // A file created here is removed; one replaced is left empty (removing it by name would
      // remove a symbolic link instead of the file it leads to).
      if overwrite { _ = Glibc.ftruncate(fd, 0) }
      Self.unlockAndClose(fd)
      if !overwrite { _ = Glibc.unlink(path) }
      throw PlumbRawError(
        .writeFailed, path: path, errno: error.errno,
        "cannot write the header: \(POSIXFile.message(error.errno))"
          + (overwrite ? "; the file was left empty" : ""))
    }
    POSIXFile.syncFolder(of: path)
    self.path = path
    self.header = header
    self.sync = sync
    self.fd = fd
    cPath = strdup(path)
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
    bytesWritten = Int64(bytes.count)
    syncedUpTo = bytesWritten
    buffer = .allocate(byteCount: PlumbRawFormat.maximumRecordLength + 3, alignment: 8)
    buffer.initializeMemory(as: UInt8.self, repeating: 0)
  }

  deinit {
    if fd >= 0 { Self.unlockAndClose(fd) }
    buffer.deallocate()
    free(cPath)
  }

  /// Releases the recording's lock, then closes the descriptor.
  ///
  /// The lock belongs to the open file description, which every copy of the descriptor shares,
  /// and a child process holds a copy from the moment it is forked until it execs (or closes
  /// it): `O_CLOEXEC` closes that copy only at the exec. Closed alone, the descriptor would leave
  /// the lock held for as long as a child spawned meanwhile by another thread (a supervisor, a
  /// test runner) takes to get there, and a new recording to the same file would be refused as
  /// "being recorded by another process". `LOCK_UN` releases it through any copy, at once.
  private static func unlockAndClose(_ fd: Int32) {
    _ = flock(fd, LOCK_UN)
    _ = Glibc.close(fd)
  }

  /// Appends one record with one `write(2)`; syncs when the policy says. Allocation-free.
  public func append(_ record: PlumbRawRecord) throws(PlumbRawError) {
    if let failure { throw refusal(after: failure) }
    guard !isClosed else {
      throw PlumbRawError(.writerClosed, path: path, "the recording is closed")
    }
    guard let length = record.encode(into: buffer) else {
      throw PlumbRawError(
        .invalidRecord, path: path, recordIndex: Int(recordsWritten),
        "the \(record.kind) record cannot be written (a note longer than "
          + "\(PlumbRawNote.maximumTextBytes) bytes, or a transfer without bytes)")
    }
    let written: Int
    do {
      written = try POSIXFile.writeOnce(fd, UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
    } catch {
      throw fail(error.errno, "appending record \(recordsWritten) failed")
    }
    if written != length { try completeOrCut(written: written, of: length) }
    bytesWritten += Int64(length)
    recordsWritten += 1
    recordsSinceSync += 1
    guard let interval = sync.interval else { return }
    switch interval {
    case .records(let n):
      if recordsSinceSync >= n { try syncNow() }
    case .sampleTime(let n):
      guard case .sample(let sample) = record else { return }
      guard let last = lastSyncSampleTime else {
        lastSyncSampleTime = sample.timestamp
        return
      }
      if sample.timestamp.nanoseconds(since: last) >= n {
        lastSyncSampleTime = sample.timestamp
        try syncNow()
      }
    }
  }

  /// After a `write` that took only `written` of the record's `length` bytes: asks for the
  /// rest, which either completes the record (a write cut short by a signal) or fails with the
  /// reason (`ENOSPC` a full device, `EFBIG` a file-size limit); then the partial record is cut
  /// off, so the file ends with its last whole record.
  private func completeOrCut(written: Int, of length: Int) throws(PlumbRawError) {
    var total = written
    var reason = Errno(rawValue: ENOSPC)
    while total < length {
      do {
        let n = try POSIXFile.writeOnce(
          fd, UnsafeRawBufferPointer(rebasing: buffer[total..<length]))
        if n == 0 { break }
        total += n
      } catch {
        reason = error.errno
        break
      }
    }
    if total == length { return }
    let cut = Glibc.ftruncate(fd, off_t(bytesWritten)) == 0
    throw fail(
      reason,
      "the kernel took \(total) of record \(recordsWritten)'s \(length) bytes"
        + (cut ? " (the partial record was removed)" : " (the file ends with a torn record)"))
  }

  /// Syncs now with the policy's method (`fdatasync` when the policy never syncs).
  public func syncNow() throws(PlumbRawError) {
    if let failure { throw refusal(after: failure) }
    guard !isClosed else { return }
    recordsSinceSync = 0
    syncs += 1
    if sync.method == .startWriteback && sync.interval != nil {
      // Start write-back of what was appended since the last call, without waiting.
      if Glibc.posix_fadvise(fd, off_t(syncedUpTo), 0, POSIX_FADV_DONTNEED) != 0 {
        writebackRefusals += 1
      }
      syncedUpTo = bytesWritten
      try checkStillAtPath()
      return
    }
    do {
      try POSIXFile.dataSync(fd)
    } catch {
      // After a failed fdatasync Linux may have dropped the dirty pages: what is on the device
      // is unknown, so nothing more is appended.
      throw fail(error.errno, "fdatasync failed")
    }
    syncedUpTo = bytesWritten
    try checkStillAtPath()
  }

  /// Syncs (`fdatasync`) and closes. Idempotent.
  public func close() throws(PlumbRawError) {
    guard !isClosed else { return }
    isClosed = true
    defer {
      Self.unlockAndClose(fd)
      fd = -1
    }
    if failure != nil { return }
    do {
      try POSIXFile.dataSync(fd)
    } catch {
      throw fail(error.errno, "the final fdatasync failed")
    }
    try checkStillAtPath()
  }

  /// Fails when the file written is no longer the one at `path`. Linux goes on writing to a
  /// file deleted while it is open, and frees it when it is closed; a file moved away takes the
  /// records with it. Either way the recording is not where it was asked to be: saying it is
  /// would report hours of samples as kept that are gone. Checked at every sync (`fstat` and
  /// `stat`, no allocation) and at `close()`.
  private func checkStillAtPath() throws(PlumbRawError) {
    var status = stat()
    if fstat(fd, &status) == 0 && status.st_nlink == 0 {
      throw stop(
        "the file was deleted while recording: the \(recordsWritten) records written are lost "
          + "with it (freed when the recording closes); leave a recording where it is until it "
          + "ends, and record again")
    }
    var there = stat()
    let present = stat(cPath, &there) == 0
    if !present || UInt64(there.st_dev) != device || UInt64(there.st_ino) != inode {
      throw stop(
        "the file was moved or replaced while recording (\(present ? "another file is there now" : "nothing is there now")): "
          + "the \(recordsWritten) records written went with the file that was moved, under its "
          + "new name; no more records are appended")
    }
  }

  private func fail(_ errno: Errno, _ what: String) -> PlumbRawError {
    let error = PlumbRawError(
      .writeFailed, path: path, offset: Int(bytesWritten), recordIndex: Int(recordsWritten),
      errno: errno,
      "\(what): \(POSIXFile.message(errno)); the recording is whole up to here and no more "
        + "records are appended")
    failure = error
    return error
  }

  /// Stops the writer for a reason that is not a failed system call.
  private func stop(_ message: String) -> PlumbRawError {
    let error = PlumbRawError(
      .fileGone, path: path, offset: Int(bytesWritten), recordIndex: Int(recordsWritten),
      message)
    failure = error
    return error
  }

  private func refusal(after failure: PlumbRawError) -> PlumbRawError {
    PlumbRawError(
      .writerClosed, path: path, offset: failure.offset, recordIndex: failure.recordIndex,
      errno: failure.errno, "the writer stopped after an earlier failure: \(failure.message)")
  }
}
