// The seeded generator moved to the `Randomness` module (so that calibration, scenarios and the
// simulated hardware share one implementation); re-exported here so that code that uses the
// simulated hardware gets it with one import.
@_exported import Randomness
