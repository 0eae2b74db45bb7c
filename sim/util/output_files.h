#pragma once
// Output files: every output of a command is checked before any is written (folder exists, not a
// device, fifo, folder or symbolic link, not one of the inputs, not another output), then each is
// written to a temporary file beside it and renamed into place. Temporary files are removed on
// every exit path, SIGINT and SIGTERM included.
#include <signal.h>
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace specsim {

/// An output a command will write: its path and the flag that named it.
struct OutputFile {
  std::string path, flag;
};

/// InputError naming the flag of the first output that cannot be written safely: `-` (these flags
/// write files; stdout has its own flags), a missing or unwritable folder, an existing path that
/// is not a regular file (device, fifo, folder) or is a symbolic link, the same file as one of
/// `inputs` or as another output. Empty paths are skipped.
void check_outputs(const std::vector<OutputFile>& outputs, const std::vector<std::string>& inputs = {});

/// Writes each (output, text) through a temporary file in the output's folder, all texts first and
/// then all renames, so a failure leaves every old file in place. Checks the outputs first.
void write_outputs_atomic(const std::vector<std::pair<OutputFile, std::string>>& files);

/// Holds SIGINT, SIGTERM and SIGHUP (the signals the handler below takes) on this thread until
/// destroyed; one that arrives meanwhile is delivered then. So a path or a process can be made and
/// registered with no gap for a signal to fall into.
class SignalsHeld {
 public:
  SignalsHeld();
  ~SignalsHeld();
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;
  /// The mask from before: what a forked child restores before exec.
  const sigset_t& before() const { return old_; }

 private:
  sigset_t old_{};
};

/// A temporary path removed by the SIGINT/SIGTERM handler (and by the destructor) until dropped.
/// The handler is installed on first use; it unlinks (or rmdir-s) every registered path and then
/// lets the signal end the process as it would have.
class TempPath {
 public:
  explicit TempPath(std::string path);
  /// A new folder made from `tmpl` (mkdtemp's trailing XXXXXX), registered with the signals held
  /// between the two. path() is empty when it could not be made.
  struct NewFolder {
    std::string tmpl;
  };
  explicit TempPath(NewFolder folder);
  ~TempPath();  ///< removes the path (unless kept)
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  const std::string& path() const { return path_; }
  /// The file was renamed into place: nothing to remove any more.
  void keep();

 private:
  std::string path_;
  int slot_ = -1;
};

/// A child process that writes into registered temporary paths (gnuplot writing its log and image).
/// Until dropped, the signal handler kills (SIGKILL) and reaps it before removing the paths, so it
/// cannot write a file after they are gone. Register it with the signals held across its fork().
class TempWriter {
 public:
  explicit TempWriter(pid_t pid);
  ~TempWriter();
  TempWriter(const TempWriter&) = delete;
  TempWriter& operator=(const TempWriter&) = delete;
};

/// In a forked child before exec: the handled signals whose handler is the one above go back to
/// their default, as exec would do; an ignored one (nohup) stays ignored.
void default_temp_handlers();

/// A temporary file name beside `path` for writing it: `.NAME.specsim-tmp.PID-N` in the same
/// folder (NAME cut so the whole fits in NAME_MAX), recognisable by `ls -a`. SIGKILL cannot be
/// caught, so a killed specsim leaves it behind; the next temporary for the same final name
/// removes such leftovers (those of a process no longer running here, over a minute old).
std::string temp_name_beside(const std::string& path);

/// The folder for temporary work (gnuplot's script and log): $TMPDIR when set and not empty,
/// else /tmp. EnvironmentError when it is not an existing, writable folder.
std::string temp_folder();

}  // namespace specsim
