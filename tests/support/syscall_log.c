/* LD_PRELOAD interposer for the sync-order test (tests/e2e/test_service_sync_order.py): logs
 * every write to a regular file, every fsync/fdatasync/sync_file_range, and every socket send
 * and receive, one line each, with a global sequence number, to the file named by
 * $SIMDUP_SYSCALL_LOG. A sync is logged after it returned and a send before it starts, so a
 * sync whose number is lower than a send's was complete before that answer left.
 *
 * Line format (tab-separated): seq, op (write, sync, range, send, recv), fd, result, a number
 * (write: the file's offset after it; sync: the sequence number taken before it started, so only
 * writes numbered lower are covered; else 0), then the file's path or the data (log_line). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static atomic_long seq;
static int log_fd = -1;

/* Opened when the library loads, before any thread of the program starts. */
__attribute__((constructor)) static void open_log(void) {
  const char* path = getenv("SIMDUP_SYSCALL_LOG");
  if (path) log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

static int is_socket(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static int is_regular(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* Appends one line: for files the path and the file's offset after the write; for sockets the
 * data (a send: its first line; a receive: up to 3000 bytes, line breaks as spaces). */
static void log_line(long n, const char* op, int fd, long result, const char* data, size_t len,
                     long end) {
  if (log_fd < 0) return;
  const int saved = errno;
  char line[4096];
  int k = snprintf(line, sizeof line, "%ld\t%s\t%d\t%ld\t%ld\t", n, op, fd, result, end);
  if (data) {
    const int whole = op[0] == 'r';
    for (size_t i = 0; i < len && i < 3000; ++i) {
      if (!whole && (data[i] == '\r' || data[i] == '\n')) break;
      const char ch = data[i];
      line[k++] = ch == '\t' || ch == '\r' || ch == '\n' ? ' ' : ch;
    }
  } else {
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    const ssize_t m = readlink(proc, line + k, sizeof line - 2 - (size_t)k);
    if (m > 0) k += (int)m;
  }
  line[k++] = '\n';
  syscall(SYS_write, log_fd, line, (size_t)k);
  errno = saved;
}

static long next_seq(void) {
  return atomic_fetch_add(&seq, 1) + 1;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void* buf, size_t count) {
  const ssize_t r = REAL(write)(fd, buf, count);
  if (is_regular(fd)) log_line(next_seq(), "write", fd, r, NULL, 0, lseek(fd, 0, SEEK_CUR));
  return r;
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  const ssize_t r = REAL(pwrite)(fd, buf, count, offset);
  if (is_regular(fd)) log_line(next_seq(), "write", fd, r, NULL, 0, offset + r);
  return r;
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  const ssize_t r = REAL(pwrite64)(fd, buf, count, offset);
  if (is_regular(fd)) log_line(next_seq(), "write", fd, r, NULL, 0, offset + r);
  return r;
}

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  if (is_socket(fd)) {
    log_line(next_seq(), "send", fd, 0, iovcnt > 0 ? iov[0].iov_base : "",
             iovcnt > 0 ? iov[0].iov_len : 0, 0);
    return REAL(writev)(fd, iov, iovcnt);
  }
  const ssize_t r = REAL(writev)(fd, iov, iovcnt);
  if (is_regular(fd)) log_line(next_seq(), "write", fd, r, NULL, 0, lseek(fd, 0, SEEK_CUR));
  return r;
}

int fsync(int fd) {
  const long started = next_seq();
  const int r = REAL(fsync)(fd);
  log_line(next_seq(), "sync", fd, r, NULL, 0, started);
  return r;
}

int fdatasync(int fd) {
  const long started = next_seq();
  const int r = REAL(fdatasync)(fd);
  log_line(next_seq(), "sync", fd, r, NULL, 0, started);
  return r;
}

int sync_file_range(int fd, off_t offset, off_t nbytes, unsigned int flags) {
  const int r = REAL(sync_file_range)(fd, offset, nbytes, flags);
  /* Starts writeback or waits for it, but never flushes the disk's cache: not a sync. */
  log_line(next_seq(), "range", fd, r, NULL, 0, 0);
  return r;
}

ssize_t send(int fd, const void* buf, size_t len, int flags) {
  log_line(next_seq(), "send", fd, 0, buf, len, 0);
  return REAL(send)(fd, buf, len, flags);
}

ssize_t sendmsg(int fd, const struct msghdr* msg, int flags) {
  const int parts = msg->msg_iovlen > 0;
  log_line(next_seq(), "send", fd, 0, parts ? msg->msg_iov[0].iov_base : "",
           parts ? msg->msg_iov[0].iov_len : 0, 0);
  return REAL(sendmsg)(fd, msg, flags);
}

ssize_t recv(int fd, void* buf, size_t len, int flags) {
  const ssize_t r = REAL(recv)(fd, buf, len, flags);
  if (r > 0) log_line(next_seq(), "recv", fd, r, buf, (size_t)r, 0);
  return r;
}
