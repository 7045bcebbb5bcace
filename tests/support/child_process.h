// A program a test runs as a child process (the real binaries, kube-scheduler, probes): started
// with its output in a log file, watched, and stopped with SIGTERM (then SIGKILL) or a chosen
// signal, reporting how it ended. The destructor stops it, so no test leaves one behind.
//
// Thread safety: one thread uses a ChildProcess at a time. Start is safe in a test process
// that has other threads: the child runs only async-signal-safe calls between fork and exec.
#pragma once

#include <csignal>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "core/error/error.h"

namespace modelplane::testing {

// How a child ended: an exit code, or the signal that ended it. Code -1 and signal 0: there was
// no child to wait for.
struct ExitStatus {
  int code = -1;   // -1 when a signal ended it
  int signal = 0;  // 0 when it exited
};

struct ChildOptions {
  // Where the child's stdout and stderr go; empty: both stay the test's own.
  std::string log_path;
  // Only stdout into log_path: a command that answers in JSON on stdout and logs on stderr.
  bool log_stdout_only = false;
  // Adds to the file instead of emptying it: a restarted process keeps its predecessor's lines.
  bool append_log = false;
  // The child gets SIGTERM when the test dies (a crash, a closed pipe) instead of outliving it.
  // The kernel ties this to the thread that called Start, so that thread must outlive the child.
  bool die_with_parent = false;
};

class ChildProcess {
 public:
  // Runs argv[0] (looked up on PATH when it has no '/'). Fails when the log cannot be opened or
  // the program cannot be executed, with the system's reason.
  [[nodiscard]] static core::Result<ChildProcess> Start(const std::vector<std::string>& argv,
                                                        const ChildOptions& options = {});

  ChildProcess() = default;  // no process yet: a fixture's member, assigned from Start
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ~ChildProcess() { Stop(); }

  // True from Start until Wait or Stop hands out the exit status, even if the child has ended
  // by itself meanwhile: a fixture can tell "never started or already stopped" from "crashed".
  [[nodiscard]] bool has_process() const { return pid_ > 0; }
  // Meaningful while Running(); the kernel may reuse it once the child has been reaped.
  [[nodiscard]] pid_t pid() const { return pid_; }

  // False once the child has ended (it is reaped here, its status kept for Wait or Stop) or
  // when there is none.
  [[nodiscard]] bool Running();

  // Blocks until the child ends by itself. Wait and Stop hand the status out once and leave
  // the ChildProcess empty, as a default-constructed one.
  ExitStatus Wait();

  // Sends `signal` and waits; after SIGTERM (or any signal but SIGKILL) the child gets 30 s to
  // end before SIGKILL, far more than any clean shutdown takes, so a hang shows as signal 9.
  // A child that already ended is not signalled; how it ended is returned.
  ExitStatus Stop(int signal = SIGTERM);

  // The log file's content so far (empty without a log).
  [[nodiscard]] std::string Log() const;

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  void Record(int wait_status);
  ExitStatus TakeStatus();

  pid_t pid_ = -1;
  bool ended_ = false;
  ExitStatus status_;
  std::string log_path_;
};

}  // namespace modelplane::testing
