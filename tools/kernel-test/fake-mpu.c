/*
 * fake-mpu: plays an MPU-6050 on the kernel's i2c-stub for the kernel-level test
 * (tools/kernel-test/README.md). Runs inside the QEMU guest, as root, statically linked, built
 * against libgpiod v1 and against v2 (the same #if as Plumb's shim: only v1's <gpiod.h> defines
 * GPIOD_LINE_BULK_MAX_LINES), so both of its GPIO code paths are proven.
 *
 *   fake-mpu probe-clock --chip LABEL --line NAME --pull PATH
 *   fake-mpu run --bus /dev/i2c-N --pull PATH --edges N --notify SOCKET
 *                --plumb-stderr FILE -- PLUMB ARGUMENTS...
 *   fake-mpu hold-line --chip LABEL --line NAME -- COMMAND ARGUMENTS...
 *
 * i2c-stub is a plain register file (256 bytes per chip, no side effects), so this program
 * supplies what the chip would do by itself:
 *
 * - identity and factory trim: WHO_AM_I (0x75) = 0x68, SELF_TEST_X/Y/Z/A (0x0D-0x10) from the
 *   trim codes below, PWR_MGMT_1 (0x6B) = 0x40 (asleep, the power-on value, RM section 4.28);
 * - DEVICE_RESET: when PWR_MGMT_1 shows bit 7, the configuration registers return to their reset
 *   value 0 and PWR_MGMT_1 to 0x40 (RM section 4.28), as the chip does;
 * - the data registers (0x3B-0x48, RM sections 4.17-4.19): a fixed physical truth converted to
 *   counts for the full-scale ranges currently in GYRO_CONFIG/ACCEL_CONFIG, plus the self-test
 *   response on every axis whose self-test bit is set (RM section 4.1, PS sections 6.1/6.2);
 * - data-ready: each new sample is written into the stub with one SMBus I2C-block write, then
 *   the gpio-sim line is pulled up (the rising edge the kernel timestamps) and down again, at
 *   100 Hz on absolute CLOCK_MONOTONIC deadlines.
 *
 * The registers are watched every millisecond until Plumb says it is configured, through the
 * systemd notification protocol: on the AF_UNIX datagram socket named by NOTIFY_SOCKET,
 * `plumb run` sends "STATUS=configured: ..." once the driver is configured and the loop is about
 * to wait for its first sample. Then the edges start at once (the loop falls back to polling
 * after 3 periods without one). READY=1 comes later, once the estimator has converged (about
 * 110 samples in); the edge after which it arrived is reported. INT_STATUS (0x3A) stays 0: the
 * polling fallback never finds a sample, so every sample Plumb processes comes from an edge.
 *
 * Scheduling: this program runs at SCHED_FIFO 40, below Plumb's SCHED_FIFO 50 and above everything
 * else. Plumb (and the GPIO interrupt thread, also FIFO 50) therefore run as soon as an edge is
 * raised and finish that sample before this program continues: the next sample is never written
 * before Plumb has read the current one, and when the last edge's pull-up returns, Plumb has
 * processed it (and sent whatever notification that sample caused). That is a property of the
 * scheduler on the guest's single CPU, not a sleep.
 *
 * hold-line requests the line (as an input, consumer "kt-holder") and runs COMMAND while holding
 * it: Plumb started so must find the line busy. Exits with COMMAND's status.
 *
 * Everything it reports goes to standard output as "KT-..." lines, printed after the
 * timing-critical part; tools/kernel-test/check.py reads them on the host.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <gpiod.h>
#include <i2c/smbus.h>
#include <linux/i2c-dev.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Register addresses, RM-MPU-6000A-00 rev 4.2 section 3. */
enum {
	REG_SELF_TEST_X = 0x0D, /* section 4.1 */
	REG_SELF_TEST_A = 0x10,
	REG_SMPLRT_DIV = 0x19, /* 4.2 */
	REG_CONFIG = 0x1A, /* 4.3 */
	REG_GYRO_CONFIG = 0x1B, /* 4.4 */
	REG_ACCEL_CONFIG = 0x1C, /* 4.5 */
	REG_FIFO_EN = 0x23, /* 4.6 */
	REG_INT_PIN_CFG = 0x37, /* 4.14 */
	REG_INT_ENABLE = 0x38, /* 4.15 */
	REG_INT_STATUS = 0x3A, /* 4.16 */
	REG_ACCEL_XOUT_H = 0x3B, /* 4.17: accel x,y,z, temperature (4.18), gyro x,y,z (4.19) */
	REG_USER_CTRL = 0x6A, /* 4.27 */
	REG_PWR_MGMT_1 = 0x6B, /* 4.28 */
	REG_PWR_MGMT_2 = 0x6C, /* 4.29 */
	REG_WHO_AM_I = 0x75, /* 4.32 */
};

#define MPU_ADDRESS 0x68
#define PWR_MGMT_1_DEVICE_RESET 0x80
#define PWR_MGMT_1_RESET_VALUE 0x40 /* SLEEP set after reset (RM 4.28) */
#define WHO_AM_I_MPU6050 0x68

/* The physical truth the chip "measures": still, tilted, with a gyro zero-rate offset.
 * Specific force in g in the sensor frame: pitch +10 deg (nose up), roll -20 deg (right side
 * up), i.e. (sin 10, cos 10 sin -20, cos 10 cos -20). Gyro offsets in deg/s, well inside the
 * MPU-6050's +-20 deg/s zero-rate tolerance (PS 6.1). */
static const double truth_accel_g[3] = {0.17364817766693033, -0.33682408883346515,
					0.92541657839832336};
static const double truth_gyro_dps[3] = {0.8, -1.2, 0.5};
/* TEMP_OUT: -5620 counts = 20.00 deg C (counts / 340 + 36.53, RM 4.18), rising by 4 counts
 * (0.0118 deg C, more than the frames' 0.01 deg C step) per sample: every sample has its own
 * temperature, so a frame names the sample it came from. */
#define TEMP_FIRST_COUNTS (-5620)
#define TEMP_STEP_COUNTS 4

/* Factory trim codes (5 bits each) the self-test registers hold, and how far from the factory
 * trim the emulated self-test response lies (PS 6.1/6.2 pass within +-14 %). */
static const int trim_gyro_code[3] = {12, 13, 14};
static const int trim_accel_code[3] = {15, 16, 17};
static const double response_gyro_deviation[3] = {0.02, -0.03, 0.04};
static const double response_accel_deviation[3] = {0.01, -0.02, 0.05};

#define MAX_EVENTS 256
#define REALTIME_PRIORITY 40

static int64_t now_ns(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void die(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	printf("KT-HARNESS-RESULT error: ");
	vprintf(format, args);
	printf("\n");
	va_end(args);
	fflush(stdout);
	exit(1);
}

/* Rounds half away from zero and saturates to int16. */
static int16_t to_counts(double value)
{
	double r = value < 0 ? -floor(-value + 0.5) : floor(value + 0.5);
	if (r > 32767)
		r = 32767;
	if (r < -32768)
		r = -32768;
	return (int16_t)r;
}

/* LSB per deg/s for FS_SEL 0..3 (RM 4.19) and LSB per g for AFS_SEL 0..3 (RM 4.17). */
static double gyro_sensitivity(uint8_t gyro_config)
{
	static const double lsb[4] = {131.0, 65.5, 32.8, 16.4};
	return lsb[(gyro_config >> 3) & 3];
}

static double accel_sensitivity(uint8_t accel_config)
{
	return 16384.0 / (double)(1 << ((accel_config >> 3) & 3));
}

/* Factory trim (RM 4.1), in counts at the self-test ranges +-250 deg/s and +-8 g. */
static double gyro_factory_trim(int code, int axis)
{
	if (code == 0)
		return 0;
	double ft = 25.0 * 131.0 * pow(1.046, code - 1);
	return axis == 1 ? -ft : ft;
}

static double accel_factory_trim(int code)
{
	if (code == 0)
		return 0;
	return 4096.0 * 0.34 * pow(0.92 / 0.34, (code - 1) / 30.0);
}

/* The emulated self-test response, counts at the self-test ranges. */
static int16_t gyro_response_counts(int axis)
{
	return to_counts(gyro_factory_trim(trim_gyro_code[axis], axis) *
			 (1 + response_gyro_deviation[axis]));
}

static int16_t accel_response_counts(int axis)
{
	return to_counts(accel_factory_trim(trim_accel_code[axis]) *
			 (1 + response_accel_deviation[axis]));
}

/* SELF_TEST_X/Y/Z: XA_TEST[4:2] in bits 7:5, XG_TEST in bits 4:0; SELF_TEST_A: XA_TEST[1:0] in
 * bits 5:4, YA_TEST[1:0] in 3:2, ZA_TEST[1:0] in 1:0 (RM 4.1). */
static void trim_registers(uint8_t out[4])
{
	out[3] = 0;
	for (int axis = 0; axis < 3; axis++) {
		out[axis] = (uint8_t)(((trim_accel_code[axis] >> 2) & 7) << 5 |
				      (trim_gyro_code[axis] & 0x1F));
		out[3] |= (uint8_t)((trim_accel_code[axis] & 3) << (4 - 2 * axis));
	}
}

struct sample_counts {
	int16_t accel[3];
	int16_t temperature;
	int16_t gyro[3];
};

/* What the chip would put in its data registers for the current configuration. The self-test
 * response is a physical deflection: at another range than the test's it scales with the
 * sensitivity. */
static struct sample_counts sample_for(uint8_t gyro_config, uint8_t accel_config,
				       int16_t temperature)
{
	struct sample_counts s;
	double gs = gyro_sensitivity(gyro_config), as = accel_sensitivity(accel_config);
	for (int axis = 0; axis < 3; axis++) {
		int gyro_st = (gyro_config >> (7 - axis)) & 1; /* XG_ST bit 7, YG_ST 6, ZG_ST 5 */
		int accel_st = (accel_config >> (7 - axis)) & 1;
		s.gyro[axis] = to_counts(truth_gyro_dps[axis] * gs +
					 (gyro_st ? gyro_response_counts(axis) * gs / 131.0 : 0));
		s.accel[axis] = to_counts(truth_accel_g[axis] * as +
					  (accel_st ? accel_response_counts(axis) * as / 4096.0 : 0));
	}
	s.temperature = temperature;
	return s;
}

static void encode(const struct sample_counts *s, uint8_t out[14])
{
	const int16_t words[7] = {s->accel[0], s->accel[1], s->accel[2], s->temperature,
				  s->gyro[0],  s->gyro[1],  s->gyro[2]};
	for (int i = 0; i < 7; i++) {
		out[2 * i] = (uint8_t)((uint16_t)words[i] >> 8);
		out[2 * i + 1] = (uint8_t)((uint16_t)words[i] & 0xFF);
	}
}

/* ---- the chip on i2c-stub ---- */

struct chip {
	int fd;
	uint8_t gyro_config, accel_config; /* as last seen */
	int16_t temperature;               /* TEMP_OUT of the sample in the data registers */
	int resets;
};

struct event {
	int64_t t;
	char text[112];
};

static struct event events[MAX_EVENTS];
static int event_count;

static void record(const char *format, ...)
{
	if (event_count >= MAX_EVENTS)
		return;
	va_list args;
	va_start(args, format);
	events[event_count].t = now_ns(CLOCK_MONOTONIC);
	vsnprintf(events[event_count].text, sizeof events[event_count].text, format, args);
	va_end(args);
	event_count++;
}

static void write_byte(struct chip *c, uint8_t reg, uint8_t value)
{
	if (i2c_smbus_write_byte_data(c->fd, reg, value) < 0)
		die("i2c write 0x%02X: %s", reg, strerror(errno));
}

static int read_byte(struct chip *c, uint8_t reg)
{
	int v = i2c_smbus_read_byte_data(c->fd, reg);
	if (v < 0)
		die("i2c read 0x%02X: %s", reg, strerror(errno));
	return v;
}

static void read_block(struct chip *c, uint8_t reg, uint8_t length, uint8_t *out)
{
	int n = i2c_smbus_read_i2c_block_data(c->fd, reg, length, out);
	if (n != length)
		die("i2c block read 0x%02X: %s", reg, n < 0 ? strerror(errno) : "short read");
}

static void write_sample(struct chip *c)
{
	struct sample_counts s = sample_for(c->gyro_config, c->accel_config, c->temperature);
	uint8_t bytes[14];
	encode(&s, bytes);
	if (i2c_smbus_write_i2c_block_data(c->fd, REG_ACCEL_XOUT_H, 14, bytes) < 0)
		die("i2c block write 0x3B: %s", strerror(errno));
}

/* DEVICE_RESET: every register to its reset value (0 except PWR_MGMT_1 = 0x40 and WHO_AM_I),
 * RM 4.28 and section 3's reset values. The self-test registers are factory trim and stay. */
static void reset_chip(struct chip *c)
{
	static const uint8_t zeroed[] = {REG_SMPLRT_DIV, REG_CONFIG,     REG_GYRO_CONFIG,
					 REG_ACCEL_CONFIG, REG_FIFO_EN,  REG_INT_PIN_CFG,
					 REG_INT_ENABLE, REG_INT_STATUS, REG_USER_CTRL,
					 REG_PWR_MGMT_2};
	for (size_t i = 0; i < sizeof zeroed; i++)
		write_byte(c, zeroed[i], 0);
	c->gyro_config = 0;
	c->accel_config = 0;
	write_sample(c);
	write_byte(c, REG_PWR_MGMT_1, PWR_MGMT_1_RESET_VALUE);
	c->resets++;
	record("reset");
}

/* What the chip does by itself between host transfers: finish a reset, follow range and
 * self-test changes in its outputs. */
static void emulate(struct chip *c)
{
	if (read_byte(c, REG_PWR_MGMT_1) & PWR_MGMT_1_DEVICE_RESET)
		reset_chip(c);
	uint8_t config[2];
	read_block(c, REG_GYRO_CONFIG, 2, config);
	if (config[0] != c->gyro_config || config[1] != c->accel_config) {
		c->gyro_config = config[0];
		c->accel_config = config[1];
		write_sample(c);
		record("config gyro=0x%02X accel=0x%02X", config[0], config[1]);
	}
}

static void preload(struct chip *c)
{
	uint8_t trim[4];
	trim_registers(trim);
	for (int i = 0; i < 4; i++)
		write_byte(c, (uint8_t)(REG_SELF_TEST_X + i), trim[i]);
	write_byte(c, REG_WHO_AM_I, WHO_AM_I_MPU6050);
	c->gyro_config = 0;
	c->accel_config = 0;
	c->temperature = TEMP_FIRST_COUNTS;
	write_sample(c);
	write_byte(c, REG_INT_STATUS, 0);
	write_byte(c, REG_PWR_MGMT_1, PWR_MGMT_1_RESET_VALUE);
}

/* Registers 0x00-0x7F in four SMBus I2C-block reads (32 bytes each, the SMBus limit). */
static void read_registers(struct chip *c, uint8_t out[0x80])
{
	for (int base = 0; base < 0x80; base += 32)
		read_block(c, (uint8_t)base, 32, out + base);
}

static void print_registers(const uint8_t regs[0x80], const char *label)
{
	for (int base = 0; base < 0x80; base += 32) {
		printf("KT-REGS %s %02X", label, base);
		for (int i = 0; i < 32; i++)
			printf(" %02X", regs[base + i]);
		printf("\n");
	}
}

/* ---- gpio-sim ---- */

static int open_pull(const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	return fd;
}

static void pull(int fd, int up)
{
	const char *text = up ? "pull-up" : "pull-down";
	if (pwrite(fd, text, strlen(text), 0) < 0)
		die("gpio-sim pull %s: %s", text, strerror(errno));
}

static void sleep_until(int64_t t)
{
	struct timespec ts = {.tv_sec = t / 1000000000, .tv_nsec = t % 1000000000};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
	}
}

static void become_realtime(void)
{
	struct sched_param p = {.sched_priority = REALTIME_PRIORITY};
	/* Children (Plumb) start with normal scheduling; Plumb raises itself to FIFO 50. */
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &p) != 0)
		printf("KT-NOTE SCHED_FIFO refused (%s): timing relies on the scheduler\n",
		       strerror(errno));
	if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
		printf("KT-NOTE mlockall refused (%s)\n", strerror(errno));
}

/* ---- the GPIO line, through libgpiod v1 or v2 ---- */

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define LIBGPIOD_API "v1"
static const char *libgpiod_version(void)
{
	return gpiod_version_string();
}
#else
#define LIBGPIOD_API "v2"
static const char *libgpiod_version(void)
{
	return gpiod_api_version();
}
#endif

struct gpio_line {
	struct gpiod_chip *chip;
#ifdef GPIOD_LINE_BULK_MAX_LINES
	struct gpiod_line *line;
#else
	struct gpiod_line_request *request;
	struct gpiod_edge_event_buffer *events;
#endif
};

#ifndef GPIOD_LINE_BULK_MAX_LINES
/* v2 has no open-by-label: every /dev/gpiochip* is opened and its label read. */
static struct gpiod_chip *open_chip_by_label(const char *label)
{
	DIR *dev = opendir("/dev");
	if (!dev)
		die("opendir /dev: %s", strerror(errno));
	struct gpiod_chip *found = NULL;
	struct dirent *entry;
	while (!found && (entry = readdir(dev)) != NULL) {
		char path[300];
		if (strncmp(entry->d_name, "gpiochip", 8) != 0)
			continue;
		snprintf(path, sizeof path, "/dev/%s", entry->d_name);
		if (!gpiod_is_gpiochip_device(path))
			continue;
		struct gpiod_chip *chip = gpiod_chip_open(path);
		if (!chip)
			die("open %s: %s", path, strerror(errno));
		struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
		if (!info)
			die("chip info of %s: %s", path, strerror(errno));
		if (strcmp(gpiod_chip_info_get_label(info), label) == 0)
			found = chip;
		else
			gpiod_chip_close(chip);
		gpiod_chip_info_free(info);
	}
	closedir(dev);
	return found;
}
#endif

/* Requests the line NAME of the chip labelled LABEL as an input under CONSUMER, with rising-edge
 * events on CLOCK_MONOTONIC (v2 asks for it, as Plumb does; v1 takes the kernel's clock) when
 * EDGES is set. Dies on failure. */
static void gpio_request(struct gpio_line *g, const char *label, const char *name,
			 const char *consumer, int edges)
{
	memset(g, 0, sizeof *g);
#ifdef GPIOD_LINE_BULK_MAX_LINES
	g->chip = gpiod_chip_open_by_label(label);
	if (!g->chip)
		die("no GPIO chip labelled %s: %s", label, strerror(errno));
	g->line = gpiod_chip_find_line(g->chip, name);
	if (!g->line)
		die("no line %s on %s: %s", name, label, strerror(errno));
	int r = edges ? gpiod_line_request_rising_edge_events(g->line, consumer)
		      : gpiod_line_request_input(g->line, consumer);
	if (r < 0)
		die("request %s on %s: %s", name, label, strerror(errno));
#else
	g->chip = open_chip_by_label(label);
	if (!g->chip)
		die("no GPIO chip labelled %s", label);
	int offset = gpiod_chip_get_line_offset_from_name(g->chip, name);
	if (offset < 0)
		die("no line %s on %s: %s", name, label, strerror(errno));
	unsigned int offsets[1] = {(unsigned int)offset};
	struct gpiod_line_settings *settings = gpiod_line_settings_new();
	struct gpiod_line_config *lines = gpiod_line_config_new();
	struct gpiod_request_config *request = gpiod_request_config_new();
	g->events = gpiod_edge_event_buffer_new(1);
	if (!settings || !lines || !request || !g->events)
		die("out of memory");
	if (gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) < 0 ||
	    (edges && gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_RISING) < 0) ||
	    (edges && gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC) < 0) ||
	    gpiod_line_config_add_line_settings(lines, offsets, 1, settings) < 0)
		die("line settings: %s", strerror(errno));
	gpiod_request_config_set_consumer(request, consumer);
	g->request = gpiod_chip_request_lines(g->chip, request, lines);
	if (!g->request)
		die("request %s on %s: %s", name, label, strerror(errno));
	gpiod_request_config_free(request);
	gpiod_line_config_free(lines);
	gpiod_line_settings_free(settings);
#endif
}

/* 1 when an edge event is pending within TIMEOUT_NS, 0 on timeout, -1 on error. */
static int gpio_wait(struct gpio_line *g, int64_t timeout_ns)
{
#ifdef GPIOD_LINE_BULK_MAX_LINES
	struct timespec timeout = {.tv_sec = timeout_ns / 1000000000,
				   .tv_nsec = timeout_ns % 1000000000};
	return gpiod_line_event_wait(g->line, &timeout);
#else
	return gpiod_line_request_wait_edge_events(g->request, timeout_ns);
#endif
}

/* Reads one edge event: its timestamp (ns) and whether it was a rising edge. 0 or -1. */
static int gpio_read(struct gpio_line *g, int64_t *stamp, int *rising)
{
#ifdef GPIOD_LINE_BULK_MAX_LINES
	struct gpiod_line_event event;
	if (gpiod_line_event_read(g->line, &event) < 0)
		return -1;
	*stamp = (int64_t)event.ts.tv_sec * 1000000000 + event.ts.tv_nsec;
	*rising = event.event_type == GPIOD_LINE_EVENT_RISING_EDGE;
#else
	if (gpiod_line_request_read_edge_events(g->request, g->events, 1) < 1)
		return -1;
	struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(g->events, 0);
	*stamp = (int64_t)gpiod_edge_event_get_timestamp_ns(event);
	*rising = gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE;
#endif
	return 0;
}

static void gpio_release(struct gpio_line *g)
{
#ifdef GPIOD_LINE_BULK_MAX_LINES
	gpiod_line_release(g->line);
#else
	gpiod_line_request_release(g->request);
	gpiod_edge_event_buffer_free(g->events);
#endif
	gpiod_chip_close(g->chip);
}

/* ---- probe-clock: which clock the kernel stamps edge events with ---- */

static int probe_clock(const char *label, const char *name, const char *pull_path)
{
	int fd = open_pull(pull_path);
	pull(fd, 0);
	struct gpio_line g;
	gpio_request(&g, label, name, "kt-clock-probe", 1);
	int64_t before = now_ns(CLOCK_MONOTONIC);
	pull(fd, 1);
	int64_t after = now_ns(CLOCK_MONOTONIC);
	if (gpio_wait(&g, 2000000000LL) != 1)
		die("no edge event within 2 s");
	int64_t stamp;
	int rising;
	if (gpio_read(&g, &stamp, &rising) < 0)
		die("read edge event: %s", strerror(errno));
	int64_t read = now_ns(CLOCK_MONOTONIC);
	int64_t realtime = now_ns(CLOCK_REALTIME);
	gpio_release(&g);
	pull(fd, 0);
	close(fd);
	printf("KT-CLOCK stamp=%lld before=%lld after=%lld read=%lld realtime=%lld rising=%d\n",
	       (long long)stamp, (long long)before, (long long)after, (long long)read,
	       (long long)realtime, rising);
	return 0;
}

/* ---- hold-line: the line held by another consumer while COMMAND runs ---- */

static int hold_line(const char *label, const char *name, char **command)
{
	struct gpio_line g;
	gpio_request(&g, label, name, "kt-holder", 0);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		execv(command[0], command);
		dprintf(2, "fake-mpu: exec %s: %s\n", command[0], strerror(errno));
		_exit(127);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	gpio_release(&g);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* ---- run: the chip for one Plumb run ---- */

struct run_options {
	const char *bus, *pull, *notify, *plumb_stderr;
	int edges, hz, startup_timeout_s;
	char **plumb;
};

static int bind_notify_socket(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof a.sun_path)
		die("socket path too long: %s", path);
	strcpy(a.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0)
		die("bind %s: %s", path, strerror(errno));
	return fd;
}

static pid_t start_plumb(const struct run_options *o)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int err = open(o->plumb_stderr, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (err >= 0) {
			dup2(err, 2);
			close(err);
		}
		setenv("NOTIFY_SOCKET", o->notify, 1);
		execv(o->plumb[0], o->plumb);
		dprintf(2, "fake-mpu: exec %s: %s\n", o->plumb[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static void describe_exit(int status, char *out, size_t size)
{
	if (WIFEXITED(status))
		snprintf(out, size, "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, size, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(out, size, "status 0x%x", status);
}

/* SIGTERM (Plumb's clean stop: finish the frame, flush, close, exit 0), then SIGKILL after 10 s. */
static int stop_plumb(pid_t pid, char *how, size_t size)
{
	int status = 0;
	kill(pid, SIGTERM);
	int64_t give_up = now_ns(CLOCK_MONOTONIC) + 10 * 1000000000LL;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (now_ns(CLOCK_MONOTONIC) > give_up) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			snprintf(how, size, "did not stop within 10 s of SIGTERM; killed");
			return -1;
		}
		usleep(5000);
	}
	describe_exit(status, how, size);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* What Plumb has told the service manager so far. */
struct notifications {
	int configured;  /* "STATUS=configured: ..." seen */
	int readies;     /* READY=1 messages */
	int ready_edge;  /* the edge after which the first READY=1 had arrived (0: before any) */
};

/* Receives every queued notification (without waiting), records each line, and notes the
 * configured status and READY=1 (seen after edge EDGE). */
static void receive_notifications(int socket_fd, struct notifications *n, int edge)
{
	char message[512];
	ssize_t size;
	while ((size = recv(socket_fd, message, sizeof message - 1, MSG_DONTWAIT)) > 0) {
		message[size] = 0;
		for (char *line = strtok(message, "\n"); line; line = strtok(NULL, "\n")) {
			record("notify %s", line);
			if (strncmp(line, "STATUS=configured:", 18) == 0)
				n->configured = 1;
			if (strcmp(line, "READY=1") == 0 && n->readies++ == 0)
				n->ready_edge = edge;
		}
	}
}

static int run(const struct run_options *o)
{
	struct chip c = {0};
	c.fd = open(o->bus, O_RDWR | O_CLOEXEC);
	if (c.fd < 0)
		die("open %s: %s", o->bus, strerror(errno));
	if (ioctl(c.fd, I2C_SLAVE, MPU_ADDRESS) < 0)
		die("I2C_SLAVE 0x%02X: %s", MPU_ADDRESS, strerror(errno));
	int pull_fd = open_pull(o->pull);
	pull(pull_fd, 0);
	int64_t *edge_before = calloc((size_t)o->edges, sizeof(int64_t));
	int64_t *edge_after = calloc((size_t)o->edges, sizeof(int64_t));
	if (!edge_before || !edge_after)
		die("out of memory");
	int notify = bind_notify_socket(o->notify);
	become_realtime();
	preload(&c);
	record("preloaded");

	/* Start-up: the chip follows Plumb's writes every millisecond until Plumb says it is
	 * configured (STATUS=configured: ...) and waits for its first sample. */
	int64_t started = now_ns(CLOCK_MONOTONIC);
	pid_t plumb = start_plumb(o);
	record("plumb started (pid %d)", (int)plumb);
	struct notifications heard = {0};
	char plumb_exit[96] = "";
	while (!heard.configured) {
		struct pollfd p = {.fd = notify, .events = POLLIN};
		poll(&p, 1, 1);
		emulate(&c);
		receive_notifications(notify, &heard, 0);
		int status;
		if (!heard.configured && waitpid(plumb, &status, WNOHANG) == plumb) {
			describe_exit(status, plumb_exit, sizeof plumb_exit);
			printf("KT-PLUMB-EXIT %s (before STATUS=configured)\n", plumb_exit);
			break;
		}
		if (!heard.configured &&
		    now_ns(CLOCK_MONOTONIC) - started > o->startup_timeout_s * 1000000000LL) {
			char how[96];
			stop_plumb(plumb, how, sizeof how);
			printf("KT-PLUMB-EXIT %s (no STATUS=configured within %d s)\n", how,
			       o->startup_timeout_s);
			break;
		}
	}
	int64_t configured_at = now_ns(CLOCK_MONOTONIC);

	int run_resets_before = c.resets;
	uint8_t configured_regs[0x80] = {0};
	if (heard.configured) {
		/* What Plumb's start-up left in the chip (printed later). */
		read_registers(&c, configured_regs);
		/* The first edge at once: the loop is waiting for it. */
		int64_t period = 1000000000LL / o->hz;
		int64_t next = now_ns(CLOCK_MONOTONIC);
		for (int s = 1; s <= o->edges; s++) {
			if (s > 1) {
				next += period;
				sleep_until(next);
			}
			emulate(&c);
			c.temperature = (int16_t)(TEMP_FIRST_COUNTS + TEMP_STEP_COUNTS * s);
			write_sample(&c);
			edge_before[s - 1] = now_ns(CLOCK_MONOTONIC);
			pull(pull_fd, 1);
			edge_after[s - 1] = now_ns(CLOCK_MONOTONIC);
			pull(pull_fd, 0);
			/* Plumb has processed sample s (see Scheduling above): whatever it said about
			 * it is queued now. */
			receive_notifications(notify, &heard, s);
		}
		/* The chip stops: one more period of silence, then Plumb's clean stop. */
		sleep_until(next + period);
		char how[96];
		stop_plumb(plumb, how, sizeof how);
		printf("KT-PLUMB-EXIT %s\n", how);
		/* What came after the last edge (STOPPING=1). */
		receive_notifications(notify, &heard, o->edges + 1);
	}

	/* Report (after the timing-critical part). */
	uint8_t trim[4];
	trim_registers(trim);
	int ok = heard.configured;
	printf("KT-HARNESS edges=%d hz=%d address=0x%02X startup_ms=%.1f libgpiod=%s/%s\n",
	       ok ? o->edges : 0, o->hz, MPU_ADDRESS, (configured_at - started) / 1e6,
	       LIBGPIOD_API, libgpiod_version());
	printf("KT-READY count=%d edge=%d\n", heard.readies, heard.ready_edge);
	printf("KT-TRIM registers=%02X,%02X,%02X,%02X gyro_codes=%d,%d,%d accel_codes=%d,%d,%d "
	       "gyro_deviation=%.2f,%.2f,%.2f accel_deviation=%.2f,%.2f,%.2f\n",
	       trim[0], trim[1], trim[2], trim[3], trim_gyro_code[0], trim_gyro_code[1],
	       trim_gyro_code[2], trim_accel_code[0], trim_accel_code[1], trim_accel_code[2],
	       response_gyro_deviation[0], response_gyro_deviation[1], response_gyro_deviation[2],
	       response_accel_deviation[0], response_accel_deviation[1],
	       response_accel_deviation[2]);
	struct sample_counts s = sample_for(c.gyro_config, c.accel_config, 0);
	printf("KT-SAMPLES gyro_config=0x%02X accel_config=0x%02X accel=%d,%d,%d gyro=%d,%d,%d "
	       "temp_first=%d temp_step=%d\n",
	       c.gyro_config, c.accel_config, s.accel[0], s.accel[1], s.accel[2], s.gyro[0],
	       s.gyro[1], s.gyro[2], TEMP_FIRST_COUNTS, TEMP_STEP_COUNTS);
	for (int i = 0; i < event_count; i++)
		printf("KT-EVENT %lld %s\n", (long long)events[i].t, events[i].text);
	printf("KT-RESETS startup=%d run=%d\n", run_resets_before, c.resets - run_resets_before);
	if (ok) {
		for (int i = 0; i < o->edges; i++)
			printf("KT-EDGE %d %lld %lld\n", i + 1, (long long)edge_before[i],
			       (long long)edge_after[i]);
		print_registers(configured_regs, "configured");
	}
	uint8_t end_regs[0x80];
	read_registers(&c, end_regs);
	print_registers(end_regs, "end");
	printf("KT-HARNESS-RESULT %s\n", ok ? "ok" : "no STATUS=configured from plumb");
	fflush(stdout);
	close(notify);
	unlink(o->notify);
	close(pull_fd);
	close(c.fd);
	return ok ? 0 : 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fake-mpu probe-clock --chip LABEL --line NAME --pull PATH\n"
		"       fake-mpu run --bus DEV --pull PATH --edges N [--hz HZ] --notify SOCKET\n"
		"                    --plumb-stderr FILE [--startup-timeout S] -- PLUMB ARGS...\n"
		"       fake-mpu hold-line --chip LABEL --line NAME -- COMMAND ARGS...\n");
	exit(64);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	const char *mode = argv[1];
	struct run_options o = {.edges = 500, .hz = 100, .startup_timeout_s = 60};
	const char *chip = NULL, *line = NULL;
	static const struct option options[] = {
		{"bus", required_argument, 0, 'b'},     {"pull", required_argument, 0, 'p'},
		{"edges", required_argument, 0, 'e'},   {"hz", required_argument, 0, 'z'},
		{"notify", required_argument, 0, 'n'},  {"plumb-stderr", required_argument, 0, 's'},
		{"startup-timeout", required_argument, 0, 't'},
		{"chip", required_argument, 0, 'c'},    {"line", required_argument, 0, 'l'},
		{0, 0, 0, 0}};
	int opt;
	optind = 2;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'b': o.bus = optarg; break;
		case 'p': o.pull = optarg; break;
		case 'e': o.edges = atoi(optarg); break;
		case 'z': o.hz = atoi(optarg); break;
		case 'n': o.notify = optarg; break;
		case 's': o.plumb_stderr = optarg; break;
		case 't': o.startup_timeout_s = atoi(optarg); break;
		case 'c': chip = optarg; break;
		case 'l': line = optarg; break;
		default: usage();
		}
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (strcmp(mode, "probe-clock") == 0) {
		if (!chip || !line || !o.pull)
			usage();
		int r = probe_clock(chip, line, o.pull);
		fflush(stdout);
		return r;
	}
	if (strcmp(mode, "run") == 0) {
		if (!o.bus || !o.pull || !o.notify || !o.plumb_stderr || o.edges < 1 || o.hz < 1 ||
		    optind >= argc)
			usage();
		o.plumb = argv + optind;
		return run(&o);
	}
	if (strcmp(mode, "hold-line") == 0) {
		if (!chip || !line || optind >= argc)
			usage();
		return hold_line(chip, line, argv + optind);
	}
	usage();
	return 64;
}
