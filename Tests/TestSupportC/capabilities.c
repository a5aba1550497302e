#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "TestSupportC.h"

struct job {
  void (*body)(void *);
  void *context;
  int error;
};

static void *run(void *argument) {
  struct job *job = argument;
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
  if (syscall(SYS_capget, &header, data) != 0) {
    job->error = errno;
    return NULL;
  }
  data[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
  if (syscall(SYS_capset, &header, data) != 0) {
    job->error = errno;
    return NULL;
  }
  job->body(job->context);
  return NULL;
}

int plumb_run_without_file_override(void (*body)(void *), void *context) {
  struct job job = {body, context, 0};
  pthread_t thread;
  int error = pthread_create(&thread, NULL, run, &job);
  if (error != 0) return error;
  pthread_join(thread, NULL);
  return job.error;
}
