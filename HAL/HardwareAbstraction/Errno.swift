import ByteFormats

/// The HAL's error codes are ByteFormats' `Errno` (a leaf below the HAL, where the atomic
/// file's errors need it too): one type, named here for every module that sees only the HAL.
public typealias Errno = ByteFormats.Errno
