import Glibc
import HardwareAbstraction
import POSIXSupport
import Testing

@Suite struct ErrnoTableTests {
  /// HardwareAbstraction restates the errno values it names (it imports no C library); they
  /// must be Glibc's, or every error mapping in the Linux layer is silently wrong.
  @Test func restatedCodesEqualGlibcConstants() {
    let table: [(Errno, CInt, String)] = [
      (.operationNotPermitted, EPERM, "EPERM"),
      (.noSuchFileOrDirectory, ENOENT, "ENOENT"),
      (.interrupted, EINTR, "EINTR"),
      (.ioError, EIO, "EIO"),
      (.noSuchDeviceOrAddress, ENXIO, "ENXIO"),
      (.badFileDescriptor, EBADF, "EBADF"),
      (.tryAgain, EAGAIN, "EAGAIN"),
      (.tryAgain, EWOULDBLOCK, "EAGAIN"),
      (.outOfMemory, ENOMEM, "ENOMEM"),
      (.permissionDenied, EACCES, "EACCES"),
      (.busy, EBUSY, "EBUSY"),
      (.noSuchDevice, ENODEV, "ENODEV"),
      (.invalidArgument, EINVAL, "EINVAL"),
      (.notATerminal, ENOTTY, "ENOTTY"),
      (.protocolError, EPROTO, "EPROTO"),
      (.badMessage, EBADMSG, "EBADMSG"),
      (.notSupported, EOPNOTSUPP, "EOPNOTSUPP"),
      (.shutdown, ESHUTDOWN, "ESHUTDOWN"),
      (.timedOut, ETIMEDOUT, "ETIMEDOUT"),
      (.remoteIO, EREMOTEIO, "EREMOTEIO"),
    ]
    for (errno, glibc, name) in table {
      #expect(errno.rawValue == glibc, "\(name)")
      #expect(errno.name == name)
      #expect(Errno(rawValue: glibc).name == name)
    }
  }

  @Test func currentReadsTheThreadsErrno() {
    Glibc.errno = EREMOTEIO
    #expect(Errno.current == .remoteIO)
    // A real failing call sets it.
    #expect(Glibc.close(-1) == -1)
    #expect(Errno.current == .badFileDescriptor)
  }
}

@Suite struct InterruptRetryTests {
  /// A fake system call that fails with `failure` for its first `failures` calls, then returns
  /// `result`.
  final class FlakyCall {
    var calls = 0
    let failures: Int
    let failure: CInt
    let result: Int

    init(failures: Int, failure: CInt = EINTR, result: Int = 42) {
      self.failures = failures
      self.failure = failure
      self.result = result
    }

    func callAsFunction() -> Int {
      calls += 1
      if calls <= failures {
        Glibc.errno = failure
        return -1
      }
      return result
    }
  }

  @Test(arguments: [0, 1, 2, 7, 100])
  func retriesInterruptedCallsUntilTheyComplete(failures: Int) throws {
    let call = FlakyCall(failures: failures)
    let result = try retryingOnInterrupt { call() }
    #expect(result == 42)
    #expect(call.calls == failures + 1)
  }

  @Test func otherErrorsAreReportedAtOnceWithTheirErrno() {
    let call = FlakyCall(failures: 3, failure: EIO)
    #expect(throws: SystemCallError(.ioError)) { try retryingOnInterrupt { call() } }
    #expect(call.calls == 1)
  }

  @Test func anErrorAfterInterruptionsIsReported() {
    var calls = 0
    #expect(throws: SystemCallError(.tryAgain)) {
      try retryingOnInterrupt { () -> Int32 in
        calls += 1
        Glibc.errno = calls < 3 ? EINTR : EAGAIN
        return -1
      }
    }
    #expect(calls == 3)
  }

  /// libi2c's helpers return the negated errno (and leave errno set) instead of -1.
  @Test func negatedErrnoResultsCountAsFailures() {
    var calls = 0
    #expect(throws: SystemCallError(.remoteIO)) {
      try retryingOnInterrupt { () -> Int32 in
        calls += 1
        if calls == 1 {
          Glibc.errno = EINTR
          return -EINTR
        }
        Glibc.errno = EREMOTEIO
        return -EREMOTEIO
      }
    }
    #expect(calls == 2)
  }

  @Test func anExpectedErrnoIsNilNotAnError() throws {
    let refused = FlakyCall(failures: 1, failure: EAGAIN)
    #expect(try retryingOnInterrupt(orNilOn: .tryAgain) { refused() } == nil)
    #expect(refused.calls == 1)
    let interrupted = FlakyCall(failures: 3)
    #expect(try retryingOnInterrupt(orNilOn: .tryAgain) { interrupted() } == 42)
    #expect(interrupted.calls == 4)
    let failing = FlakyCall(failures: 1, failure: EIO)
    #expect(throws: SystemCallError(.ioError)) {
      try retryingOnInterrupt(orNilOn: .tryAgain) { failing() }
    }
  }

  @Test func zeroIsASuccess() throws {
    Glibc.errno = EINTR
    #expect(try retryingOnInterrupt { Int32(0) } == 0)
  }
}
