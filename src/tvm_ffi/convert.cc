// Apache TVM FFI bridge: values translated between packedfun's and tvm-ffi's ABIs (both ways).
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/error.h"
#include "runtime/module.h"
#include "runtime/object.h"
#include "runtime/seq.h"
#include "runtime/string.h"
#include "tvm_ffi/bridge.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

/*! A tvm-ffi value (new ref in tvm-ffi's terms) whose object `temps` releases after the call. */
void KeepResult(PFAny value, PFAny* out, Temps* temps) {
  if (value.type_index >= kPFTypeStaticObjectBegin) temps->KeepTVM(value.v_obj);
  *out = value;
}

void CheckTVM(int rc, const char* what) {
  if (rc != 0) {
    RaiseFromTVM(what);
    throw AlreadyRaised{};
  }
}

/*! tvm-ffi's string (small or object) holding a copy of `bytes`. */
void NewTVMString(const PFByteArray& bytes, PFAny* out, Temps* temps) {
  PFAny value = NoneAny();
  CheckTVM(GetApi().StringFromByteArray(&bytes, &value), "ffi.String");
  KeepResult(value, out, temps);
}

void NewTVMBytes(const PFByteArray& bytes, PFAny* out, Temps* temps) {
  PFAny value = NoneAny();
  CheckTVM(GetApi().BytesFromByteArray(&bytes, &value), "ffi.Bytes");
  KeepResult(value, out, temps);
}

/*! A str argument: TextToTVM when it applies (raw strings only where borrowed kinds may be used),
 *  else a temporary tvm-ffi String. */
void StrToTVM(const PFByteArray& bytes, PFAny* out, Temps* temps, bool borrowed) {
  size_t no_room = 0;  // no buffer: small strings only
  if (borrowed ? temps->Text(bytes, out) : TextToTVM(bytes, out, nullptr, 0, &no_room)) return;
  NewTVMString(bytes, out, temps);
}

/*! A packedfun Tensor (borrowed) as a tvm-ffi Tensor sharing its memory: tvm-ffi's Tensor holds a
 *  DLPack export of the packedfun one, so it keeps the producer alive as long as it lives. */
void TensorObjectToTVM(PFObject* tensor, PFAny* out, Temps* temps) {
  DLManagedTensorVersioned* managed = nullptr;
  CheckCall(PFTensorToDLPackVersioned(tensor, &managed));
  void* handle = nullptr;
  if (GetApi().TensorFromDLPackVersioned(managed, 0, 0, &handle) != 0) {
    if (managed->deleter != nullptr) managed->deleter(managed);
    CheckTVM(-1, "ffi.Tensor");
  }
  temps->KeepTVM(handle);
  *out = NoneAny();
  out->type_index = kTensor;
  out->v_obj = static_cast<PFObject*>(handle);
}

void TensorToTVM(const PFAny& in, PFAny* out, Temps* temps, ToTVMOptions options) {
  if (in.type_index == kPFTypeTensor && !options.tensor_objects) {
    *out = NoneAny();
    out->type_index = kPFTypeDLTensorPtr;
    out->v_ptr = &As<PFTensorObject>(in.v_obj)->tensor;
    return;
  }
  if (in.type_index == kPFTypeTensor) return TensorObjectToTVM(in.v_obj, out, temps);
  const DLTensor* t = static_cast<const DLTensor*>(in.v_ptr);
  if (t == nullptr) Throw("TypeError", "a NULL DLTensor*");
  if (options.tensor_objects) {
    // A promotable argument's Tensor owns its producer; a plain DLTensor* borrows the data.
    PFAny owned = NoneAny();
    ViewToOwned(in, &owned);
    temps->KeepPF(owned);
    return TensorObjectToTVM(owned.v_obj, out, temps);
  }
  *out = NoneAny();
  out->type_index = kPFTypeDLTensorPtr;
  out->v_ptr =
      (t->ndim > 0 && t->strides == nullptr) ? temps->NewTensorCopy(*t) : const_cast<DLTensor*>(t);
}

/*! Items of a packedfun sequence or map, each translated as a container element. */
std::vector<PFAny> ItemsToTVM(const PFAny* items, int64_t n, Temps* temps, ToTVMOptions options) {
  std::vector<PFAny> out(static_cast<size_t>(n), NoneAny());
  // tvm-ffi containers own their elements: no borrowed kinds, tensors as objects.
  ToTVMOptions element{true, true};
  (void)options;
  for (int64_t i = 0; i < n; ++i) ToTVM(items[i], &out[i], temps, element, "container element");
  return out;
}

void SeqToTVM(const PFAny& in, PFAny* out, Temps* temps, ToTVMOptions options) {
  const PFSeqObject* seq = As<PFSeqObject>(in.v_obj);
  std::vector<PFAny> items = ItemsToTVM(seq->data, seq->size, temps, options);
  PFAny value = NoneAny();
  CallGlobal(in.type_index == kPFTypeArray ? "ffi.Array" : "ffi.List", items.data(),
             static_cast<int32_t>(items.size()), &value);
  KeepResult(value, out, temps);
}

void MapToTVM(const PFAny& in, PFAny* out, Temps* temps, ToTVMOptions options) {
  PFAny kv = NoneAny();
  CheckCall(PFMapItems(in.v_obj, &kv));
  temps->KeepPF(kv);
  const PFSeqObject* seq = As<PFSeqObject>(kv.v_obj);
  std::vector<PFAny> items = ItemsToTVM(seq->data, seq->size, temps, options);
  PFAny value = NoneAny();
  CallGlobal(in.type_index == kPFTypeMap ? "ffi.Map" : "ffi.Dict", items.data(),
             static_cast<int32_t>(items.size()), &value);
  KeepResult(value, out, temps);
}

void ShapeToTVM(const PFAny& in, PFAny* out, Temps* temps) {
  const PFShapeObject* shape = As<PFShapeObject>(in.v_obj);
  std::vector<PFAny> dims(static_cast<size_t>(shape->size), NoneAny());
  for (int64_t i = 0; i < shape->size; ++i) {
    dims[i].type_index = kPFTypeInt;
    dims[i].v_int64 = shape->data[i];
  }
  PFAny value = NoneAny();
  CallGlobal("ffi.Shape", dims.data(), static_cast<int32_t>(dims.size()), &value);
  KeepResult(value, out, temps);
}

void FunctionToTVM(const PFAny& in, PFAny* out, Temps* temps) {
  void* handle = nullptr;
  if (!UnwrapFunction(in.v_obj, &handle)) {
    handle = WrapFunction(in.v_obj);
    temps->KeepTVM(handle);
  }
  *out = NoneAny();
  out->type_index = kFunction;
  out->v_obj = static_cast<PFObject*>(handle);
}

[[noreturn]] void NoEquivalent(int32_t type_index, const char* what) {
  std::string name = "type index " + std::to_string(type_index);
  const PFTypeInfo* info = nullptr;
  if (PFTypeGetInfo(type_index, &info) == 0) {
    name = std::string(info->type_key.data, info->type_key.size);
  } else {
    PFObject* ignored = nullptr;
    PFErrorMoveFromRaised(&ignored);
    DecRef(ignored);
  }
  Throw("TypeError", std::string("cannot pass ") + what + " of type '" + name +
                         "' to tvm-ffi: it has no tvm-ffi equivalent");
}

/*! Bytes of a packedfun string or bytes value in any of its forms. */
PFByteArray BytesOf(const PFAny& in) {
  switch (in.type_index) {
    case kPFTypeRawStr:
      return PFByteArray{in.v_c_str, std::strlen(in.v_c_str)};
    case kPFTypeStrView:
    case kPFTypeBytesView:
      return *static_cast<const PFByteArray*>(in.v_ptr);
    case kPFTypeSmallStr:
    case kPFTypeSmallBytes:
      return PFByteArray{in.v_bytes, in.small_len};
    default:
      return As<PFBytesObject>(in.v_obj)->bytes;
  }
}

void StringToTVM(const PFAny& in, PFAny* out, Temps* temps, ToTVMOptions options) {
  PFByteArray bytes = BytesOf(in);
  if (in.type_index == kPFTypeRawStr && !options.owned_kinds) {
    *out = in;
    return;
  }
  // A String object's bytes are NUL-terminated: without an inner NUL they pass as a raw string.
  if (in.type_index == kPFTypeString && !options.owned_kinds &&
      std::memchr(bytes.data, 0, bytes.size) == nullptr) {
    *out = NoneAny();
    out->type_index = kPFTypeRawStr;
    out->v_c_str = bytes.data;
    return;
  }
  StrToTVM(bytes, out, temps, !options.owned_kinds);
}

void BytesToTVM(const PFAny& in, PFAny* out, Temps* temps, ToTVMOptions options) {
  if (options.owned_kinds) return NewTVMBytes(BytesOf(in), out, temps);
  *out = NoneAny();
  out->type_index = kByteArrayPtr;  // zero-copy: PFByteArray and TVMFFIByteArray are alike
  out->v_ptr = in.type_index == kPFTypeBytesView
                   ? in.v_ptr
                   : static_cast<void*>(&As<PFBytesObject>(in.v_obj)->bytes);
}

/*! Reads a tvm-ffi Map or Dict through its forward iterator. */
void MapToPF(const PFAny& in, PFAny* out, const char* what) {
  bool dict = in.type_index == kDict;
  PFAny size = NoneAny();
  CallGlobal(dict ? "ffi.DictSize" : "ffi.MapSize", &in, 1, &size);
  PFAny functor = NoneAny();
  CallGlobal(dict ? "ffi.DictForwardIterFunctor" : "ffi.MapForwardIterFunctor", &in, 1, &functor);
  std::vector<PFAny> kv;
  int rc = Guard([&] {
    for (int64_t i = 0; i < size.v_int64; ++i) {
      for (int64_t command = 0; command < 3; ++command) {
        PFAny arg = NoneAny();
        arg.type_index = kPFTypeInt;
        arg.v_int64 = command;
        PFAny item = NoneAny();
        CallTVMFunction(functor.v_obj, &arg, 1, &item);
        if (command < 2) {
          kv.push_back(NoneAny());
          int item_rc = Guard([&] {
            ToPF(item, &kv.back(), what);
            return 0;
          });
          ReleaseTVM(&item);
          if (item_rc != 0) throw AlreadyRaised{};
        }
      }
    }
    return (dict ? PFDictCreate : PFMapCreate)(kv.data(), static_cast<int64_t>(kv.size() / 2), out);
  });
  for (PFAny& v : kv) ReleaseAny(&v);
  ReleaseTVM(&functor);
  if (rc != 0) throw AlreadyRaised{};
}

void SeqToPF(const PFAny& in, PFAny* out, const char* what) {
  const SeqCell* cell = Cell<SeqCell>(in.v_obj);
  PFSeqObject* seq = NewSeq(in.type_index == kArray ? kPFTypeArray : kPFTypeList, cell->size);
  PFAny result = ObjectAny(&seq->header);
  int rc = Guard([&] {
    for (int64_t i = 0; i < cell->size; ++i) {
      PFAny item = NoneAny();
      ToPF(cell->data[i], &item, what);
      SeqPush(seq, item);
    }
    return 0;
  });
  if (rc != 0) {
    ReleaseAny(&result);
    throw AlreadyRaised{};
  }
  *out = result;
}

void TensorToPF(const PFAny& in, PFAny* out) {
  DLManagedTensorVersioned* managed = nullptr;
  CheckTVM(GetApi().TensorToDLPackVersioned(in.v_obj, &managed), "ffi.Tensor");
  PFObject* tensor = nullptr;
  CheckCall(PFTensorFromDLPackVersioned(managed, &tensor));  // stolen, even on failure
  *out = ObjectAny(tensor);
}

/*! Whether tvm-ffi type `type_index` is ffi.Module or derives from it (a library module). */
bool IsModule(int32_t type_index) {
  if (type_index == kModule) return true;
  const TypeInfo* info = GetApi().GetTypeInfo(type_index);
  return info != nullptr && info->type_depth >= 2 && info->type_ancestors[1]->type_index == kModule;
}

void ObjectToPF(const PFAny& in, PFAny* out, const char* what) {
  switch (in.type_index) {
    case kStr:
      *out = MakeStringAny(
          std::string_view(Cell<PFByteArray>(in.v_obj)->data, Cell<PFByteArray>(in.v_obj)->size));
      return;
    case kBytes:
      *out = MakeBytesAny(
          std::string_view(Cell<PFByteArray>(in.v_obj)->data, Cell<PFByteArray>(in.v_obj)->size));
      return;
    case kError: {
      const ErrorCell* cell = Cell<ErrorCell>(in.v_obj);
      std::string frames = BacktraceFromTVM({cell->backtrace.data, cell->backtrace.size});
      PFByteArray backtrace{frames.data(), frames.size()};
      *out = ObjectAny(NewError(std::string_view(cell->kind.data, cell->kind.size),
                                std::string_view(cell->message.data, cell->message.size),
                                &backtrace, nullptr));
      return;
    }
    case kFunction: {
      PFObject* original = nullptr;
      if (UnwrapTrampoline(in.v_obj, &original)) {  // a packedfun Function comes back as itself
        IncRef(original);
        *out = ObjectAny(original);
        return;
      }
      GetApi().ObjectIncRef(in.v_obj);
      *out = ObjectAny(NewFunction(Cell<FunctionCell>(in.v_obj)->safe_call, in.v_obj, nullptr,
                                   "<tvm-ffi Function>"));
      return;
    }
    case kShape: {
      const ShapeCell* cell = Cell<ShapeCell>(in.v_obj);
      *out = ObjectAny(NewShape(cell->data, static_cast<int64_t>(cell->size)));
      return;
    }
    case kTensor:
      return TensorToPF(in, out);
    case kArray:
    case kList:
      return SeqToPF(in, out, what);
    case kMap:
    case kDict:
      return MapToPF(in, out, what);
    default:
      if (IsModule(in.type_index)) {  // a packedfun Module whose functions come through tvm-ffi
        GetApi().ObjectIncRef(in.v_obj);
        *out = ObjectAny(NewForeignModule(in, "<tvm-ffi Module>"));
        return;
      }
      return ObjectToProxy(in, out);  // a type of tvm-ffi's own reflection (a library's)
  }
}

}  // namespace

Temps::~Temps() {
  for (auto it = tvm_more_.rbegin(); it != tvm_more_.rend(); ++it) GetApi().ObjectDecRef(*it);
  for (size_t i = num_tvm_; i-- > 0;) GetApi().ObjectDecRef(tvm_inline_[i]);
  for (PFAny& v : pf_) ReleaseAny(&v);
}

bool TextToTVM(const PFByteArray& bytes, PFAny* out, char* buffer, size_t capacity,
               size_t* used) noexcept {
  if (bytes.size <= 7) {
    *out = NoneAny();
    out->type_index = kPFTypeSmallStr;
    out->small_len = static_cast<uint32_t>(bytes.size);
    if (bytes.size != 0) std::memcpy(out->v_bytes, bytes.data, bytes.size);
    return true;
  }
  if (bytes.size >= capacity - *used || std::memchr(bytes.data, 0, bytes.size) != nullptr) {
    return false;
  }
  char* text = buffer + *used;
  std::memcpy(text, bytes.data, bytes.size);
  text[bytes.size] = '\0';
  *used += bytes.size + 1;
  *out = NoneAny();
  out->type_index = kPFTypeRawStr;
  out->v_c_str = text;
  return true;
}

DLTensor* Temps::NewTensorCopy(const DLTensor& t) {
  auto copy = std::make_unique<TensorCopy>();
  copy->tensor = t;
  copy->strides.resize(static_cast<size_t>(t.ndim));
  int64_t stride = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    copy->strides[i] = stride;
    stride *= t.shape[i];
  }
  copy->tensor.strides = copy->strides.data();
  copies_.push_back(std::move(copy));
  return &copies_.back()->tensor;
}

void ToTVM(const PFAny& in, PFAny* out, Temps* temps, ToTVMOptions options, const char* what) {
  switch (in.type_index) {
    case kPFTypeNone:
    case kPFTypeInt:
    case kPFTypeBool:
    case kPFTypeFloat:
    case kPFTypeOpaquePtr:
    case kPFTypeDataType:
    case kPFTypeDevice:
    case kPFTypeSmallStr:
    case kPFTypeSmallBytes:
      *out = in;
      return;
    case kPFTypeDLTensorPtr:
    case kPFTypeTensor:
      return TensorToTVM(in, out, temps, options);
    case kPFTypeRawStr:
    case kPFTypeStrView:
    case kPFTypeString:
      return StringToTVM(in, out, temps, options);
    case kPFTypeBytesView:
    case kPFTypeBytes:
      return BytesToTVM(in, out, temps, options);
    case kPFTypeFunction:
      return FunctionToTVM(in, out, temps);
    case kPFTypeShape:
      return ShapeToTVM(in, out, temps);
    case kPFTypeArray:
    case kPFTypeList:
      return SeqToTVM(in, out, temps, options);
    case kPFTypeMap:
    case kPFTypeDict:
      return MapToTVM(in, out, temps, options);
    case kPFTypeModule:
      if (ModuleForeignState(in.v_obj)->type_index >= kPFTypeStaticObjectBegin) {  // tvm-ffi's
        *out = *ModuleForeignState(in.v_obj);
        return;
      }
      NoEquivalent(in.type_index, what);
    default:
      // A tvm-ffi object that crossed into packedfun goes back as itself.
      if (IsObjectIndex(in.type_index) && ProxyToTVM(in.v_obj, out)) return;
      NoEquivalent(in.type_index, what);
  }
}

void ToPF(const PFAny& in, PFAny* out, const char* what) {
  int32_t t = in.type_index;
  if ((t >= 0 && t <= kPFTypeDevice) || t == kPFTypeSmallStr || t == kPFTypeSmallBytes) {
    *out = in;
    return;
  }
  if (t == kPFTypeDLTensorPtr) return ViewToOwned(in, out);
  if (t == kPFTypeRawStr) {
    *out = MakeStringAny(in.v_c_str);
    return;
  }
  if (t == kByteArrayPtr) {
    const PFByteArray* bytes = static_cast<const PFByteArray*>(in.v_ptr);
    *out = MakeBytesAny(std::string_view(bytes->data, bytes->size));
    return;
  }
  if (t >= kPFTypeStaticObjectBegin) return ObjectToPF(in, out, what);
  Throw("TypeError", std::string("tvm-ffi ") + what + " of type index " + std::to_string(t) +
                         " has no packedfun equivalent");
}

}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
