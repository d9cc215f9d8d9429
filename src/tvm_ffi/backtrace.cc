// Backtraces crossing the tvm-ffi bridge: tvm-ffi's frame order and boundary to packedfun's.
#include <string>
#include <string_view>
#include <vector>

#include "tvm_ffi/bridge.h"

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

/*! Whether `frame` is the bridge's own call into the kernel: where the caller's stack begins.
 *  Without debug information the frame names the demangled symbol (`packedfun::detail::tvmffi::`);
 *  with it (`-g`, as the sanitized build has), tvm-ffi prints the short function name (`CallBody`)
 *  and the source file, so the bridge's own file marks it too. */
bool IsBridgeFrame(std::string_view frame) {
  std::string_view head = frame.substr(0, frame.find('\n'));
  size_t in = head.find(", in ");
  if (in != std::string_view::npos &&
      head.compare(in + 5, 27, "packedfun::detail::tvmffi::") == 0) {
    return true;
  }
  constexpr std::string_view kBridgeFile = "tvm_ffi/bridge.cc\"";
  size_t file_end = head.find("\", line ");
  return file_end != std::string_view::npos && file_end + 1 >= kBridgeFile.size() &&
         head.compare(file_end + 1 - kBridgeFile.size(), kBridgeFile.size(), kBridgeFile) == 0;
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
