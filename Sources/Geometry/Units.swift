/// Standard gravity, m/s² (CGPM 1901): the "g" in which the MPU-6050's accelerometer full-scale
/// ranges and sensitivities are specified (PS-MPU-6000A §6.2).
public let standardGravity: Double = 9.80665

/// Radians in one degree. Degrees appear only at the edges (text, board files, CLI).
public let radiansPerDegree: Double = .pi / 180

/// Degrees in one radian.
public let degreesPerRadian: Double = 180 / .pi
