#pragma once
// Gzip-compressed input (the torch profiler saves traces as .json.gz by default) read as its
// content, bounded like every input: a small file that inflates past the cap is an error, not
// an exhausted memory.
#include <cstddef>
#include <string>

namespace specsim {

/// Whether `bytes` begins with the gzip magic (1f 8b).
bool is_gzip(const std::string& bytes);

/// The content of the gzip stream `bytes` (concatenated members too); InputError naming `where`
/// when it is corrupt, truncated, or would inflate past `max_bytes`, or when this build has no
/// zlib.
std::string gunzip_bounded(const std::string& bytes, const std::string& path, const std::string& where,
                           std::size_t max_bytes);

}  // namespace specsim
