import HIL
import TestSupport
import Testing

/// The soak, short: three simulated minutes of the `soak` fault plan (random NACKs and EIO,
/// lost, late, duplicated and jittered edges), three serial unplugs, three bursts of garbage on
/// the command input and `status` commands, at full speed. `make soak` runs the same for 24
/// simulated hours in a release build.
@Suite struct SoakTests {
  @Test func threeSimulatedMinutesOfRandomFaultsReconcile() throws {
    let seconds = 180.0
    let options = Soak.options(seconds: seconds, seed: 1)
    #expect(options.serialUnplugs.count == 3 && options.commandGarbage.count == 3)
    var memory: [MemorySample] = []
    var heap: [Int64] = []
    var run: HILResult? = nil
    _ = try AllocationCounter.count {
      run = try runHIL(options) { simulated in
        if let usage = MemoryUsage.current() {
          memory.append(MemorySample(seconds: simulated, usage: usage))
        }
        heap.append(AllocationCounter.liveBytes)
      }
    }
    let result = try #require(run)
    // Memory stays flat: the heap this run's thread holds (net of what it freed) grows by no
    // more than a few pages between the first progress report and the end, however many
    // faults, unplugs and garbage bytes went by. (VmRSS, which `make soak` checks in its own
    // process, is shared here with the whole parallel suite.) Not in the sanitized builds,
    // whose runtime owns malloc: there the heap cannot be counted.
    #expect(heap.count == 3)
    if AllocationCounter.isAvailable {
      let growth = (heap.last ?? 0) - (heap.first ?? 0)
      #expect(growth < 64 * 1024, "heap grew by \(growth) bytes: \(heap)")
    }
    let a = result.accounting
    let i = result.injected
    // The loop ran to the end through everything the plan threw at it.
    #expect(result.seconds >= seconds && (result.lastFrameSeconds ?? 0) > seconds - 1)
    #expect(i.busFaults.notAcknowledged > 0 && i.busFaults.ioError > 0)
    #expect(i.edgeFaults.missing > 5 && i.edgeFaults.late > 5 && i.edgeFaults.duplicated > 5)
    #expect(result.status.serialDisconnects == 3 && result.status.serialReopens == 3)
    #expect(result.garbageBytesSent > 1000 && result.repliesError > 0 && result.repliesOK > 0)
    // Every produced sample is accounted for; frames lost in the link are the unplugs'.
    #expect(a.isBalanced && i.edges.isReconciled)
    // An unplug may cut the frame being sent (the host gets its head): at most one per unplug.
    #expect(result.link.crcErrors + result.link.malformed <= result.status.serialDisconnects)
    #expect(a.produced == i.chip.samplesProduced && a.countedMissed == result.status.missedSamples)
    #expect(result.link.framesLost == a.lostInLink)
    #expect(a.lostInLink >= result.status.framesDroppedDisconnected)
    #expect(a.lostInLink - result.status.framesDroppedDisconnected <= 3 * 3)
    #expect(memory.count == 3)
    #expect(a.silentLosses == 0, "silent losses at \(a.silentLossTimes)")
    let verdict = SoakVerdict(result: result, memory: memory, requestedSeconds: seconds)
    // Every check but VmRSS (above: the heap instead).
    let failures = verdict.failures.filter { !$0.hasPrefix("VmRSS") }
    #expect(failures.isEmpty, "\(failures)")
  }
}
