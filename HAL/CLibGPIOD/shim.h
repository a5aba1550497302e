// Plumb's view of libgpiod: one small API over libgpiod v1 (1.x: Debian 12, 1.6) and v2 (2.x:
// Debian 13 and current Raspberry Pi OS, 2.2), chosen when this header is compiled.
//
// libgpiod 2.0 replaced the whole API behind the same header name and pkg-config name (no
// gpiod_line_request_rising_edge_events, gpiod_line_event_wait or struct gpiod_line_event;
// line requests, settings and edge-event buffers instead). Only v1's <gpiod.h> defines
// GPIOD_LINE_BULK_MAX_LINES (v2 dropped the line-bulk API), so its absence identifies v2.
//
// Every function here works the same way on both and sets errno the way libgpiod v1 does, so
// LinuxDataReadyLine maps the same fault to the same error whichever library it was built with:
//
//   open a chip     ENOENT  no such path, no /dev/NAME, or no chip with that label
//                   ENOTTY  the path exists but is not a GPIO chip's character device
//                   EACCES  the chip may not be opened (not in the gpio group)
//   find a line     EINVAL  an offset at or past the chip's number of lines
//                   ENOENT  no line with that name
//   request edges   EBUSY   another consumer holds the line
//                   (other codes are the kernel's: ENXIO or ENODEV when the line has no IRQ)
//   wait            1 an event is pending, 0 timed out, -1 with errno (EINTR on a signal)
//   read            0 with the event's timestamp, -1 with errno
//
// The wait and read functions allocate nothing: v2's edge-event buffer is made once, when the
// line is requested. Everything acquired is released on every failure path and by
// plumb_gpio_release, which takes a handle at any stage.
//
// A systemLibrary target has headers only, hence static inline functions.
#ifndef PLUMB_CLIBGPIOD_SHIM_H
#define PLUMB_CLIBGPIOD_SHIM_H

#include <dirent.h>
#include <errno.h>
#include <gpiod.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define PLUMB_LIBGPIOD_V2 0
/// The libgpiod API this build uses: "v1" or "v2".
#define PLUMB_LIBGPIOD_API "v1"
#else
#define PLUMB_LIBGPIOD_V2 1
#define PLUMB_LIBGPIOD_API "v2"
#endif

/// An open chip and, once found and requested, one line's rising-edge events on it.
struct plumb_gpio_line {
  struct gpiod_chip *chip;
#if PLUMB_LIBGPIOD_V2
  unsigned int offset;
  int found;
  struct gpiod_line_request *request;
  /// Room for one event, made at request time and reused by every read.
  struct gpiod_edge_event_buffer *events;
#else
  struct gpiod_line *line;
  int requested;
#endif
};

/// The version of the libgpiod library linked in (e.g. "1.6.3", "2.2.1").
static inline const char *plumb_gpio_library_version(void) {
#if PLUMB_LIBGPIOD_V2
  return gpiod_api_version();
#else
  return gpiod_version_string();
#endif
}

/// Releases the line request (if any), the event buffer, the chip and the handle. NULL is
/// allowed. errno is left as it was, so a caller can release before reporting a failure.
static inline void plumb_gpio_release(struct plumb_gpio_line *handle) {
  if (handle == NULL) return;
  int saved = errno;
#if PLUMB_LIBGPIOD_V2
  if (handle->request != NULL) gpiod_line_request_release(handle->request);
  if (handle->events != NULL) gpiod_edge_event_buffer_free(handle->events);
#else
  if (handle->requested) gpiod_line_release(handle->line);
#endif
  if (handle->chip != NULL) gpiod_chip_close(handle->chip);
  free(handle);
  errno = saved;
}

/// A handle for an open chip (NULL and errno when `chip` is NULL).
static inline struct plumb_gpio_line *plumb_gpio_wrap_chip(struct gpiod_chip *chip) {
  if (chip == NULL) return NULL;
  struct plumb_gpio_line *handle = calloc(1, sizeof *handle);
  if (handle == NULL) {
    int saved = errno;
    gpiod_chip_close(chip);
    errno = saved;
    return NULL;
  }
  handle->chip = chip;
  return handle;
}

/// gpiod_chip_open on both, with one answer for a path that exists but is not a GPIO chip:
/// ENOTTY. (v1 opens first, so a directory fails with EISDIR, and v1 says ENOTTY for other
/// character devices where v2 says ENODEV; both say ENOTTY for a regular file.)
static inline struct gpiod_chip *plumb_gpio_open_path(const char *path) {
  struct stat status;
  if (stat(path, &status) == 0 && !S_ISCHR(status.st_mode)) {
    errno = ENOTTY;
    return NULL;
  }
  struct gpiod_chip *chip = gpiod_chip_open(path);
#if PLUMB_LIBGPIOD_V2
  if (chip == NULL && errno == ENODEV) errno = ENOTTY;
#endif
  return chip;
}

/// Opens the chip at a device path, e.g. "/dev/gpiochip0".
static inline struct plumb_gpio_line *plumb_gpio_open_chip_by_path(const char *path) {
  return plumb_gpio_wrap_chip(plumb_gpio_open_path(path));
}

/// Opens the chip with a kernel name, e.g. "gpiochip0": the device "/dev/" + name (what v1's
/// gpiod_chip_open_by_name does; v2 has no open-by-name).
static inline struct plumb_gpio_line *plumb_gpio_open_chip_by_name(const char *name) {
  char path[PATH_MAX];
  int length = snprintf(path, sizeof path, "/dev/%s", name);
  if (length < 0 || (size_t)length >= sizeof path) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  return plumb_gpio_wrap_chip(plumb_gpio_open_path(path));
}

/// scandir's filter for the chips under /dev, as v1's chip iterator has it.
static inline int plumb_gpio_is_chip_entry(const struct dirent *entry) {
  return strncmp(entry->d_name, "gpiochip", 8) == 0;
}

/// Opens the chip with a label, e.g. "pinctrl-bcm2711", the way v1's gpiod_chip_open_by_label
/// does on both: every /dev/gpiochip* in name order is opened (one that cannot be opened fails
/// the search with its errno, e.g. EACCES); the first whose label matches is kept; ENOENT when
/// none does.
static inline struct plumb_gpio_line *plumb_gpio_open_chip_by_label(const char *label) {
#if PLUMB_LIBGPIOD_V2
  struct dirent **entries = NULL;
  int count = scandir("/dev", &entries, plumb_gpio_is_chip_entry, alphasort);
  if (count < 0) return NULL;
  struct gpiod_chip *found = NULL;
  int failure = 0;
  for (int i = 0; i < count; i++) {
    if (failure == 0) {
      char path[PATH_MAX];
      snprintf(path, sizeof path, "/dev/%s", entries[i]->d_name);
      struct gpiod_chip *chip = plumb_gpio_open_path(path);
      struct gpiod_chip_info *info = chip != NULL ? gpiod_chip_get_info(chip) : NULL;
      if (info == NULL) {
        failure = errno != 0 ? errno : EIO;
        if (chip != NULL) gpiod_chip_close(chip);
      } else {
        if (found == NULL && strcmp(gpiod_chip_info_get_label(info), label) == 0) {
          found = chip;
        } else {
          gpiod_chip_close(chip);
        }
        gpiod_chip_info_free(info);
      }
    }
    free(entries[i]);
  }
  free(entries);
  if (failure != 0) {
    if (found != NULL) gpiod_chip_close(found);
    errno = failure;
    return NULL;
  }
  if (found == NULL) {
    errno = ENOENT;
    return NULL;
  }
  return plumb_gpio_wrap_chip(found);
#else
  return plumb_gpio_wrap_chip(gpiod_chip_open_by_label(label));
#endif
}

/// Selects the line at `offset`: EINVAL when the chip has no such line. 0 or -1.
static inline int plumb_gpio_find_line_by_offset(
    struct plumb_gpio_line *handle, unsigned int offset) {
#if PLUMB_LIBGPIOD_V2
  struct gpiod_chip_info *info = gpiod_chip_get_info(handle->chip);
  if (info == NULL) return -1;
  size_t lines = gpiod_chip_info_get_num_lines(info);
  gpiod_chip_info_free(info);
  if (offset >= lines) {
    errno = EINVAL;
    return -1;
  }
  handle->offset = offset;
  handle->found = 1;
  return 0;
#else
  handle->line = gpiod_chip_get_line(handle->chip, offset);
  return handle->line != NULL ? 0 : -1;
#endif
}

/// Selects the line named `name`: ENOENT when no line has that name. 0 or -1.
static inline int plumb_gpio_find_line_by_name(
    struct plumb_gpio_line *handle, const char *name) {
#if PLUMB_LIBGPIOD_V2
  int offset = gpiod_chip_get_line_offset_from_name(handle->chip, name);
  if (offset < 0) return -1;
  handle->offset = (unsigned int)offset;
  handle->found = 1;
  return 0;
#else
  handle->line = gpiod_chip_find_line(handle->chip, name);
  return handle->line != NULL ? 0 : -1;
#endif
}

/// Requests the found line as an input with rising-edge events stamped on CLOCK_MONOTONIC (v2;
/// v1 cannot choose, and kernels before 5.7 stamp CLOCK_REALTIME), recorded under `consumer`.
/// 0 or -1 (EBUSY: another consumer holds the line).
static inline int plumb_gpio_request_rising_edges(
    struct plumb_gpio_line *handle, const char *consumer) {
#if PLUMB_LIBGPIOD_V2
  if (!handle->found || handle->request != NULL) {
    errno = EINVAL;
    return -1;
  }
  int result = -1;
  struct gpiod_line_settings *settings = gpiod_line_settings_new();
  struct gpiod_line_config *lines = gpiod_line_config_new();
  struct gpiod_request_config *request = gpiod_request_config_new();
  struct gpiod_edge_event_buffer *events = gpiod_edge_event_buffer_new(1);
  if (settings != NULL && lines != NULL && request != NULL && events != NULL
      && gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) == 0
      && gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_RISING) == 0
      && gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC) == 0
      && gpiod_line_config_add_line_settings(lines, &handle->offset, 1, settings) == 0) {
    gpiod_request_config_set_consumer(request, consumer);
    handle->request = gpiod_chip_request_lines(handle->chip, request, lines);
    if (handle->request != NULL) {
      handle->events = events;
      events = NULL;
      result = 0;
    }
  }
  int saved = errno;
  if (events != NULL) gpiod_edge_event_buffer_free(events);
  if (request != NULL) gpiod_request_config_free(request);
  if (lines != NULL) gpiod_line_config_free(lines);
  if (settings != NULL) gpiod_line_settings_free(settings);
  errno = saved;
  return result;
#else
  if (handle->line == NULL || handle->requested) {
    errno = EINVAL;
    return -1;
  }
  if (gpiod_line_request_rising_edge_events(handle->line, consumer) != 0) return -1;
  handle->requested = 1;
  return 0;
#endif
}

/// Waits at most `timeout_ns` (≥ 0; 0 polls) for an edge event: 1 pending, 0 timed out, -1.
static inline int plumb_gpio_wait(struct plumb_gpio_line *handle, int64_t timeout_ns) {
#if PLUMB_LIBGPIOD_V2
  return gpiod_line_request_wait_edge_events(handle->request, timeout_ns);
#else
  struct timespec timeout = {
    .tv_sec = (time_t)(timeout_ns / 1000000000), .tv_nsec = (long)(timeout_ns % 1000000000)};
  return gpiod_line_event_wait(handle->line, &timeout);
#endif
}

/// Reads one edge event (blocks when none is pending) and stores the kernel's timestamp of it,
/// nanoseconds on the clock the kernel stamps with. 0 or -1.
static inline int plumb_gpio_read_event(struct plumb_gpio_line *handle, int64_t *timestamp_ns) {
#if PLUMB_LIBGPIOD_V2
  int count = gpiod_line_request_read_edge_events(handle->request, handle->events, 1);
  if (count < 0) return -1;
  if (count == 0) {
    errno = EIO;
    return -1;
  }
  struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(handle->events, 0);
  *timestamp_ns = (int64_t)gpiod_edge_event_get_timestamp_ns(event);
  return 0;
#else
  struct gpiod_line_event event;
  if (gpiod_line_event_read(handle->line, &event) != 0) return -1;
  *timestamp_ns = (int64_t)event.ts.tv_sec * 1000000000 + (int64_t)event.ts.tv_nsec;
  return 0;
#endif
}

#endif
