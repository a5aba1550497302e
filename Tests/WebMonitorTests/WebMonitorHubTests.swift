import Monitoring
import Telemetry
import TestSupport
import Testing
import WebMonitor

@Suite struct WebMonitorHubTests {
  /// The serial loop publishes every frame: that costs a lock and a copy, no allocation.
  @Test(.countsAllocations) func publishingAFrameAllocatesNothing() {
    #expect(AllocationCounter.isActive)
    let hub = WebMonitorHub(input: "x", version: "0", commandsEnabled: false)
    let frames = (0..<100).map { MonitorEvent.frame(testFrame(UInt32($0))) }
    func publishAll() {
      for index in frames.indices { hub.publish(frames[index]) }
    }
    // Once uncounted: the runtime's one-time work (type metadata made on first use) is not
    // per frame.
    publishAll()
    let allocations = AllocationCounter.count { publishAll() }
    #expect(allocations == 0)
    #expect(hub.framesReceived == 200)
  }

  /// Publishing statistics keeps no reference to the loop's latency histogram: the loop's next
  /// frame does not copy it (72 KiB, copy on write). (Publishing itself walks the histogram for
  /// its 99th percentile, which allocates in a debug build of Monitoring, not in release.)
  @Test(.countsAllocations) func publishingStatisticsCostsTheLoopNoCopy() {
    let hub = WebMonitorHub(input: "x", version: "0", commandsEnabled: false)
    var statistics = MonitorStatistics()
    statistics.latency.record(400)
    statistics.latency.record(900)
    hub.publishStatistics(statistics)
    let allocations = AllocationCounter.count { statistics.latency.record(500) }
    #expect(allocations == 0)
  }

  @Test func keepsTheNewestMessagesAndCountsTheRest() {
    let hub = WebMonitorHub(input: "x", version: "0", commandsEnabled: false)
    for _ in 0..<(WebMonitorHub.messageQueueCapacity + 10) {
      hub.publish(.reply(HostReply(.ok, "OK")))
    }
    #expect(hub.messagesDropped == 10)
    hub.publish(.heartbeat(systemID: 1, componentID: 1, systemStatus: 4))
    #expect(hub.framesReceived == 0)
    #expect(hub.takeCommand() == nil)
  }
}
