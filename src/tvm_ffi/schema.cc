// Apache TVM FFI bridge: a library's exported type schema (`__tvm_ffi__metadata_<name>`) read
// into packedfun's function metadata record, so that its Functions have signatures and keywords.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tvm_ffi/bridge.h"
#include "packedfun/signature.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

/*! A parsed JSON value: the little of JSON the schema uses (objects, arrays, strings); other
 *  scalars are kept as their text. */
struct Json {
  enum Kind { kScalar, kString, kArray, kObject } kind = kScalar;
  std::string text;                                  // kScalar, kString
  std::vector<Json> items;                           // kArray
  std::vector<std::pair<std::string, Json>> fields;  // kObject

  const Json* Get(std::string_view key) const {
    for (const auto& f : fields) {
      if (f.first == key) return &f.second;
    }
    return nullptr;
  }
};

/*! A recursive-descent JSON reader; any malformed input makes Parse return false. */
class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  bool Parse(Json* out) {
    if (!Value(out, 0)) return false;
    Skip();
    return i_ == s_.size();
  }

 private:
  static constexpr int kMaxDepth = 64;

  void Skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  bool Eat(char c) {
    Skip();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool Value(Json* out, int depth) {
    if (depth > kMaxDepth) return false;
    Skip();
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '"') return out->kind = Json::kString, String(&out->text);
    if (c == '[') {
      out->kind = Json::kArray;
      ++i_;
      if (Eat(']')) return true;
      do {
        out->items.emplace_back();
        if (!Value(&out->items.back(), depth + 1)) return false;
      } while (Eat(','));
      return Eat(']');
    }
    if (c == '{') {
      out->kind = Json::kObject;
      ++i_;
      if (Eat('}')) return true;
      do {
        out->fields.emplace_back();
        Skip();
        if (!String(&out->fields.back().first) || !Eat(':')) return false;
        if (!Value(&out->fields.back().second, depth + 1)) return false;
      } while (Eat(','));
      return Eat('}');
    }
    size_t start = i_;
    while (i_ < s_.size() && std::string_view(",]} \n\t\r").find(s_[i_]) == std::string_view::npos)
      ++i_;
    out->text.assign(s_.substr(start, i_ - start));
    return i_ > start;
  }
  bool String(std::string* out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      char c = s_[i_];
      if (c == '"') return ++i_, true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (++i_ >= s_.size()) return false;
      switch (s_[i_]) {
        case 'n':
          out->push_back('\n');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'u':
          if (!Unicode(out)) return false;
          break;
        default:
          out->push_back(s_[i_]);
      }
    }
    return false;
  }
  /*! A \uXXXX escape (the reader is on the 'u'), surrogate pairs joined, written as UTF-8. */
  bool Unicode(std::string* out) {
    uint32_t cp = 0;
    if (!Hex4(&cp)) return false;
    if (cp >= 0xD800 && cp < 0xDC00 && i_ + 2 < s_.size() && s_[i_ + 1] == '\\' &&
        s_[i_ + 2] == 'u') {
      i_ += 2;
      uint32_t low = 0;
      if (!Hex4(&low)) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return true;
  }
  /*! Reads the 4 hex digits after the 'u' at i_, leaving i_ on the last one. */
  bool Hex4(uint32_t* out) {
    if (i_ + 4 >= s_.size()) return false;
    for (int k = 1; k <= 4; ++k) {
      char h = s_[i_ + k];
      int d = h >= '0' && h <= '9'   ? h - '0'
              : h >= 'a' && h <= 'f' ? h - 'a' + 10
              : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                     : -1;
      if (d < 0) return false;
      *out = (*out << 4) | static_cast<uint32_t>(d);
    }
    i_ += 4;
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
};

/*! packedfun's name of a tvm-ffi type (the names its own typed signatures print). */
std::string_view PFTypeName(std::string_view tvm) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"ffi.String", "str"},
      {"std::string", "str"},
      {"const char*", "str"},
      {"ffi.Bytes", "bytes"},
      {"DLTensor*", "Tensor"},
      {"ffi.Tensor", "Tensor"},
      {"ffi.Shape", "Shape"},
      {"ffi.Function", "Function"},
      {"void*", "ptr"},
      {"DataType", "dtype"},
      {"Device", "Device"},
      {"ffi.Array", "Array"},
      {"ffi.List", "List"},
      {"ffi.Map", "Map"},
      {"ffi.Dict", "Dict"},
      {"ffi.Object", "Object"},
      {"std::vector", "list"},
      {"std::array", "list"},
      {"std::map", "dict"},
      {"std::unordered_map", "dict"},
      {"std::optional", "Optional"},
      {"std::variant", "Variant"},
      {"std::tuple", "Tuple"},
      {"std::function", "Function"},
      {"ffi.BigInt", "int"},
  };
  for (const auto& [from, to] : kNames) {
    if (from == tvm) return to;
  }
  return tvm;  // int, float, bool, None, Any, Optional, Variant, Tuple, Expected, type keys
}

/*! One tvm-ffi type schema node as a packedfun type schema string ("Array[int]"). */
std::string TypeString(const Json& node) {
  const Json* type = node.Get("type");
  if (type == nullptr || type->kind != Json::kString) return "Any";
  std::string out(PFTypeName(type->text));
  const Json* args = node.Get("args");
  // A function type's argument types ("named_args") are not spelled: packedfun names it Function.
  if (args == nullptr || args->kind != Json::kArray || args->items.empty() || out == "Function") {
    return out;
  }
  out += '[';
  for (size_t i = 0; i < args->items.size(); ++i) {
    if (i != 0) out += ", ";
    out += TypeString(args->items[i]);
  }
  return out + ']';
}

}  // namespace

std::string MetadataFromExport(std::string_view exported, const std::string& name) {
  Json outer;
  if (!Reader(exported).Parse(&outer) || outer.kind != Json::kObject) return std::string();
  const Json* text = outer.Get("type_schema");
  Json schema;
  if (text == nullptr || text->kind != Json::kString || !Reader(text->text).Parse(&schema)) {
    return std::string();
  }
  // tvm-ffi 0.1.x: {"type": "ffi.Function", "named_args": {"return": [R], "params": [A...]}};
  // earlier releases: {"type": "ffi.Function", "args": [R, A...]}.
  const Json* ret = nullptr;
  std::vector<const Json*> params;
  if (const Json* named = schema.Get("named_args"); named != nullptr) {
    const Json* r = named->Get("return");
    const Json* p = named->Get("params");
    if (r != nullptr && r->kind == Json::kArray && !r->items.empty()) ret = &r->items[0];
    if (p != nullptr && p->kind == Json::kArray) {
      for (const Json& item : p->items) params.push_back(&item);
    }
  } else if (const Json* args = schema.Get("args"); args != nullptr && args->kind == Json::kArray) {
    for (const Json& item : args->items) {
      if (ret == nullptr) {
        ret = &item;  // the first is the return type
      } else {
        params.push_back(&item);
      }
    }
  } else {
    return std::string();
  }
  std::string out = "{\"name\":" + JsonString(name) + ",\"params\":[";
  for (size_t i = 0; i < params.size(); ++i) {
    // tvm-ffi's schema names no parameters (a producer that adds "name" is honoured).
    const Json* given = params[i]->Get("name");
    std::string pname = given != nullptr && given->kind == Json::kString && !given->text.empty()
                            ? given->text
                            : "arg" + std::to_string(i);
    if (i != 0) out += ',';
    out +=
        "{\"name\":" + JsonString(pname) + ",\"type\":" + JsonString(TypeString(*params[i])) + "}";
  }
  out += "],\"return\":" + JsonString(ret != nullptr ? TypeString(*ret) : std::string("Any"));
  out += ",\"tvm_ffi_type_schema\":" + JsonString(text->text);
  return out + ",\"tvm_ffi_metadata\":" + JsonString(exported) + "}";
}

}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
