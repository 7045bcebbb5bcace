#include "tests/support/child_process.h"

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/io/unique_fd.h"

namespace modelplane::testing {
namespace {

constexpr auto kStopTimeout = std::chrono::seconds(30);
constexpr auto kPollInterval = std::chrono::milliseconds(20);

core::Error SystemError(const std::string& what, int error) {
  return {core::ErrorCode::kIo, what + ": " + std::system_category().message(error)};
}

// The child's side of Start. Everything it uses was made before fork: the test process has
// other threads, whose locks (malloc's among them) may be held in this copy of it.
[[noreturn]] void RunChild(char* const* argv, int log_fd, bool log_stdout_only,
                           bool die_with_parent, pid_t parent, int report_fd) {
  if (die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
  }
  if (log_fd >= 0) {
    // dup2 clears close-on-exec on the copies, so exec keeps them.
    if (::dup2(log_fd, STDOUT_FILENO) < 0 ||
        (!log_stdout_only && ::dup2(log_fd, STDERR_FILENO) < 0)) {
      const int error = errno;
      (void)!::write(report_fd, &error, sizeof error);
      ::_exit(127);
    }
  }
  ::execvp(argv[0], argv);
  const int error = errno;
  (void)!::write(report_fd, &error, sizeof error);
  ::_exit(127);
}

}  // namespace

core::Result<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv,
                                               const ChildOptions& options) {
  if (argv.empty()) {
    return std::unexpected(core::Error(core::ErrorCode::kInvalidArgument, "no program"));
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  core::UniqueFd log;
  if (!options.log_path.empty()) {
    const int mode = O_WRONLY | O_CREAT | O_CLOEXEC | (options.append_log ? O_APPEND : O_TRUNC);
    log.Reset(::open(options.log_path.c_str(), mode, 0644));
    if (!log.valid()) return std::unexpected(SystemError("open " + options.log_path, errno));
  }
  // The child writes exec's errno here; exec closes it, so reading nothing means it ran.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return std::unexpected(SystemError("pipe2", errno));
  core::UniqueFd report_read(report[0]);
  core::UniqueFd report_write(report[1]);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return std::unexpected(SystemError("fork", errno));
  if (pid == 0) {
    RunChild(args.data(), log.get(), options.log_stdout_only, options.die_with_parent, parent,
             report_write.get());
  }
  report_write.Reset();
  int child_error = 0;
  ssize_t received = 0;
  do {
    received = ::read(report_read.get(), &child_error, sizeof child_error);
  } while (received < 0 && errno == EINTR);
  if (received == static_cast<ssize_t>(sizeof child_error)) {
    ::waitpid(pid, nullptr, 0);
    return std::unexpected(SystemError("run " + argv[0], child_error));
  }
  return ChildProcess(pid, options.log_path);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      ended_(std::exchange(other.ended_, false)),
      status_(std::exchange(other.status_, {})),
      log_path_(std::move(other.log_path_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    Stop();
    pid_ = std::exchange(other.pid_, -1);
    ended_ = std::exchange(other.ended_, false);
    status_ = std::exchange(other.status_, {});
    log_path_ = std::move(other.log_path_);
  }
  return *this;
}

bool ChildProcess::Running() {
  if (pid_ <= 0 || ended_) return false;
  int wait_status = 0;
  const pid_t reaped = ::waitpid(pid_, &wait_status, WNOHANG);
  if (reaped == 0) return true;
  if (reaped == pid_) {
    Record(wait_status);
  } else {
    ended_ = true;  // not our child any more (reaped elsewhere): nothing left to wait for
  }
  return false;
}

ExitStatus ChildProcess::Wait() {
  if (pid_ <= 0) return {};
  if (!ended_) {
    int wait_status = 0;
    pid_t reaped = -1;
    do {
      reaped = ::waitpid(pid_, &wait_status, 0);
    } while (reaped < 0 && errno == EINTR);
    if (reaped == pid_) Record(wait_status);
  }
  return TakeStatus();
}

ExitStatus ChildProcess::Stop(int signal) {
  if (Running()) {
    ::kill(pid_, signal);
    const auto give_up = std::chrono::steady_clock::now() + kStopTimeout;
    while (signal != SIGKILL && std::chrono::steady_clock::now() < give_up && Running()) {
      std::this_thread::sleep_for(kPollInterval);
    }
    if (signal != SIGKILL && Running()) ::kill(pid_, SIGKILL);
  }
  return Wait();
}

std::string ChildProcess::Log() const {
  if (log_path_.empty()) return "";
  std::ifstream file(log_path_);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

ExitStatus ChildProcess::TakeStatus() {
  const ExitStatus status = status_;
  pid_ = -1;
  ended_ = false;
  status_ = {};
  return status;
}

void ChildProcess::Record(int wait_status) {
  ended_ = true;
  if (WIFEXITED(wait_status)) {
    status_ = {.code = WEXITSTATUS(wait_status), .signal = 0};
  } else if (WIFSIGNALED(wait_status)) {
    status_ = {.code = -1, .signal = WTERMSIG(wait_status)};
  }
}

}  // namespace modelplane::testing
