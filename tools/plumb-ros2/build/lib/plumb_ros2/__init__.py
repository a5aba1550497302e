"""plumb_ros2: a Plumb telemetry stream (binary-imu) → ROS 2 sensor_msgs/Imu, Temperature, diagnostics."""

__version__ = "0.1.0"
