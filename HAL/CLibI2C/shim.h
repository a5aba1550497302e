// Plumb's view of libi2c and the i2c-dev character device (Linux Documentation/i2c/dev-interface.rst).
//
// libi2c's i2c_smbus_* helpers return the value (>= 0) or a negated errno (and leave errno set).
// The two inline helpers below wrap the i2c-dev ioctls Plumb needs, so Swift does not have to
// call the variadic ioctl(2); they follow ioctl's convention (-1 and errno).
#ifndef PLUMB_CLIBI2C_SHIM_H
#define PLUMB_CLIBI2C_SHIM_H

#include <i2c/smbus.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <sys/ioctl.h>

/// ioctl(I2C_SLAVE): address later transfers on this descriptor to the 7-bit `address`.
/// EBUSY means a kernel driver has claimed the address.
static inline int plumb_i2c_select_address(int fd, unsigned char address) {
  return ioctl(fd, I2C_SLAVE, (unsigned long)address);
}

/// ioctl(I2C_FUNCS): the adapter's I2C_FUNC_* bit mask.
static inline int plumb_i2c_functionality(int fd, unsigned long *functionality) {
  return ioctl(fd, I2C_FUNCS, functionality);
}

#endif
