// Backtraces crossing the tvm-ffi bridge: tvm-ffi's frame order and boundary to packedfun's.
#include <string>
#include <string_view>
#include <vector>

#include "internal/tvm_ffi.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

/*! Frames of a backtrace text: each starts at a line beginning with `  File "` and takes the
 *  lines after it (a source line, say) up to the next frame. Text before the first frame, which
 *  neither side writes, is kept as a frame of its own so that nothing is lost. */
std::vector<std::string_view> SplitFrames(std::string_view text) {
  std::vector<std::string_view> frames;
  size_t start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    end = end == std::string_view::npos ? text.size() : end + 1;
    if (pos != start && text.compare(pos, 8, "  File \"") == 0) {
      frames.push_back(text.substr(start, pos - start));
      start = pos;
    }
    pos = end;
  }
  if (start < text.size()) frames.push_back(text.substr(start));
  return frames;
}

/*! Whether `frame` is the bridge's own call into the kernel: where the caller's stack begins. */
bool IsBridgeFrame(std::string_view frame) {
  size_t in = frame.find(", in ");
  size_t eol = frame.find('\n');
  return in != std::string_view::npos && in < eol &&
         frame.compare(in + 5, 27, "packedfun::detail::tvmffi::") == 0;
}

std::string Join(const std::vector<std::string_view>& frames, size_t begin, size_t end,
                 bool reverse) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    std::string_view f = frames[reverse ? end - 1 - (i - begin) : i];
    out.append(f);
    if (f.empty() || f.back() != '\n') out.push_back('\n');
  }
  return out;
}

}  // namespace

std::string BacktraceFromTVM(std::string_view text) {
  std::vector<std::string_view> frames = SplitFrames(text);
  size_t keep = 0;
  while (keep < frames.size() && !IsBridgeFrame(frames[keep])) ++keep;
  return Join(frames, 0, keep, true);
}

std::string BacktraceToTVM(std::string_view text) {
  std::vector<std::string_view> frames = SplitFrames(text);
  return Join(frames, 0, frames.size(), true);
}

}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
