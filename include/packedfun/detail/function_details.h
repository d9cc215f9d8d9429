// Internal: the safe-call trampolines behind packed and typed Functions, and argument conversion.
#ifndef PACKEDFUN_DETAIL_FUNCTION_DETAILS_H_
#define PACKEDFUN_DETAIL_FUNCTION_DETAILS_H_

#include <packedfun/any.h>
#include <packedfun/c_api.h>
#include <packedfun/detail/container_details.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/error.h>
#include <packedfun/signature.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace packedfun {

/*!
 * The arguments of a packed call: `args.size()`, `args[i]` (an AnyView). Borrowed: valid for
 * the duration of the call only; copy what you keep into Any.
 */
class PackedArgs {
 public:
  PackedArgs(const PFAny* data, int32_t size) noexcept : data_(data), size_(size) {}
  int32_t size() const noexcept { return size_; }
  const PFAny* data() const noexcept { return data_; }
  /*! Argument i; throws IndexError when i is out of range. */
  AnyView operator[](int32_t i) const {
    if (static_cast<uint32_t>(i) >= static_cast<uint32_t>(size_)) ThrowIndexError(i);
    return AnyView::FromPFAny(data_[i]);
  }
  /*! Argument i as a string borrowed from the caller (no copy; valid for the call only), or
   *  nullopt when it is not a string. `args[i].as<String>()` copies views instead. */
  std::optional<std::string_view> str_view(int32_t i) const {
    if (static_cast<uint32_t>(i) >= static_cast<uint32_t>(size_)) ThrowIndexError(i);
    if (!detail::AnyIsStr(data_[i])) return std::nullopt;
    PFByteArray bytes = detail::AnyBytes(data_[i]);
    return std::string_view(bytes.data, bytes.size);
  }
  /*! The arguments from `begin` on. */
  PackedArgs Slice(int32_t begin) const noexcept {
    if (begin > size_) begin = size_;
    return PackedArgs(data_ + begin, size_ - begin);
  }

 private:
  [[noreturn]] __attribute__((noinline, cold)) void ThrowIndexError(int32_t i) const {
    throw Error("IndexError", "argument index " + std::to_string(i) + " out of range for " +
                                  std::to_string(size_) + " argument" + (size_ == 1 ? "" : "s"));
  }
  const PFAny* data_;
  int32_t size_;
};

namespace detail {

/*! First member of the `self` record of every Function made by this header, so that two
 *  Functions made by the same trampoline can be compared by the body they wrap. */
struct FunctionRecordHeader {
  const void* body_id;  // the wrapped function pointer, or NULL for a class-type callable
};

template <typename F>
struct PackedRecord {
  FunctionRecordHeader header;
  F f;
};

template <typename F>
struct TypedRecord {
  FunctionRecordHeader header;
  std::string name;
  ParamNames params;  // empty: errors name arguments by position
  F f;
  const ParamNames* named;  // &params, or null when empty: read by every call, so worked out once
};

template <typename F>
const void* BodyId(const F& f) noexcept {
  if constexpr (std::is_pointer<F>::value) {
    return reinterpret_cast<const void*>(f);
  } else {
    (void)f;
    return nullptr;
  }
}

template <typename Record>
void DeleteRecord(void* self) noexcept {
  delete static_cast<Record*>(self);
}

/*! Whether parameters of type T read container views: TypeTraits<T> says so with
 *  `kReadsContainerView` and reads one with `TryFromContainerView` (nullopt: not all plain). */
template <typename T, typename = void>
struct ReadsContainerView : std::false_type {};
template <typename T>
struct ReadsContainerView<T, std::void_t<decltype(TypeTraits<T>::kReadsContainerView)>>
    : std::integral_constant<bool, TypeTraits<T>::kReadsContainerView> {};

/*! The argument bits of PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT (unshifted) for parameters A... */
template <typename... A>
constexpr uint32_t ViewArgBits() {
  constexpr bool reads[] = {false, ReadsContainerView<TraitsKey<A>>::value...};
  uint32_t bits = 0;
  for (size_t i = 0; i < sizeof...(A) && i < PACKEDFUN_FUNCTION_MAX_VIEW_ARGS; ++i) {
    if (reads[i + 1]) bits |= 1u << i;
  }
  return bits;
}

/*! The signature of a callable: function pointers, lambdas, functors (a single operator()). */
template <typename F>
struct FunctionSignature : FunctionSignature<decltype(&F::operator())> {};
template <typename R, typename... A>
struct FunctionSignature<R (*)(A...)> {
  using Result = R;
  static constexpr int32_t kNumArgs = sizeof...(A);
  /*! The parameters that read container views (PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT bits). */
  static constexpr uint32_t ViewArgs() { return ViewArgBits<A...>(); }
  /*! The type schemas of the result, then of each parameter (for the metadata record). */
  static std::vector<std::string> TypeSchemas() { return {TypeSchema<R>(), TypeSchema<A>()...}; }
  /*! Each parameter's integer range name ("int32"; a container's integer elements' range),
   *  NULL for others (the metadata record keeps it, so an int beyond 64 bits is reported against
   *  the parameter's real type). */
  static std::vector<const char*> IntRanges() { return {IntLeafRange<std::decay_t<A>>()...}; }
  template <typename Fn>
  static void Invoke(Fn& f, const char* name, const ParamNames* params, const PFAny* argv,
                     PFAny* result);
};
template <typename R, typename... A>
struct FunctionSignature<R (*)(A...) noexcept> : FunctionSignature<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct FunctionSignature<R (C::*)(A...)> : FunctionSignature<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct FunctionSignature<R (C::*)(A...) const> : FunctionSignature<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct FunctionSignature<R (C::*)(A...) noexcept> : FunctionSignature<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct FunctionSignature<R (C::*)(A...) const noexcept> : FunctionSignature<R (*)(A...)> {};

/*! "<name>: expected N arguments, got M" as a TypeError. */
[[noreturn]] __attribute__((noinline, cold)) inline void ThrowArityError(const char* name,
                                                                         int32_t expected,
                                                                         int32_t got) {
  PFErrorSetRaisedArity(name, expected, got);
  ThrowRaised();
}

/*! How errors name argument i: "mylib.add(a: int, b: int) -> int: argument 'b'" when the
 *  parameters have names, "mylib.add: argument 1" otherwise. */
__attribute__((noinline, cold)) inline std::string ArgumentWhere(const char* name,
                                                                 const ParamNames* params,
                                                                 size_t index) {
  if (params != nullptr && index < params->names.size()) {
    return params->label + ": argument '" + params->names[index] + "'";
  }
  return std::string(name) + ": argument " + std::to_string(index);
}

/*! "<where>: expected T, got X" as a TypeError (or an OverflowError for ints). */
[[noreturn]] __attribute__((noinline, cold)) inline void ThrowArgumentError(
    const char* name, const ParamNames* params, size_t index, std::string (*expected)(),
    const char* range_name, const PFAny& value) {
  bool named = params != nullptr && index < params->names.size();
  PFErrorSetRaisedArgument(name, named ? params->label.c_str() : nullptr,
                           named ? params->names[index].c_str() : nullptr,
                           static_cast<int64_t>(index), expected().c_str(), range_name, &value);
  ThrowRaised();
}

/*! Rethrows the error of a container argument's element as "<where>[3]['k']: expected int, got
 *  str": the element's path follows the argument (a mismatch of the container itself, e.g. its
 *  length, keeps the container's words: "<where>: list[float; 3]: expected 3 items, ..."). */
[[noreturn]] __attribute__((noinline, cold)) inline void ThrowElementInArgument(
    const char* name, const ParamNames* params, size_t index, const ElementError& err) {
  const ElementMismatch& m = err.mismatch();
  std::string where = ArgumentWhere(name, params, index);
  if (m.path.empty()) throw Error(err.kind(), where + ": " + err.message());
  if (!m.overflow.empty()) throw Error("OverflowError", where + m.path + ": " + m.overflow);
  throw Error("TypeError", where + m.path + ": expected " + m.expected + ", got " + m.got);
}

/*! Rethrows another conversion error of argument i as "<where>: ...", keeping its kind (unless
 *  already named). */
[[noreturn]] __attribute__((noinline, cold)) inline void ThrowInArgument(const char* name,
                                                                         const ParamNames* params,
                                                                         size_t index,
                                                                         const Error& err) {
  std::string where = ArgumentWhere(name, params, index);
  std::string message = err.message();
  if (message.compare(0, where.size(), where) == 0) throw err;
  throw Error(err.kind(), where + ": " + message);
}

template <typename T>
T ConvertCell(const PFAny* cell, size_t i, const char* name, const ParamNames* params);

/*! A view that is not all plain: converted as the Array or Map the caller would have passed, so
 *  results and errors are exactly those. The caller's conversion error (materialize) leaves as
 *  it came, outside ConvertCell's rewording. */
template <typename T>
__attribute__((noinline)) T ConvertMaterialized(const PFContainerView* view, size_t i,
                                                const char* name, const ParamNames* params) {
  PFAny made;
  SetPod(&made, kPFTypeNone);
  CheckCallResult(view->vtable->materialize(view, &made));
  Any owner = AnyUnsafe::MoveFromPFAny(&made);
  return ConvertCell<T>(&owner.raw(), i, name, params);
}

/*! Converts argument i to T or throws the argument error. */
template <typename T>
T ConvertArgument(const PFAny* argv, size_t i, const char* name, const ParamNames* params) {
  if constexpr (ReadsContainerView<T>::value) {
    if (argv[i].type_index == kPFTypeContainerView) {
      const auto* view = static_cast<const PFContainerView*>(argv[i].v_ptr);
      std::optional<T> v = TypeTraits<T>::TryFromContainerView(view);
      if (v) return std::move(*v);
      return ConvertMaterialized<T>(view, i, name, params);
    }
  }
  return ConvertCell<T>(argv + i, i, name, params);
}

/*! Converts the value `cell` of argument i to T or throws the argument error. */
template <typename T>
T ConvertCell(const PFAny* cell, size_t i, const char* name, const ParamNames* params) {
  static_assert(HasTryFrom<T>::value,
                "a typed Function parameter must be a type that can be received (int64_t, "
                "double, bool, String, std::string, Bytes, Function, ObjectRef, Any, AnyView, "
                "std::optional<...>, ...): `const char*` cannot, use String");
  std::optional<T> v;
  if constexpr (noexcept(TypeTraits<T>::TryFrom(cell))) {
    v = TypeTraits<T>::TryFrom(cell);
  } else {
    try {  // containers: their element checks throw without the argument's name
      v = TypeTraits<T>::TryFrom(cell);
    } catch (const ElementError& err) {
      ThrowElementInArgument(name, params, i, err);
    } catch (const Error& err) {
      ThrowInArgument(name, params, i, err);
    }
  }
  if (!v) ThrowArgumentError(name, params, i, &TypeTraits<T>::TypeName, IntRangeName<T>(), *cell);
  return std::move(*v);
}

/*! Calls f with already converted arguments. It is a constructor so that the conversions in its
 *  braced argument list run left to right: the first bad argument is the one reported. */
template <typename R>
struct OrderedCall {
  template <typename Fn, typename... T>
  OrderedCall(PFAny* result, Fn& f, T&&... args) {
    if constexpr (std::is_void<R>::value) {
      f(std::forward<T>(args)...);
    } else {
      using Key = TraitsKey<R>;
      static_assert(HasTypeTraits<Key>::value,
                    "the result type of a typed Function has no TypeTraits");
      TypeTraits<Key>::ToOwned(f(std::forward<T>(args)...), result);
    }
  }
};

/*! Whether TypeTraits<T> has the parameter hooks ArgCheck and ArgGet (String, Bytes: they borrow
 *  views instead of copying them; object references: no std::optional on the way). */
template <typename T, typename = void>
struct HasArgHooks : std::false_type {};
template <typename T>
struct HasArgHooks<T, std::void_t<decltype(TypeTraits<T>::ArgCheck(nullptr)),
                                  decltype(TypeTraits<T>::ArgGet(nullptr))>> : std::true_type {};

/*! Whether a type's ArgCheck cannot throw (an object reference's may: its first use registers
 *  the type); types without hooks are checked by their noexcept TryFrom. */
template <typename T, bool = HasArgHooks<T>::value>
struct ArgCheckNothrow : std::true_type {};
template <typename T>
struct ArgCheckNothrow<T, true>
    : std::integral_constant<bool, noexcept(TypeTraits<T>::ArgCheck(nullptr))> {};

template <typename T, typename = void>
struct HasNothrowTryFrom : std::false_type {};
template <typename T>
struct HasNothrowTryFrom<T, std::enable_if_t<noexcept(TypeTraits<T>::TryFrom(nullptr))>>
    : std::true_type {};

/*! The check-then-build access of a parameter type on the fast typed call: every check runs
 *  first, in order (the first bad argument is the one reported), then the builders, which cannot
 *  fail, construct each parameter in place (no copy or move of a borrowed String). Types with
 *  neither hooks nor a noexcept TryFrom of a trivially copyable value take the ordered path. */
template <typename T>
struct ArgAccess {
  static constexpr bool kHooks = HasArgHooks<T>::value;
  static constexpr bool kFast =
      kHooks || (std::is_trivially_copyable<T>::value && HasNothrowTryFrom<T>::value);
  static bool Check(const PFAny* v) noexcept(ArgCheckNothrow<T>::value) {
    if constexpr (kHooks) {
      return TypeTraits<T>::ArgCheck(v);
    } else {
      return TypeTraits<T>::TryFrom(v).has_value();
    }
  }
  static T Get(const PFAny* v) {
    if constexpr (kHooks) {
      return TypeTraits<T>::ArgGet(v);
    } else {
      return *TypeTraits<T>::TryFrom(v);
    }
  }
};

/*! Whether TypeTraits<T> says that T holds the caller's object as it is (kHoldsObjectAsIs). */
template <typename T, typename = void>
struct HoldsObjectAsIs : std::false_type {};
template <typename T>
struct HoldsObjectAsIs<T, std::void_t<decltype(TypeTraits<T>::kHoldsObjectAsIs)>>
    : std::integral_constant<bool, TypeTraits<T>::kHoldsObjectAsIs> {};

/*! A `const T&` parameter (T a reference type holding the object as it is) bound to the caller's
 *  object without a reference of its own: the caller's argument keeps the object alive for the
 *  whole call, and a const reference can only be read or copied (a copy takes its own reference),
 *  so the two atomic reference-count updates per call are spared. The T inside never owns: it is
 *  emptied, not released, when the call ends (also when the body throws). */
template <typename T>
class BorrowedObjectParam {
 public:
  explicit BorrowedObjectParam(PFObject* obj) noexcept : ref_(ObjectUnsafe::FromOwned<T>(obj)) {}
  BorrowedObjectParam(const BorrowedObjectParam&) = delete;
  BorrowedObjectParam& operator=(const BorrowedObjectParam&) = delete;
  ~BorrowedObjectParam() { (void)ObjectUnsafe::MoveToPFObject(std::move(ref_)); }
  operator const T&() const noexcept { return ref_; }  // NOLINT(runtime/explicit)

 private:
  T ref_;
};

/*! How the fast typed call builds parameter A: ArgAccess's builder, or a borrowed object for a
 *  `const T&` parameter whose T holds the object as it is. */
template <typename A, typename = void>
struct ParamAccess {
  static TraitsKey<A> Get(const PFAny* v) { return ArgAccess<TraitsKey<A>>::Get(v); }
};
template <typename A>
struct ParamAccess<A, std::enable_if_t<std::is_lvalue_reference<A>::value &&
                                       std::is_const<std::remove_reference_t<A>>::value &&
                                       HoldsObjectAsIs<TraitsKey<A>>::value>> {
  static BorrowedObjectParam<TraitsKey<A>> Get(const PFAny* v) noexcept {
    return BorrowedObjectParam<TraitsKey<A>>(TypeTraits<TraitsKey<A>>::ArgObject(v));
  }
};

/*! Finds the first argument that fails its check (in order) and throws its error. */
template <typename... K>
[[noreturn]] __attribute__((noinline, cold)) void ThrowFirstBadArgument(const char* name,
                                                                        const ParamNames* params,
                                                                        const PFAny* argv) {
  (void)params;
  size_t i = 0;
  (void)((ArgAccess<K>::Check(argv + i)
              ? (++i, true)
              : (ThrowArgumentError(name, params, i, &TypeTraits<K>::TypeName, IntRangeName<K>(),
                                    argv[i]),
                 false)) &&
         ...);
  throw Error("TypeError", std::string(name) + ": invalid arguments");  // (not reached)
}

/*! Forced inline, as Invoke, into SafeCallTyped: GCC -O2 leaves it out of line when the callable
 *  is a function reference (an exported function's), a call and a frame more per call. */
template <typename R, typename... A, typename Fn, size_t... I>
__attribute__((always_inline)) inline void InvokeWithIndices(Fn& f, const char* name,
                                                             const ParamNames* params,
                                                             const PFAny* argv, PFAny* result,
                                                             std::index_sequence<I...>) {
  (void)argv;
  (void)name;
  (void)params;
  if constexpr ((ArgAccess<TraitsKey<A>>::kFast && ...)) {
    if (!(ArgAccess<TraitsKey<A>>::Check(argv + I) && ...)) {
      ThrowFirstBadArgument<TraitsKey<A>...>(name, params, argv);
    }
    // Each parameter is initialized straight from its builder's prvalue (guaranteed elision).
    if constexpr (std::is_void<R>::value) {
      f(ParamAccess<A>::Get(argv + I)...);
    } else {
      using Key = TraitsKey<R>;
      static_assert(HasTypeTraits<Key>::value,
                    "the result type of a typed Function has no TypeTraits");
      TypeTraits<Key>::ToOwned(f(ParamAccess<A>::Get(argv + I)...), result);
    }
  } else {
    OrderedCall<R>{result, f, ConvertArgument<TraitsKey<A>>(argv, I, name, params)...};
  }
}

template <typename R, typename... A>
template <typename Fn>
__attribute__((always_inline)) inline void FunctionSignature<R (*)(A...)>::Invoke(
    Fn& f, const char* name, const ParamNames* params, const PFAny* argv, PFAny* result) {
  InvokeWithIndices<R, A...>(f, name, params, argv, result, std::index_sequence_for<A...>());
}

/*! Stores a caught Error in the slot. Catching Error by type right where the call is made spares
 *  SetRaisedFromCurrentException's rethrow, which would unwind a second time; the exception
 *  object is destroyed when the handler ends, so its reference moves to the slot (no count
 *  update either way). */
__attribute__((noinline, cold)) inline int SetRaisedFromError(Error& e) noexcept {
  e.MoveToRaised();
  return -1;
}

/*! The whole typed call: arity check, conversions, the call, the result; errors to the slot.
 *  `params` (NULL: none) names the parameters in argument errors. Forced inline into its one
 *  caller (the trampoline or the exported entry of that F): left out of line, a -fPIC library
 *  without hidden visibility reaches it through the PLT on every call. */
template <typename F>
__attribute__((always_inline)) inline int SafeCallTyped(F&& f, const char* name,
                                                        const ParamNames* params, const PFAny* args,
                                                        int32_t num_args, PFAny* result) {
  using Sig = FunctionSignature<std::decay_t<F>>;
  try {
    if (num_args != Sig::kNumArgs) ThrowArityError(name, Sig::kNumArgs, num_args);
    Sig::Invoke(f, name, params, args, result);
    return 0;
  } catch (Error& e) {
    return SetRaisedFromError(e);
  } catch (...) {
    PACKEDFUN_RETHROW_FORCED_UNWIND
    return SetRaisedFromCurrentException();
  }
}

/*! The whole packed call: f(PackedArgs, Any*); errors to the slot. Inline as SafeCallTyped. */
template <typename F>
__attribute__((always_inline)) inline int SafeCallPacked(F&& f, const PFAny* args, int32_t num_args,
                                                         PFAny* result) {
  try {
    Any rv;
    f(PackedArgs(args, num_args), &rv);
    AnyUnsafe::MoveToPFAny(std::move(rv), result);
    return 0;
  } catch (Error& e) {
    return SetRaisedFromError(e);
  } catch (...) {
    PACKEDFUN_RETHROW_FORCED_UNWIND
    return SetRaisedFromCurrentException();
  }
}

template <typename F>
int TypedTrampoline(void* self, const PFAny* args, int32_t num_args, PFAny* result) {
  TypedRecord<F>* rec = static_cast<TypedRecord<F>*>(self);
  return SafeCallTyped(rec->f, rec->name.c_str(), rec->named, args, num_args, result);
}

template <typename F>
int PackedTrampoline(void* self, const PFAny* args, int32_t num_args, PFAny* result) {
  return SafeCallPacked(static_cast<PackedRecord<F>*>(self)->f, args, num_args, result);
}

/*! Wraps `self` (freed by `deleter`, also when creation fails) as a new Function object. */
inline PFObject* CreateFunctionObject(void* self, PFSafeCall call, void (*deleter)(void*)) {
  PFObject* out = nullptr;
  // PFFunctionCreate owns `self` from the call on: on failure it has already run `deleter`.
  if (PFFunctionCreate(self, call, deleter, &out) != 0) {
    ThrowRaised();
  }
  return out;
}

/*! Calls `func` with borrowed `args`, returning the owned result or throwing the error. */
inline Any CallFunctionObject(PFObject* func, const PFAny* args, int32_t num_args) {
  if (func == nullptr) throw Error("ValueError", "cannot call a null Function");
  const PFFunctionObject* f = reinterpret_cast<const PFFunctionObject*>(func);
  PFAny rv;
  SetPod(&rv, kPFTypeNone);
  if (f->safe_call(f->self, args, num_args, &rv) != 0) ThrowRaised();
  return AnyUnsafe::MoveFromPFAny(&rv);
}

/*! Whether two Functions made by the same trampoline wrap the same body. */
inline bool SameFunctionBody(PFObject* a, PFObject* b) noexcept {
  const PFFunctionObject* fa = reinterpret_cast<const PFFunctionObject*>(a);
  const PFFunctionObject* fb = reinterpret_cast<const PFFunctionObject*>(b);
  if (fa->safe_call != fb->safe_call) return false;
  return static_cast<const FunctionRecordHeader*>(fa->self)->body_id ==
         static_cast<const FunctionRecordHeader*>(fb->self)->body_id;
}

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_FUNCTION_DETAILS_H_
