import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

@Test func devProbe() {
  for (name, sensor) in [("perfect", InertialSensorModel.Settings.perfect), ("seed001", .seed001)] {
    let push = run(PushScenario(), sensor: sensor)
    let tilt = run(TiltScenario(), sensor: sensor)
    let walk = run(WalkScenario(), sensor: sensor)
    print(name, "push max", push.map(\.gravityErrorDegrees).max()!, "tilt max", tilt.map(\.gravityErrorDegrees).max()!, "walk max", walk.map(\.gravityErrorDegrees).max()!)
    if name == "perfect" {
      print(stride(from: 150, to: 1000, by: 25).map { i in "\(i/100).\(i%100/10): \(Int(push[i].gravityErrorDegrees*100))/\(push[i].estimate.flags.rawValue)" }.joined(separator: " "))
    }
  }
}
