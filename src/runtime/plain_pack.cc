// Containers of plain values packed into one byte string and back: the short road for pickling.
//
// An Array, List, Map or Dict whose elements (keys and values) are all None, bool, int, float,
// str or bytes cannot share nodes or hold cycles, so it travels as bytes rather than as a value
// graph: one native pass writes them, one native pass rebuilds the container. Layout (host byte
// order, recorded in the header so a foreign machine refuses rather than misreads):
//   "PFP" version:u8 order:u8 type_index:i32 count:i64, then per element a tag byte and payload
//   (None/true/false: nothing; int, float: 8 bytes; str, bytes: u64 length + the bytes).
// Maps store count pairs k0, v0, k1, v1, ... in insertion order.
#include <packedfun/c_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "runtime/error.h"
#include "runtime/map.h"
#include "runtime/object.h"
#include "runtime/registry.h"
#include "runtime/seq.h"
#include "runtime/string.h"

namespace packedfun {
namespace detail {
namespace {

constexpr char kMagic[3] = {'P', 'F', 'P'};
constexpr uint8_t kVersion = 1;
constexpr size_t kHeader = 3 + 1 + 1 + 4 + 8;
enum Tag : uint8_t { kNone, kFalse, kTrue, kInt, kFloat, kStr, kBytes };

uint8_t HostOrder() {
  const uint16_t probe = 1;
  uint8_t first = 0;
  std::memcpy(&first, &probe, 1);
  return first;  // 1 little-endian, 0 big-endian
}

template <class T>
void Put(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

/*! Appends `v`; false (nothing appended that matters) when `v` is not a plain value. */
bool PackOne(const PFAny& v, std::string* out) {
  std::string_view text;
  if (AnyIsString(v) || AnyIsBytes(v)) {
    bool bytes = AnyIsBytes(v);
    if (!AnyToStringView(v, bytes, &text)) return false;
    out->push_back(static_cast<char>(bytes ? kBytes : kStr));
    Put<uint64_t>(out, text.size());
    out->append(text.data(), text.size());
    return true;
  }
  switch (v.type_index) {
    case kPFTypeNone:
      out->push_back(static_cast<char>(kNone));
      return true;
    case kPFTypeBool:
      out->push_back(static_cast<char>(v.v_int64 ? kTrue : kFalse));
      return true;
    case kPFTypeInt:
      out->push_back(static_cast<char>(kInt));
      Put<int64_t>(out, v.v_int64);
      return true;
    case kPFTypeFloat:
      out->push_back(static_cast<char>(kFloat));
      Put<double>(out, v.v_float64);
      return true;
    default:
      return false;
  }
}

/*! Packs `seq`'s elements after a header; false when one of them is not plain. */
bool PackSeq(const PFSeqObject* seq, int32_t type_index, int64_t count, std::string* out) {
  out->append(kMagic, 3);
  out->push_back(static_cast<char>(kVersion));
  out->push_back(static_cast<char>(HostOrder()));
  Put<int32_t>(out, type_index);
  Put<int64_t>(out, count);
  for (int64_t i = 0; i < seq->size; ++i) {
    if (!PackOne(seq->data[i], out)) return false;
  }
  return true;
}

/*! The length of the well-formed UTF-8 prefix of `text` (its size when all of it is): what
 *  Python's strict decoder takes, so no overlong forms, no surrogates, nothing past U+10FFFF. */
size_t ValidUtf8Prefix(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    if (len == 0 || n - i < len) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
    }
    if ((len == 2 && c < 0xC2) || (len == 3 && c == 0xE0 && p[i + 1] < 0xA0) ||
        (len == 3 && c == 0xED && p[i + 1] >= 0xA0) ||  // a surrogate
        (len == 4 && c == 0xF0 && p[i + 1] < 0x90) ||
        (len == 4 && (c > 0xF4 || (c == 0xF4 && p[i + 1] >= 0x90)))) {
      return i;
    }
    i += len;
  }
  return n;
}

/*! Reads the packed elements back, bounds-checked (the bytes may come from anywhere). */
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  template <class T>
  T Get() {
    Need(sizeof(T));
    T value;
    std::memcpy(&value, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  PFAny Next() {
    switch (Get<uint8_t>()) {
      case kNone:
        return NoneAny();
      case kFalse:
      case kTrue: {
        PFAny v = NoneAny();
        v.type_index = kPFTypeBool;
        v.v_int64 = data_[pos_ - 1] == static_cast<char>(kTrue);
        return v;
      }
      case kInt: {
        PFAny v = NoneAny();
        v.type_index = kPFTypeInt;
        v.v_int64 = Get<int64_t>();
        return v;
      }
      case kFloat: {
        PFAny v = NoneAny();
        v.type_index = kPFTypeFloat;
        v.v_float64 = Get<double>();
        return v;
      }
      case kStr: {  // refused here, not on every later read of the container
        size_t start = pos_;
        std::string_view text = Text();
        if (size_t ok = ValidUtf8Prefix(text); ok != text.size()) {
          pos_ = start + sizeof(uint64_t) + ok;
          Throw("ValueError", Where() + "a str that is not UTF-8");
        }
        return MakeStringAny(text);
      }
      case kBytes:
        return MakeBytesAny(Text());
      default:
        Throw("ValueError", Where() + "unknown element tag " + std::to_string(data_[pos_ - 1]));
    }
  }

  bool AtEnd() const { return pos_ == data_.size(); }
  size_t Left() const { return data_.size() - pos_; }
  std::string Where() const {
    return "packedfun.container_unpack_plain: byte " + std::to_string(pos_) + ": ";
  }

 private:
  void Need(size_t n) const {
    if (data_.size() - pos_ < n) Throw("ValueError", Where() + "the data ends early");
  }
  std::string_view Text() {
    uint64_t n = Get<uint64_t>();
    Need(n);
    std::string_view text = data_.substr(pos_, n);
    pos_ += n;
    return text;
  }

  std::string_view data_;
  size_t pos_ = 0;
};

/*! Holds an owned PFAny until the end of a scope unless released. */
struct Owned {
  PFAny v;
  ~Owned() { ReleaseAny(&v); }
};

PFObject* Unpack(std::string_view data) {
  Reader in(data);
  if (data.size() < kHeader || std::memcmp(data.data(), kMagic, 3) != 0) {
    Throw("ValueError", "packedfun.container_unpack_plain: not a packed packedfun container");
  }
  for (int i = 0; i < 3; ++i) in.Get<char>();
  if (uint8_t version = in.Get<uint8_t>(); version != kVersion) {
    Throw("ValueError", "packedfun.container_unpack_plain: packed with format version " +
                            std::to_string(version) + ", this packedfun reads version 1");
  }
  if (in.Get<uint8_t>() != HostOrder()) {
    Throw("ValueError",
          "packedfun.container_unpack_plain: packed on a machine of the other byte "
          "order");
  }
  int32_t type_index = in.Get<int32_t>();
  int64_t count = in.Get<int64_t>();
  bool is_map = type_index == kPFTypeMap || type_index == kPFTypeDict;
  bool is_seq = type_index == kPFTypeArray || type_index == kPFTypeList;
  // Every element takes at least one byte: a count beyond what is left is corrupt, not huge.
  if ((!is_map && !is_seq) || count < 0 || static_cast<uint64_t>(count) > in.Left()) {
    Throw("ValueError", "packedfun.container_unpack_plain: bad header (type " +
                            std::to_string(type_index) + ", " + std::to_string(count) +
                            " elements)");
  }
  Owned result{NoneAny()};
  if (is_seq) {
    PFSeqObject* seq = NewSeq(type_index, count);
    result.v = ObjectAny(Header(seq));
    for (int64_t i = 0; i < count; ++i) seq->data[seq->size++] = in.Next();
  } else {
    result.v = ObjectAny(NewMap(type_index));
    for (int64_t i = 0; i < count; ++i) {
      Owned key{in.Next()};
      Owned value{in.Next()};
      MapSet(result.v.v_obj, key.v, value.v);
    }
  }
  if (!in.AtEnd()) Throw("ValueError", in.Where() + "trailing data after the last element");
  PFObject* out = result.v.v_obj;
  result.v = NoneAny();
  return out;
}

int PackCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return Guard([&] {
    if (n != 1) Throw("TypeError", "packedfun.container_pack_plain: expected 1 argument");
    *result = NoneAny();
    const PFAny& v = args[0];
    if (!IsObjectIndex(v.type_index) || AnyIsString(v) || AnyIsBytes(v)) return 0;
    int32_t type_index = v.v_obj->type_index;
    std::string out;
    if (type_index == kPFTypeArray || type_index == kPFTypeList) {
      auto* seq = reinterpret_cast<const PFSeqObject*>(v.v_obj);
      out.reserve(kHeader + static_cast<size_t>(seq->size) * 9);
      if (!PackSeq(seq, type_index, seq->size, &out)) return 0;
    } else if (type_index == kPFTypeMap || type_index == kPFTypeDict) {
      Owned items{ObjectAny(MapItemsArray(v.v_obj))};
      auto* seq = reinterpret_cast<const PFSeqObject*>(items.v.v_obj);
      out.reserve(kHeader + static_cast<size_t>(seq->size) * 12);
      if (!PackSeq(seq, type_index, seq->size / 2, &out)) return 0;
    } else {
      return 0;  // not a container this packs: the caller takes the value-graph road
    }
    *result = MakeBytesAny(out);
    return 0;
  });
}

int UnpackCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return Guard([&] {
    std::string_view data;
    if (n != 1 || !AnyIsBytes(args[0]) || !AnyToStringView(args[0], true, &data)) {
      Throw("TypeError", "packedfun.container_unpack_plain: expected 1 argument of type bytes");
    }
    *result = ObjectAny(Unpack(data));
    return 0;
  });
}

const int kRegistered = [] {
  RegisterBuiltin("packedfun.container_pack_plain", &PackCall);
  RegisterBuiltin("packedfun.container_unpack_plain", &UnpackCall);
  return 0;
}();

}  // namespace
}  // namespace detail
}  // namespace packedfun
