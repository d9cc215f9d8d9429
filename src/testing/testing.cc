// The "testing.*" global functions behind packedfun.testing, registered with the C++ API.
#include <packedfun/packedfun.h>

#include <atomic>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

namespace packedfun {
namespace testing {
namespace {

/*! Why the first argument of a packed call is not a Function, thrown out of line: the check
 *  stays a compare and a branch in the caller. */
[[noreturn]] __attribute__((noinline, cold)) void ThrowNotAFunction(PackedArgs args,
                                                                    const char* name) {
  if (args.size() < 1) {
    throw Error("TypeError", std::string(name) + ": expected at least 1 argument, got 0");
  }
  throw Error("TypeError",
              std::string(name) + ": argument 0: expected Function, got " + args[0].type_name());
}

/*! The first argument of a packed call, which must be a Function: borrowed, as the caller keeps it
 *  alive for the whole call (no reference count traffic on the callback path). */
inline FunctionView FunctionArgument(PackedArgs args, const char* name) {
  if (args.size() < 1 || args.data()->type_index != kPFTypeFunction) {
    ThrowNotAFunction(args, name);
  }
  return FunctionView::FromBorrowedUnchecked(args.data()->v_obj);
}

void Apply(PackedArgs args, Any* rv) {
  *rv = FunctionArgument(args, "testing.apply").CallPacked(args.Slice(1));
}

void CallGlobal(PackedArgs args, Any* rv) {
  if (args.size() < 1) throw Error("TypeError", "testing.call_global: expected a name");
  std::optional<std::string_view> name = args.str_view(0);  // borrowed: no copy of the name
  if (!name) {
    throw Error("TypeError",
                "testing.call_global: argument 0: expected str, got " + args[0].type_name());
  }
  *rv = Function::GetGlobalRequired(*name).CallPacked(args.Slice(1));
}

/*! A lambda, so each registration inlines it into its trampoline, whose handler catches the
 *  throw in the same frame (the error benchmark measures this). */
constexpr auto kRaiseError = [](const String& kind, const String& message) {
  throw Error(kind.str(), message.str());
};

// A lambda taking String by value, as the README writes typed bodies (and as the benchmark's peers
// bind theirs): a plain function would be called through a pointer kept in the record.
constexpr auto kStrLen = [](String s) { return static_cast<int64_t>(s.size()); };

void RaiseStdException(const std::string& which) {
  if (which == "out_of_range") throw std::out_of_range("index 7 is out of range");
  if (which == "invalid_argument") throw std::invalid_argument("invalid argument given");
  if (which == "domain_error") throw std::domain_error("outside the domain");
  if (which == "overflow_error") throw std::overflow_error("value overflowed");
  if (which == "runtime_error") throw std::runtime_error("something went wrong");
  if (which == "bad_alloc") throw std::bad_alloc();
  if (which == "int") throw 42;
  throw Error("ValueError", "testing.raise_std_exception: unknown exception '" + which + "'");
}

String MakeString(int64_t n) {
  if (n < 0) throw Error("ValueError", "testing.make_string: n must be >= 0");
  return String(std::string(static_cast<size_t>(n), 'x'));
}

Bytes MakeBytes(int64_t n) {
  if (n < 0) throw Error("ValueError", "testing.make_bytes: n must be >= 0");
  std::string s(static_cast<size_t>(n), '\0');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>(i % 256);
  return Bytes(s);
}

int64_t UseCount(AnyView x) {
  const PFAny& raw = x.raw();
  if (raw.type_index < kPFTypeStaticObjectBegin) return 0;
  return static_cast<int64_t>(__atomic_load_n(&raw.v_obj->ref_count, __ATOMIC_RELAXED));
}

/*! A value C++ keeps between calls (never destroyed: it may hold a Python object at exit). */
struct StoredValue {
  std::mutex mutex;
  Any value;
};
StoredValue& Stored() {
  static StoredValue* stored = new StoredValue();
  return *stored;
}

std::atomic<int64_t> call_count{0};

}  // namespace

PACKEDFUN_REGISTER_GLOBAL("testing.nop")
    .set_body_packed([](PackedArgs, Any*) {})
    .describe("Takes any arguments and returns None.")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.echo")
    .set_body_typed([](AnyView x) { return Any(x); })
    .describe("Returns its argument.")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.apply")
    .set_body_packed(Apply)
    .describe("apply(f, *args): calls f with the remaining arguments.")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.apply_typed")
    .set_body_typed([](FunctionView f) { return f(); })
    .describe(
        "apply_typed(f): calls f with no arguments (a typed body: the callback benchmark's "
        "peer of nanobind's apply).")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.apply_release")
    .set_body_packed(Apply)
    .describe("testing.apply under the default GIL policy (released for the call).");
PACKEDFUN_REGISTER_GLOBAL("testing.call_global")
    .set_body_packed(CallGlobal)
    .describe("call_global(name, *args): looks up a global function by name and calls it.")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.test_raise_error")
    .set_body_typed(kRaiseError)
    .describe("test_raise_error(kind, message): throws Error(kind, message).")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.test_raise_error_release")
    .set_body_typed(kRaiseError)
    .describe("testing.test_raise_error under the default GIL policy (released for the call).");
PACKEDFUN_REGISTER_GLOBAL("testing.raise_std_exception").set_body_typed(RaiseStdException);

PACKEDFUN_REGISTER_GLOBAL("testing.add_int")
    .set_body_typed([](int64_t a, int64_t b) { return a + b; })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.add3_int")
    .set_body_typed([](int64_t a, int64_t b, int64_t c) { return a + b + c; })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.typed_int_only")
    .set_body_typed([](int64_t x) { return x; })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.echo_int32")
    .set_body_typed([](int32_t x) { return x; })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.echo_float")
    .set_body_typed([](double x) { return x; })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.echo_bool")
    .set_body_typed([](bool x) { return x; })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.echo_string")
    .set_body_typed([](String s) { return s; })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.echo_bytes")
    .set_body_typed([](Bytes b) { return b; })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.optional_int")
    .set_body_typed([](std::optional<int64_t> x) { return x; })
    .gil(GILPolicy::kHold);

PACKEDFUN_REGISTER_GLOBAL("testing.str_len").set_body_typed(kStrLen).gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.str_len_release")
    .set_body_typed(kStrLen)
    .describe("testing.str_len under the default GIL policy (released for the call).");
PACKEDFUN_REGISTER_GLOBAL("testing.str_concat")
    .set_body_typed([](const String& a, const String& b) { return String(a.str() + b.str()); })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.bytes_len")
    .set_body_typed([](const Bytes& b) { return static_cast<int64_t>(b.size()); })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.make_string").set_body_typed(MakeString).gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.make_bytes").set_body_typed(MakeBytes).gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.return_invalid_utf8")
    .set_body_typed([]() { return String("\xff\xfe", 2); })
    .describe("Returns a (small) str holding the bytes ff fe, which are not UTF-8.")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.return_invalid_utf8_long")
    .set_body_typed([]() { return String("abcdefgh\xff\xfe", 10); })
    .describe("Returns a str object holding invalid UTF-8 (longer than the small form).")
    .gil(GILPolicy::kHold);

PACKEDFUN_REGISTER_GLOBAL("testing.count_calls")
    .set_body_typed([]() { return ++call_count; })
    .describe("Returns how many times it has been called (1 on the first call).")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.make_adder")
    .set_body_typed([](int64_t k) {
      return Function::FromTyped([k](int64_t x) { return x + k; }, "testing.adder");
    })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.type_index")
    .set_body_typed([](AnyView x) { return static_cast<int64_t>(x.type_index()); })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.type_name")
    .set_body_typed([](AnyView x) { return x.type_name(); })
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.use_count")
    .set_body_typed(UseCount)
    .describe("The reference count of an object argument (0 for values that are not objects).")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.object_use_count")
    .set_body_typed(UseCount)
    .describe("testing.use_count under apache-tvm-ffi's name.")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.store_value").set_body_typed([](AnyView x) {
  std::lock_guard<std::mutex> lock(Stored().mutex);
  Stored().value = x;
});
PACKEDFUN_REGISTER_GLOBAL("testing.load_value").set_body_typed([]() {
  std::lock_guard<std::mutex> lock(Stored().mutex);
  return Stored().value;
});
PACKEDFUN_REGISTER_GLOBAL("testing.clear_value").set_body_typed([]() {
  Any old;
  {
    std::lock_guard<std::mutex> lock(Stored().mutex);
    old.swap(Stored().value);
  }  // released outside the lock: dropping a Python object may run arbitrary code
});

}  // namespace testing
}  // namespace packedfun
