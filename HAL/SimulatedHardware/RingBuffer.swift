/// A first-in, first-out queue over storage allocated once.
///
/// The simulated line keeps its edge queues in these so that the per-edge path does not
/// allocate: elements are written into preallocated slots and the slots are reused. A
/// growable ring doubles its storage when full (rare, amortised, never in a steady state);
/// a bounded one refuses the element instead and the caller counts the overflow.
///
/// The slots hold plain elements, not optionals: the slots outside `head ..< head + count` keep
/// a stale element (or the filler), which nothing reads. Optional slots cost a tag to write on
/// every append and a `nil` to store on every pop, on every edge of a replay.
struct RingBuffer<Element> {
  private var storage: ContiguousArray<Element>
  private var head = 0
  private(set) var count = 0
  let isGrowable: Bool

  /// A ring of `capacity` slots (at least 1), each holding `filler` until used.
  init(capacity: Int, growable: Bool, filler: Element) {
    storage = ContiguousArray(repeating: filler, count: max(1, capacity))
    isGrowable = growable
  }

  var capacity: Int { storage.count }
  var isEmpty: Bool { count == 0 }
  var isFull: Bool { count == storage.count }

  var first: Element? {
    count == 0 ? nil : storage[head]
  }

  /// Appends `element`; returns `false` (and drops it) when a bounded ring is full.
  @discardableResult
  mutating func append(_ element: Element) -> Bool {
    if isFull {
      guard isGrowable else { return false }
      grow()
    }
    storage[wrapped(head + count)] = element
    count += 1
    return true
  }

  mutating func popFirst() -> Element? {
    guard count > 0 else { return nil }
    let element = storage[head]
    head = wrapped(head + 1)
    count -= 1
    return element
  }

  mutating func removeAll() {
    head = 0
    count = 0
  }

  /// `slot % capacity` for a slot below twice the capacity (head and count are each below
  /// it): a compare instead of a division on every edge.
  private func wrapped(_ slot: Int) -> Int {
    slot >= storage.count ? slot - storage.count : slot
  }

  private mutating func grow() {
    // Only a full ring grows, so it has an element to fill the new slots with.
    var larger = ContiguousArray(repeating: storage[head], count: storage.count * 2)
    for index in 0..<count {
      larger[index] = storage[(head + index) % storage.count]
    }
    storage = larger
    head = 0
  }
}
