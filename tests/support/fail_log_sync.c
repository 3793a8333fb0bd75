/* LD_PRELOAD interposer for the failed-sync test (tests/e2e/test_faults_disk.py): once the file
 * named by $SIMDUP_FAIL_LOG_SYNC exists, every fsync and fdatasync of a RocksDB log file
 * (NNNNNN.log) fails with EIO and syncs nothing, as when the disk loses a write-back. Writes
 * still succeed: the failure is seen by the sync alone. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static int failing(int fd) {
  const char* trigger = getenv("SIMDUP_FAIL_LOG_SYNC");
  if (!trigger || access(trigger, F_OK) != 0) return 0;
  char proc[64], path[4096];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(proc, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  const char* name = strrchr(path, '/');
  name = name ? name + 1 : path;
  const size_t digits = strspn(name, "0123456789");
  return digits > 0 && strcmp(name + digits, ".log") == 0;
}

int fsync(int fd) {
  if (failing(fd)) {
    errno = EIO;
    return -1;
  }
  return REAL(fsync)(fd);
}

int fdatasync(int fd) {
  if (failing(fd)) {
    errno = EIO;
    return -1;
  }
  return REAL(fdatasync)(fd);
}
