// Durability of the RocksDB backend: the group commit, and the failed state after a write of the
// log failed.
//
// A request's changes are appended to the WAL buffer under the collection lock (rocks_apply.cpp);
// the lock is then released and the request gets a ticket (its sequence number). A sync thread
// writes and fsyncs the WAL once for every ticket queued while its previous sync ran (group commit)
// and then completes them; the service sends an answer only after that. Writers go on during the
// fsync (sync_log says why that is safe).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "store/rocks_backend.hpp"

namespace simdup::detail {

void rocks_backend::when_durable(uint64_t ticket, std::function<void(status)> done) {
  std::unique_lock lock(sync_mu_);
  if (ticket <= synced_) {
    lock.unlock();
    done({});
    return;
  }
  if (failed_.load(std::memory_order_relaxed)) {
    lock.unlock();
    done(health());
    return;
  }
  if (sync_ended_) {
    lock.unlock();
    done(sync_log());
    return;
  }
  sync_queue_.push_back(std::move(done));
  // A busy sync thread looks at the queue again when its sync ends.
  const bool wake = sync_idle_;
  sync_idle_ = false;
  lock.unlock();
  if (wake) sync_cv_.notify_one();
}

void rocks_backend::sync_loop() {
  std::vector<std::function<void(status)>> batch;
  std::unique_lock lock(sync_mu_);
  for (;;) {
    while (sync_queue_.empty() && !sync_stop_) {
      sync_idle_ = true;
      sync_cv_.wait(lock);
    }
    if (sync_queue_.empty()) {  // stopping, nothing left
      sync_ended_ = true;
      return;
    }
    batch.swap(sync_queue_);
    lock.unlock();
    // Every ticket queued is a sequence number already in the WAL buffer (manual_wal_flush), so
    // one write and fsync of the buffer now covers all of them.
    const uint64_t target = db_->GetLatestSequenceNumber();
    const status result = sync_log();
    lock.lock();
    if (result) synced_ = std::max(synced_, target);
    lock.unlock();
    for (auto& done : batch) {
      // A callback that throws (out of memory while answering) must not end this thread, or
      // every later ticket would wait forever; its answer is lost with it (the HTTP layer
      // answers 500 for a reply dropped unsent).
      try {
        done(result);
      } catch (...) {
        std::fprintf(stderr, "simdup serve: an answer callback threw after a sync\n");
      }
    }
    batch.clear();
    lock.lock();
  }
}

// Why writers may go on while the log is fsynced. RocksDB 7.8's WAL writer
// (WritableFileWriter) remembers a failed write or sync of its file (seen_error), and its next
// Append, Flush or Sync asserts unless that failure was a SyncWithoutFlush's
// (AssertFalseAndGetStatusForPrevError; Debian's build keeps assertions: the abort of issue 20).
// Every call that can write the log file through it goes through the gate, one at a time, and
// a failure is recorded (failed_) before the gate opens again, so no call can follow one: a
// Write (its Append; at a memtable switch, the old log's buffer, written from the writer's
// thread) and FlushWAL(false) (the buffer; manual_wal_flush keeps records there until then).
// RocksDB's own sync (FlushWAL(true), SyncWAL) could not run outside the gate: a writer's
// failed write of an old log at a memtable switch, between SyncWAL's choice of the logs and its
// SyncWithoutFlush of that log, makes the sync assert (and no buffer size keeps writers off the
// file: one that fills during a long fsync is written by the next Append). So the fsync is not
// RocksDB's: it runs on descriptors of our own, outside the gate, and RocksDB's writers never
// learn of it, failed or not (Linux's fdatasync writes back the file's data whichever
// descriptor wrote it). That also closes a way to the abort that RocksDB's own sync had left:
// a flush syncs the closed log files (SyncClosedLogs, with Sync), and SyncWAL would sync one
// whose Sync failed again.
status rocks_backend::sync_log() {
  std::unique_ptr<rocksdb::LogFile> current;
  if (auto st = through_gate("sync",
                             [&] {
                               // Read under the gate: no write can start a newer log meanwhile,
                               // so every record written so far is in this file or an older one.
                               const rocksdb::Status s = db_->FlushWAL(false);
                               return s.ok() ? db_->GetCurrentWalFile(&current) : s;
                             });
      !st) {
    return st;
  }
  std::lock_guard lock(log_sync_mu_);
  // After a failed fdatasync a later one may succeed without the lost pages: nothing more is
  // acknowledged.
  if (auto st = health(); !st) return st;
  return sync_log_files(*current);
}

status rocks_backend::sync_log_files(const rocksdb::LogFile& current) {
  const auto failed = [&](const std::string& path) {
    const std::string why = std::strerror(errno);
    return write_error("sync", errno == ENOSPC ? rocksdb::Status::NoSpace(path, why)
                                               : rocksdb::Status::IOError(path, why));
  };
  const auto sync_file = [&](const std::string& path) -> status {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    // Gone: its memtables were flushed to table files (synced) before RocksDB deleted it.
    if (fd < 0) return errno == ENOENT ? status{} : status(failed(path));
    const bool ok = ::fdatasync(fd) == 0;
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return ok ? status{} : status(failed(path));
  };
  if (current.LogNumber() != log_number_) {
    // A new log since the last sync: the older ones may hold records written since (the tail
    // written at the switch), and the directory does not hold the new file durably yet.
    if (log_fd_ >= 0 && ::fdatasync(log_fd_) != 0) return failed(log_path_);
    rocksdb::VectorLogPtr logs;
    if (auto s = db_->GetSortedWalFiles(logs); !s.ok()) return write_error("sync", s);
    for (const auto& log : logs) {
      if (log->Type() != rocksdb::kAliveLogFile || log->LogNumber() <= log_number_ ||
          log->LogNumber() >= current.LogNumber()) {
        continue;
      }
      if (auto st = sync_file(dir_ + log->PathName()); !st) return st;
    }
    const std::string path = dir_ + current.PathName();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return failed(path);
    if (log_fd_ >= 0) ::close(log_fd_);
    log_fd_ = fd;
    log_number_ = current.LogNumber();
    log_path_ = path;
    const int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0 || ::fsync(dir) != 0) {
      const auto st = failed(dir_);
      if (dir >= 0) ::close(dir);
      return st;
    }
    ::close(dir);
  }
  if (::fdatasync(log_fd_) != 0) return failed(log_path_);
  return {};
}

error_info rocks_backend::write_error(const char* what, const rocksdb::Status& s) {
  error_info e = db_error(what, s);
  if (!s.IsIOError()) return e;
  std::lock_guard lock(sync_mu_);
  if (!failed_.load(std::memory_order_relaxed)) {
    failure_ = e.message;
    failed_.store(true, std::memory_order_release);
    std::fprintf(stderr, "simdup serve: %s\n", health().error().message.c_str());
  }
  return e;
}

status rocks_backend::health() {
  if (!failed_.load(std::memory_order_acquire)) return {};
  return make_error(errc::unavailable,
                    "the store stopped taking requests after a failed write of its log (" +
                        failure_ +
                        "); restart the service once the disk has space: acknowledged "
                        "changes are kept");
}

}  // namespace simdup::detail
