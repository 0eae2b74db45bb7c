#include "util/gzip.h"

#include "util/error.h"
#ifdef SPECSIM_WITH_ZLIB
#include <zlib.h>
#endif

namespace specsim {

bool is_gzip(const std::string& b) {
  return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f && static_cast<unsigned char>(b[1]) == 0x8b;
}

#ifdef SPECSIM_WITH_ZLIB
std::string gunzip_bounded(const std::string& bytes, const std::string& path, const std::string& where,
                           std::size_t max_bytes) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw InputError("cannot start gzip decompression", where);
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&z};
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());  // inputs are capped far below 4 GiB
  std::string out;
  char buf[1 << 16];
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    const int r = inflate(&z, Z_NO_FLUSH);
    const std::size_t n = sizeof buf - z.avail_out;
    if (out.size() + n > max_bytes)
      throw InputError(
          "'" + path + "' inflates to more than " + std::to_string(max_bytes >> 20) + " MiB, the most specsim reads",
          where);
    out.append(buf, n);
    if (r == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      if (inflateReset(&z) != Z_OK) throw InputError("'" + path + "' is a corrupt gzip file", where);
      continue;  // another gzip member follows
    }
    if (r == Z_OK) continue;
    if (r == Z_BUF_ERROR && z.avail_in == 0)
      throw InputError("'" + path + "' is a truncated gzip file: it ends before its stream does", where);
    throw InputError("'" + path + "' is a corrupt gzip file" + (z.msg ? std::string(": ") + z.msg : std::string()),
                     where);
  }
  return out;
}
#else
std::string gunzip_bounded(const std::string&, const std::string& path, const std::string& where, std::size_t) {
  throw InputError("'" + path +
                       "' is gzip-compressed and this specsim was built without zlib (install zlib1g-dev "
                       "and rebuild, or gunzip the file)",
                   where);
}
#endif

}  // namespace specsim
