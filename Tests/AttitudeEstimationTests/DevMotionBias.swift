import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

@Test func devMotionBias() {
  for rate in [0.0, 0.05, 0.3, 1.0, 3.0] {
    var s = AttitudeEstimator.Settings.default
    s.rest.isEnabled = false
    s.bias.initialUncertaintyRadiansPerSecond = 0.01
    let sensor = InertialSensorModel.Settings(gyroBiasRadiansPerSecond: Vector3(0.005, -0.004, 0.002), gyroNoiseRadiansPerSecond: 0.002, accelerometerNoiseMetersPerSecondSquared: 0.03)
    let out = run(ConstantTurnScenario(rateRadiansPerSecond: rate, totalSeconds: 300), sensor: sensor, settings: s)
    let b = out.last!.estimate.gyroBiasRadiansPerSecond
    let b60 = out[6000].estimate.gyroBiasRadiansPerSecond
    print("rate", rate, "bias after 60 s", b60, "after 300 s", b, "sigma", out.last!.estimate.gyroBiasUncertaintyRadiansPerSecond, "tilt err", out.last!.gravityErrorDegrees)
  }
}
