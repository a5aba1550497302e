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
