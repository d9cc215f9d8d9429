// Function: a reference to a packed function, made from any C++ callable and callable from C++.
#ifndef PACKEDFUN_FUNCTION_H_
#define PACKEDFUN_FUNCTION_H_

#include <packedfun/any.h>
#include <packedfun/c_api.h>
#include <packedfun/detail/function_details.h>
#include <packedfun/error.h>
#include <packedfun/object.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace packedfun {

namespace detail {
template <typename Key, typename T>
void PackOne(const T& value, PFAny* out, PFByteArray* scratch) {
  static_assert(HasTypeTraits<Key>::value,
                "this argument type cannot be passed to a Function (wrap callables with "
                "Function::FromTyped / FromPacked)");
  TypeTraits<Key>::ToView(value, out, scratch);
}

/*! Calls the Function object `func` (borrowed) with plain C++ arguments, packed as views. */
template <typename... Args>
Any CallWithArgs(PFObject* func, const Args&... args) {
  constexpr size_t kNum = sizeof...(Args);
  if constexpr (kNum == 0) {
    return CallFunctionObject(func, nullptr, 0);
  } else {
    PFAny packed[kNum];
    PFByteArray scratch[kNum];
    size_t i = 0;
    ((PackOne<TraitsKey<Args>>(args, packed + i, scratch + i), ++i), ...);
    return CallFunctionObject(func, packed, static_cast<int32_t>(kNum));
  }
}
}  // namespace detail

/*! What a language binding does with its caller's lock (Python's GIL) while a Function runs:
 *  kRelease (the default) lets other threads run and native threads call back; kHold keeps it,
 *  for trivial functions that never block nor call back (the cheapest call). */
enum class GILPolicy : int32_t { kRelease = kPFGILRelease, kHold = kPFGILHold };

/*!
 * A reference to a Function object (kPFTypeFunction): anything callable through the packed
 * convention, whichever language it was written in.
 *
 *   Function add = Function::FromTyped([](int64_t a, int64_t b) { return a + b; }, "mylib.add");
 *   int64_t three = add(1, 2);                      // C++ arguments convert on the way in
 *   Function echo = Function::FromPacked([](PackedArgs args, Any* rv) { *rv = args[0]; });
 */
class Function : public ObjectRef {
 public:
  Function() noexcept = default;

  /*! Wraps `f(PackedArgs args, Any* rv)`: it reads `args[i]` / `args.size()` and sets `*rv`. */
  template <typename F>
  static Function FromPacked(F f) {
    using Record = detail::PackedRecord<F>;
    const void* id = detail::BodyId(f);
    Record* rec = new Record{{id}, std::move(f)};
    return detail::ObjectUnsafe::FromOwned<Function>(detail::CreateFunctionObject(
        rec, &detail::PackedTrampoline<F>, &detail::DeleteRecord<Record>));
  }

  /*! Wraps a callable with a fixed signature (function pointer, lambda, functor). Arguments and
   *  the result convert automatically; a wrong arity or argument type raises a TypeError whose
   *  message starts with `name` (e.g. "mylib.add: argument 1: expected int, got str"). */
  template <typename F>
  static Function FromTyped(F f, std::string name = "<anonymous>") {
    // A named enum result needs the metadata record: its return type is what lets Python hand
    // back the IntEnum member (see reflection::EnumDef).
    using R = typename detail::FunctionSignature<std::decay_t<F>>::Result;
    if constexpr (std::is_enum<R>::value) {
      using Sig = detail::FunctionSignature<std::decay_t<F>>;
      std::string json =
          detail::MetadataJson(name, Sig::TypeSchemas(), ArgList{}, nullptr, Sig::IntRanges());
      Function out = FromTypedNamed(std::move(f), std::move(name), detail::ParamNames());
      detail::SetFunctionMetadata(out.get(), json);
      return out;
    } else {
      return FromTypedNamed(std::move(f), std::move(name), detail::ParamNames());
    }
  }

  /*! As FromTyped(f, name), with the parameters' names and defaults: `{"a", "b"_a = 2}`. The
   *  Function carries its metadata record (names, defaults, type schemas), so Python calls it
   *  with keywords. Throws ValueError when `args` does not name every parameter. */
  template <typename F>
  static Function FromTyped(F f, std::string name, const ArgList& args) {
    using Sig = detail::FunctionSignature<std::decay_t<F>>;
    std::vector<std::string> types = Sig::TypeSchemas();
    std::string json = detail::MetadataJson(name, types, args, nullptr, Sig::IntRanges());
    detail::ParamNames params = detail::MakeParamNames(name, types, args);
    Function out = FromTypedNamed(std::move(f), std::move(name), std::move(params));
    detail::SetFunctionMetadata(out.get(), json);
    return out;
  }

  /*! Sets the GIL policy every caller of this Function sees (see GILPolicy). */
  void SetGILPolicy(GILPolicy policy) const {
    detail::CheckCallResult(PFFunctionSetGILPolicy(get(), static_cast<int32_t>(policy)));
  }
  /*! The GIL policy of this Function. */
  GILPolicy GetGILPolicy() const {
    int32_t policy = kPFGILRelease;
    detail::CheckCallResult(PFFunctionGetGILPolicy(get(), &policy));
    return static_cast<GILPolicy>(policy);
  }

  /*! As FromTyped(f, name), with argument errors naming the parameters as `params` says (no
   *  metadata record: the registry attaches that itself). */
  template <typename F>
  static Function FromTypedNamed(F f, std::string name, detail::ParamNames params) {
    using Record = detail::TypedRecord<F>;
    const void* id = detail::BodyId(f);
    Record* rec = new Record{{id}, std::move(name), std::move(params), std::move(f), nullptr};
    if (!rec->params.names.empty()) rec->named = &rec->params;
    PFObject* obj = detail::CreateFunctionObject(rec, &detail::TypedTrampoline<F>,
                                                 &detail::DeleteRecord<Record>);
    // Not shared yet: the parameters that read a caller's list or dict in place.
    obj->flags |= detail::FunctionSignature<std::decay_t<F>>::ViewArgs()
                  << PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT;
    return detail::ObjectUnsafe::FromOwned<Function>(obj);
  }

  /*! Attaches a metadata record (see PFFunctionSetMetadata) to this Function. */
  void SetMetadata(const std::string& json) const { detail::SetFunctionMetadata(get(), json); }

  /*! The metadata record of this Function as JSON, or nullopt when it has none. */
  std::optional<std::string> GetMetadata() const {
    PFAny out;
    detail::SetPod(&out, kPFTypeNone);
    detail::CheckCallResult(PFFunctionGetMetadata(get(), &out));
    Any owner = detail::AnyUnsafe::MoveFromPFAny(&out);
    if (!detail::AnyIsStr(owner.raw())) return std::nullopt;
    PFByteArray bytes = detail::AnyBytes(owner.raw());
    return std::string(bytes.data, bytes.size);
  }

  /*! Calls the function with plain C++ arguments: `f(1, "x", 2.5)`. Throws Error on failure. */
  template <typename... Args>
  Any operator()(Args&&... args) const {
    return detail::CallWithArgs(get(), args...);
  }

  /*! Calls the function with already packed (borrowed) arguments. */
  Any CallPacked(PackedArgs args) const {
    return detail::CallFunctionObject(get(), args.data(), args.size());
  }

  /*! The global function `name`, or nullopt when none is registered. */
  static std::optional<Function> GetGlobal(std::string_view name) {
    PFByteArray n{name.data(), name.size()};
    PFObject* out = nullptr;
    detail::CheckCallResult(PFFunctionGetGlobal(&n, &out));
    if (out == nullptr) return std::nullopt;
    return detail::ObjectUnsafe::FromOwned<Function>(out);
  }
  /*! The global function `name`; throws ValueError naming it when none is registered. */
  static Function GetGlobalRequired(std::string_view name) {
    std::optional<Function> f = GetGlobal(name);
    if (!f) {
      throw Error("ValueError", "global function '" + std::string(name) + "' is not registered");
    }
    return std::move(*f);
  }
  /*! Registers `f` as `name`. Without `override` an existing name raises ValueError. */
  static void SetGlobal(std::string_view name, const Function& f, bool override = false,
                        const char* doc = nullptr) {
    PFByteArray n{name.data(), name.size()};
    PFByteArray d{doc, doc ? std::char_traits<char>::length(doc) : 0};
    detail::CheckCallResult(PFFunctionSetGlobal(&n, f.get(), override ? 1 : 0, doc ? &d : nullptr));
  }
  /*! Removes `name` from the registry; whether it was there. */
  static bool RemoveGlobal(std::string_view name) {
    PFByteArray n{name.data(), name.size()};
    int removed = 0;
    detail::CheckCallResult(PFFunctionRemoveGlobal(&n, &removed));
    return removed != 0;
  }
  /*! Every registered global name, sorted. */
  static std::vector<std::string> ListGlobalNames() {
    PFAny arr;
    detail::SetPod(&arr, kPFTypeNone);
    detail::CheckCallResult(PFFunctionListGlobalNames(&arr));
    Any owner = detail::AnyUnsafe::MoveFromPFAny(&arr);
    std::vector<std::string> names;
    if (owner.type_index() != kPFTypeArray) return names;
    const PFSeqObject* seq = reinterpret_cast<const PFSeqObject*>(owner.raw().v_obj);
    names.reserve(static_cast<size_t>(seq->size));
    for (int64_t i = 0; i < seq->size; ++i) {
      PFByteArray bytes = detail::AnyBytes(seq->data[i]);
      names.emplace_back(bytes.data, bytes.size);
    }
    return names;
  }

  static constexpr bool _type_is_nullable = false;
  static bool _type_accepts(int32_t type_index) noexcept { return type_index == kPFTypeFunction; }
  static const char* _type_name() noexcept { return "Function"; }
};

/*!
 * A borrowed Function: the object pointer without a reference of its own, so taking, copying and
 * dropping one touches no reference count. Valid only while something else keeps the Function
 * alive, e.g. a call's argument for the duration of that call:
 *
 *   PACKEDFUN_REGISTER_GLOBAL("mylib.twice").set_body_typed([](FunctionView f, int64_t x) {
 *     return f(f(x).cast<int64_t>());
 *   });
 *
 * Keep it past the call by converting it to a Function (`f.ToFunction()`), which takes a reference.
 */
class FunctionView {
 public:
  FunctionView() noexcept = default;
  FunctionView(const Function& f) noexcept : obj_(f.get()) {}  // NOLINT(runtime/explicit)

  /*! Calls the function with plain C++ arguments: `f(1, "x", 2.5)`. Throws Error on failure. */
  template <typename... Args>
  Any operator()(Args&&... args) const {
    return detail::CallWithArgs(obj_, args...);
  }
  /*! Calls the function with already packed (borrowed) arguments. */
  Any CallPacked(PackedArgs args) const {
    return detail::CallFunctionObject(obj_, args.data(), args.size());
  }
  /*! An owning Function (a new reference). */
  Function ToFunction() const { return detail::ObjectUnsafe::FromBorrowed<Function>(obj_); }
  /*! The viewed object (borrowed); null for a default-constructed view. */
  PFObject* get() const noexcept { return obj_; }
  bool defined() const noexcept { return obj_ != nullptr; }

  /*! A view of a borrowed Function object (not checked: the caller vouches for its type). */
  static FunctionView FromBorrowedUnchecked(PFObject* obj) noexcept {
    FunctionView v;
    v.obj_ = obj;
    return v;
  }

 private:
  PFObject* obj_ = nullptr;
};

/*! FunctionView as a typed parameter: the caller's Function, borrowed for the call. */
template <>
struct TypeTraits<FunctionView> {
  static void ToView(const FunctionView& v, PFAny* out, PFByteArray*) {
    detail::SetObject(out, v.get());
  }
  static void ToOwned(const FunctionView& v, PFAny* out) {
    detail::SetObject(out, detail::ObjectUnsafe::MoveToPFObject(v.ToFunction()));
  }
  static std::optional<FunctionView> TryFrom(const PFAny* v) {
    if (v->type_index != kPFTypeFunction) return std::nullopt;
    return FunctionView::FromBorrowedUnchecked(v->v_obj);
  }
  static std::string TypeName() { return "Function"; }
};

}  // namespace packedfun

#endif  // PACKEDFUN_FUNCTION_H_
