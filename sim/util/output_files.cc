#include "util/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>

#include "util/error.h"
#include "util/inputs_read.h"

namespace specsim {

namespace fs = std::filesystem;

namespace {

// The registry the signal handler reads: fixed slots of plain chars, so the handler touches no
// allocator and no lock. A slot is claimed (kClaimed) before its path is copied and read by the
// handler only once ready (kReady), so the handler never sees half a path.
constexpr int kSlots = 64;
constexpr std::size_t kSlotChars = 4096;
constexpr int kFree = 0, kClaimed = 1, kReady = 2;
char g_paths[kSlots][kSlotChars];
std::atomic<int> g_state[kSlots];
std::atomic<pid_t> g_writer{0};  // a child writing into the paths, killed before they are removed

constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_temps_and_reraise(int sig) {
  if (const pid_t writer = g_writer.load(); writer > 0) {
    ::kill(writer, SIGKILL);
    ::waitpid(writer, nullptr, 0);
  }
  for (int i = 0; i < kSlots; ++i)  // files first, then the (now empty) folders
    if (g_state[i].load() == kReady) ::unlink(g_paths[i]);
  for (int i = 0; i < kSlots; ++i)
    if (g_state[i].load() == kReady) ::rmdir(g_paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : kHandledSignals) {
      struct sigaction sa {};
      if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler == SIG_IGN) continue;  // nohup: keep ignoring
      sa.sa_handler = remove_temps_and_reraise;
      sigemptyset(&sa.sa_mask);
      for (const int other : kHandledSignals) sigaddset(&sa.sa_mask, other);  // one clean-up at a time
      sa.sa_flags = 0;
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

// Device and inode of an existing path (not following a final symlink).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Two paths that do not exist yet name the same file when their folders are the same and their
// names are equal.
bool same_target(const std::string& a, const std::string& b) {
  if (same_file(a, b)) return true;
  std::error_code ea, eb;
  const fs::path pa = fs::weakly_canonical(fs::absolute(a, ea), ea), pb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  return !ea && !eb && pa == pb;
}

void check_one(const OutputFile& o) {
  if (o.path == "-")
    throw InputError("'-' is not a file here: this flag writes a file (stdout has its own flags)", o.flag);
  struct stat st {};
  if (::lstat(o.path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      throw InputError("'" + o.path + "' is a symbolic link: give the file it points to, or another name", o.flag);
    if (S_ISDIR(st.st_mode)) throw InputError("'" + o.path + "' is a folder, not a file", o.flag);
    if (!S_ISREG(st.st_mode))
      throw InputError("'" + o.path + "' is a device, fifo or socket: outputs replace regular files only", o.flag);
  }
  fs::path folder = fs::path(o.path).parent_path();
  if (folder.empty()) folder = ".";
  struct stat ds {};
  if (::stat(folder.c_str(), &ds) != 0 || !S_ISDIR(ds.st_mode))
    throw InputError("cannot write output file " + o.path + ": its folder does not exist", o.flag);
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError("cannot write output file " + o.path + ": its folder is not writable", o.flag);
  if (fs::path(o.path).filename().string().size() > NAME_MAX)
    throw InputError("the file name is longer than the file system allows", o.flag);
}

}  // namespace

void check_outputs(const std::vector<OutputFile>& outputs, const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputFile& o = outputs[i];
    if (o.path.empty()) continue;
    check_one(o);
    for (const auto& in : inputs)
      if (!in.empty() && same_file(o.path, in))
        throw InputError("'" + o.path + "' is also an input: writing it would destroy the input", o.flag);
    // Every file read so far, however it was named (a profile a scenario file names, a model in a
    // pasted command, a runtime profile), is an input too.
    struct stat st {};
    if (::stat(o.path.c_str(), &st) == 0)
      for (const auto& in : inputs_read())
        if (in.dev == static_cast<unsigned long long>(st.st_dev) &&
            in.ino == static_cast<unsigned long long>(st.st_ino))
          throw InputError("'" + o.path + "' is also an input" +
                               (in.path == o.path ? "" : " (read as " + in.path + ")") +
                               ": writing it would destroy the input; give the output another name",
                           o.flag);
    for (std::size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && same_target(o.path, outputs[j].path))
        throw InputError("the same file as " + outputs[j].flag + ": give each output its own file", o.flag);
  }
}

SignalsHeld::SignalsHeld() {
  sigset_t held;
  sigemptyset(&held);
  for (const int sig : kHandledSignals) sigaddset(&held, sig);
  ::pthread_sigmask(SIG_BLOCK, &held, &old_);
}

SignalsHeld::~SignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

TempPath::TempPath(std::string path) : path_(std::move(path)) {
  install_handlers();
  if (path_.empty() || path_.size() >= kSlotChars) return;  // not registered; still removed by the destructor
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_state[i].compare_exchange_strong(expected, kClaimed)) continue;
    std::memcpy(g_paths[i], path_.c_str(), path_.size() + 1);
    g_state[i].store(kReady);
    slot_ = i;
    return;
  }
}

TempPath::TempPath(NewFolder folder) : TempPath(std::string()) {
  const SignalsHeld held;  // a signal between mkdtemp and the registration would leave the folder
  if (!::mkdtemp(folder.tmpl.data())) return;
  TempPath made(folder.tmpl);
  std::swap(path_, made.path_);
  std::swap(slot_, made.slot_);
}

void TempPath::keep() {
  if (slot_ >= 0) g_state[slot_].store(kFree);
  slot_ = -1;
  path_.clear();
}

TempPath::~TempPath() {
  if (slot_ >= 0) g_state[slot_].store(kFree);
  if (!path_.empty() && ::unlink(path_.c_str()) != 0) ::rmdir(path_.c_str());
}

void default_temp_handlers() {
  for (const int sig : kHandledSignals) {
    struct sigaction sa {};
    if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler == remove_temps_and_reraise) std::signal(sig, SIG_DFL);
  }
}

TempWriter::TempWriter(pid_t pid) { g_writer.store(pid); }

TempWriter::~TempWriter() { g_writer.store(0); }

namespace {

constexpr const char* kTempTag = ".specsim-tmp.";
constexpr int kStaleTempSeconds = 60;  // a live write renames its temporary within seconds

// `.NAME.specsim-tmp.` for the final file name `name`, NAME cut so that the prefix plus `unique`
// fits in NAME_MAX bytes.
std::string temp_prefix(const std::string& name, std::size_t unique_chars) {
  const std::size_t tag = std::strlen(kTempTag), room = NAME_MAX - 1 - tag - unique_chars;
  std::string prefix(1, '.');
  prefix.append(name, 0, room);
  prefix.append(kTempTag);
  return prefix;
}

// Removes `folder`'s leftovers `PREFIX<pid>-<n>` of processes not running on this machine, last
// changed over kStaleTempSeconds ago: what a SIGKILL-ed specsim left while writing the same file.
void remove_stale_temps(const fs::path& folder, const std::string& prefix) {
  std::error_code ec;
  fs::directory_iterator it(folder.empty() ? fs::path(".") : folder, ec), end;
  const auto now = fs::file_time_type::clock::now();
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const auto dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || dash > 9 ||
        rest.find_first_not_of("0123456789-") != std::string::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(rest.substr(0, dash)));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code e2;
    if (!it->is_regular_file(e2) || it->is_symlink(e2)) continue;
    const auto changed = fs::last_write_time(it->path(), e2);
    if (e2 || now - changed < std::chrono::seconds(kStaleTempSeconds)) continue;
    fs::remove(it->path(), e2);
  }
}

}  // namespace

std::string temp_name_beside(const std::string& path) {
  const fs::path p(path);
  static std::atomic<unsigned> counter{0};
  const std::string pid = std::to_string(::getpid()), unique = pid + "-" + std::to_string(counter++);
  // The widest unique part (a 10-digit pid and counter) sets the cut, so every temporary of one
  // final name shares the prefix that remove_stale_temps() looks for.
  const std::string prefix = temp_prefix(p.filename().string(), 21);
  remove_stale_temps(p.parent_path(), prefix);
  return (p.parent_path() / (prefix + unique)).string();
}

std::string temp_folder() {
  const char* env = std::getenv("TMPDIR");
  const std::string dir = env && *env ? env : "/tmp";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw EnvironmentError("the temporary folder " + dir + " does not exist",
                           "set TMPDIR to an existing writable folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw EnvironmentError("the temporary folder " + dir + " is not writable",
                           "set TMPDIR to an existing writable folder");
  return dir;
}

void write_outputs_atomic(const std::vector<std::pair<OutputFile, std::string>>& files) {
  std::vector<OutputFile> outs;
  for (const auto& f : files) outs.push_back(f.first);
  check_outputs(outs);
  std::vector<std::unique_ptr<TempPath>> temps;
  for (const auto& [o, text] : files) {
    if (o.path.empty()) continue;
    auto t = std::make_unique<TempPath>(temp_name_beside(o.path));
    const int fd = ::open(t->path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw InputError("cannot write output file " + o.path + ": check the folder is writable", o.flag);
    // A file replaced keeps its permissions (a mode-600 output stays private).
    struct stat old {};
    if (::stat(o.path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) ::fchmod(fd, old.st_mode & 07777);
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    const bool ok = done == text.size() && ::close(fd) == 0;
    if (!ok) throw InputError("failed writing output file " + o.path + " (disk full?)", o.flag);
    temps.push_back(std::move(t));
  }
  std::size_t k = 0;
  for (const auto& [o, text] : files) {
    if (o.path.empty()) continue;
    if (std::rename(temps[k]->path().c_str(), o.path.c_str()) != 0)
      throw InputError("cannot move output into place at " + o.path, o.flag);
    temps[k++]->keep();
  }
}

}  // namespace specsim
