// Plumb's view of libgpiod: the v1 API (1.x), which Debian 12 and Raspberry Pi OS ship as 1.6.
//
// libgpiod 2.0 replaced the whole API (gpiod_line_request_rising_edge_events,
// gpiod_line_event_wait and struct gpiod_line_event are gone) behind the same header name and
// pkg-config name, so a v2 installation would otherwise fail with dozens of confusing errors.
// Only v1's <gpiod.h> defines GPIOD_LINE_BULK_MAX_LINES (v2 dropped the line-bulk API), so its
// absence identifies v2.
#ifndef PLUMB_CLIBGPIOD_SHIM_H
#define PLUMB_CLIBGPIOD_SHIM_H

#include <gpiod.h>
#include <time.h>

#ifndef GPIOD_LINE_BULK_MAX_LINES
#error "Plumb needs libgpiod v1 (1.x; Debian 12 and Raspberry Pi OS ship 1.6), but the installed <gpiod.h> is the libgpiod v2 API. Install the v1 development package (Debian/Raspberry Pi OS: sudo apt-get install libgpiod-dev, version 1.6.x) or build libgpiod 1.6.x from source and point pkg-config (PKG_CONFIG_PATH) at it."
#endif

#endif
