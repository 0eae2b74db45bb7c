#pragma once
// The set of every file this process has read, however it was named (a flag, a scenario file, a
// pasted command, a model folder, a profile a profile names): the output check refuses to write
// over any of them. Kept as device and inode, taken when the file was opened.
#include <string>
#include <vector>

namespace specsim {

/// One file read: the path as it was named, and its identity on disk.
struct InputRead {
  std::string path;
  unsigned long long dev = 0, ino = 0;
};

/// Records a regular file opened for reading (called by read_bounded()).
void note_input_read(const std::string& path, unsigned long long dev, unsigned long long ino);

/// Every regular file read so far, in order, each once.
std::vector<InputRead> inputs_read();

}  // namespace specsim
