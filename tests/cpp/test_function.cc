// Tests of Function: typed and packed wrappers, conversions, exact TypeErrors, C++ calls,
// lifetimes.
#include <gtest/gtest.h>
#include "catch_error.h"
#include <packedfun/packedfun.h>

#include <new>
#include <stdexcept>
#include <string>

namespace {

using packedfun::Any;
using packedfun::AnyView;
using packedfun::Bytes;
using packedfun::Error;
using packedfun::Function;
using packedfun::PackedArgs;
using packedfun::String;

int64_t Add(int64_t a, int64_t b) { return a + b; }

TEST(Function, TypedFromFunctionPointer) {
  Function add = Function::FromTyped(Add, "mylib.add");
  EXPECT_EQ(add.type_index(), kPFTypeFunction);
  EXPECT_EQ(add(1, 2).cast<int64_t>(), 3);
  int64_t r = add(40, true);  // bool is accepted where int is expected
  EXPECT_EQ(r, 41);
}

TEST(Function, TypedFromLambdasAndFunctors) {
  int base = 10;
  Function f = Function::FromTyped([base](int x, double y) { return base + x + y; });
  EXPECT_DOUBLE_EQ(f(1, 0.5).cast<double>(), 11.5);
  struct Functor {
    std::string operator()(const String& s) const { return s.str() + "!"; }
  };
  Function g = Function::FromTyped(Functor(), "functor");
  EXPECT_EQ(g("hey").cast<std::string>(), "hey!");
  Function v = Function::FromTyped([]() {});
  EXPECT_TRUE(v().is_none());
  Function mut = Function::FromTyped([n = 0]() mutable { return ++n; });
  EXPECT_EQ(mut().cast<int>(), 1);
  EXPECT_EQ(mut().cast<int>(), 2);
}

TEST(Function, ArgumentErrorsNameTheParameter) {
  using namespace packedfun::literals;  // NOLINT(build/namespaces)
  Function add = Function::FromTyped(Add, "mylib.add", {"a", "b"_a = 2});
  Error e = Catch([&] { add(1, "x"); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(), "mylib.add(a: int, b: int) -> int: argument 'b': expected int, got str");
  Function sum = Function::FromTyped(
      [](packedfun::Array<int64_t> xs, int32_t k) { return static_cast<int64_t>(xs.size()) + k; },
      "mylib.sum", {"xs", "k"});
  Error deep = Catch([&] { sum(packedfun::Array<Any>({Any(1), Any("s")}), 0); });
  EXPECT_EQ(deep.message(),
            "mylib.sum(xs: Array[int], k: int) -> int: argument 'xs'[1]: expected int, got str");
  Error range = Catch([&] { sum(packedfun::Array<Any>(), int64_t{1} << 40); });
  EXPECT_EQ(range.kind(), "OverflowError");
  EXPECT_EQ(range.message(),
            "mylib.sum(xs: Array[int], k: int) -> int: argument 'k': value 1099511627776 does not "
            "fit in int32");
}

TEST(Function, ExactArgumentTypeError) {
  Function add = Function::FromTyped(Add, "mylib.add");
  Error e = Catch([&] { add(1, "x"); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(), "mylib.add: argument 1: expected int, got str");
  Error first = Catch([&] { add(2.5, "x"); });  // the first bad argument is reported
  EXPECT_EQ(first.message(), "mylib.add: argument 0: expected int, got float");
  Error none = Catch([&] { add(nullptr, 1); });
  EXPECT_EQ(none.message(), "mylib.add: argument 0: expected int, got None");
}

TEST(Function, ExactArityError) {
  Function add = Function::FromTyped(Add, "mylib.add");
  Error e = Catch([&] { add(1, 2, 3); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(), "mylib.add: expected 2 arguments, got 3");
  Function one = Function::FromTyped([](int64_t x) { return x; }, "one");
  EXPECT_EQ(Catch([&] { one(); }).message(), "one: expected 1 argument, got 0");
}

TEST(Function, OtherTypeErrors) {
  Function f = Function::FromTyped([](Function, String, Bytes) {}, "mylib.f");
  Function self = f;
  EXPECT_EQ(Catch([&] { f(1, "s", Bytes("b", 1)); }).message(),
            "mylib.f: argument 0: expected Function, got int");
  EXPECT_EQ(Catch([&] { f(self, 2, Bytes("b", 1)); }).message(),
            "mylib.f: argument 1: expected str, got int");
  EXPECT_EQ(Catch([&] { f(self, "s", "not bytes"); }).message(),
            "mylib.f: argument 2: expected bytes, got str");
  Function narrow = Function::FromTyped([](int32_t x) { return x; }, "mylib.narrow");
  Error o = Catch([&] { narrow(int64_t{1} << 40); });
  EXPECT_EQ(o.kind(), "OverflowError");
  EXPECT_EQ(o.message(), "mylib.narrow: argument 0: value 1099511627776 does not fit in int32");
}

TEST(Function, OptionalAndAnyParameters) {
  Function f =
      Function::FromTyped([](std::optional<int64_t> x) { return x ? *x * 2 : int64_t{-1}; }, "opt");
  EXPECT_EQ(f(nullptr).cast<int64_t>(), -1);
  EXPECT_EQ(f(4).cast<int64_t>(), 8);
  Function kind = Function::FromTyped([](AnyView v) { return v.type_name(); }, "kind");
  EXPECT_EQ(kind(1).cast<std::string>(), "int");
  EXPECT_EQ(kind("s").cast<std::string>(), "str");
  EXPECT_EQ(kind(std::string("s")).cast<std::string>(), "str");
  EXPECT_EQ(kind(kind).cast<std::string>(), "Function");
  EXPECT_EQ(kind(Bytes("b", 1)).cast<std::string>(), "bytes");
}

TEST(Function, PackedFunctions) {
  Function sum = Function::FromPacked([](PackedArgs args, Any* rv) {
    int64_t total = 0;
    for (int32_t i = 0; i < args.size(); ++i) total += args[i].cast<int64_t>();
    *rv = total;
  });
  EXPECT_EQ(sum().cast<int64_t>(), 0);
  EXPECT_EQ(sum(1, 2, 3, 4).cast<int64_t>(), 10);
  Function echo = Function::FromPacked([](PackedArgs args, Any* rv) { *rv = args[0]; });
  EXPECT_EQ(echo(std::string("a borrowed view, copied")).cast<std::string>(),
            "a borrowed view, copied");
  EXPECT_EQ(Catch([&] { echo(); }).kind(), "IndexError");
  Function seed = Function::FromPacked([](PackedArgs args, Any* rv) {
    int a = args[0];
    int b = args[1];
    *rv = a + b;
  });
  EXPECT_EQ(seed(2, 3).cast<int>(), 5);
}

TEST(Function, CallWithPlainArguments) {
  Function types = Function::FromPacked([](PackedArgs args, Any* rv) {
    std::string out;
    for (int32_t i = 0; i < args.size(); ++i) out += args[i].type_name() + ",";
    *rv = out;
  });
  int x = 0;
  std::string s = types(1, "x", 2.5, true, nullptr, static_cast<void*>(&x), String("long string"),
                        DLDataType{kDLInt, 8, 1}, DLDevice{kDLCPU, 0});
  EXPECT_EQ(s, "int,str,float,bool,None,ptr,str,dtype,Device,");
}

TEST(Function, FunctionsAsArgumentsAndResults) {
  Function apply =
      Function::FromTyped([](Function f, int64_t x) { return f(x).cast<int64_t>() * 10; }, "apply");
  Function inc = Function::FromTyped([](int64_t x) { return x + 1; }, "inc");
  EXPECT_EQ(apply(inc, 4).cast<int64_t>(), 50);
  Function make_adder = Function::FromTyped(
      [](int64_t k) { return Function::FromTyped([k](int64_t x) { return x + k; }, "adder"); });
  Function add5 = make_adder(5);
  EXPECT_EQ(add5(1).cast<int64_t>(), 6);
}

TEST(Function, FunctionViewParametersBorrow) {
  Function inc = Function::FromTyped([](int64_t x) { return x + 1; }, "inc");
  size_t count_inside = 0;
  Function apply = Function::FromTyped(
      [&count_inside](packedfun::FunctionView f, int64_t x) {
        count_inside = f.ToFunction().use_count() - 1;  // minus the one ToFunction just took
        PFAny arg;
        arg.type_index = kPFTypeInt;
        arg.zero_padding = 0;
        arg.v_int64 = x;
        return f(x).cast<int64_t>() * 10 + f.CallPacked(PackedArgs(&arg, 1)).cast<int64_t>();
      },
      "apply_view");
  EXPECT_EQ(apply(inc, 4).cast<int64_t>(), 55);
  EXPECT_EQ(count_inside, 1u);  // only the caller's reference: the view took none
  EXPECT_EQ(inc.use_count(), 1u);
  packedfun::FunctionView view = inc;
  EXPECT_TRUE(view.defined());
  EXPECT_EQ(view.get(), inc.get());
  EXPECT_EQ(inc.use_count(), 1u);
  EXPECT_FALSE(packedfun::FunctionView().defined());
  Error e = Catch([&] { apply(7, 1); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_NE(e.message().find("apply_view: argument 0: expected Function, got int"),
            std::string::npos)
      << e.message();
}

TEST(Function, StdExceptionsMapToKinds) {
  auto kind_of = [](auto thrower) {
    Function f = Function::FromTyped(thrower, "thrower");
    Error e = Catch([&] { f(); });
    return e.kind() + "|" + e.message();
  };
  EXPECT_EQ(kind_of([]() { throw std::invalid_argument("bad"); }), "ValueError|bad");
  EXPECT_EQ(kind_of([]() { throw std::domain_error("dom"); }), "ValueError|dom");
  EXPECT_EQ(kind_of([]() { throw std::out_of_range("oor"); }), "IndexError|oor");
  EXPECT_EQ(kind_of([]() { throw std::overflow_error("big"); }), "OverflowError|big");
  EXPECT_EQ(kind_of([]() { throw std::bad_alloc(); }), "MemoryError|std::bad_alloc");
  EXPECT_EQ(kind_of([]() { throw std::runtime_error("rt"); }), "RuntimeError|rt");
  EXPECT_EQ(kind_of([]() { throw std::logic_error("lg"); }), "RuntimeError|lg");
  EXPECT_EQ(kind_of([]() { throw 42; }), "RuntimeError|unknown C++ exception");
  EXPECT_EQ(kind_of([]() { throw Error("KeyError", "k"); }), "KeyError|k");
}

TEST(Function, ErrorObjectCrossesUnchanged) {
  Error original("AttributeError", "no such attribute");
  Function f = Function::FromTyped([original]() { throw original; }, "f");
  Error back = Catch([&] { f(); });
  EXPECT_EQ(back.get(), original.get());  // the same error object came back
  EXPECT_EQ(back.kind(), "AttributeError");
}

TEST(Function, ErrorsPassThroughNestedCalls) {
  Function inner = Function::FromTyped([]() { throw Error("KeyError", "deep"); }, "inner");
  Function outer = Function::FromTyped([](Function f) { return f(); }, "outer");
  Error e = Catch([&] { outer(inner); });
  EXPECT_EQ(e.kind(), "KeyError");
  EXPECT_EQ(e.message(), "deep");
}

struct LifetimeProbe {
  static int alive;
  LifetimeProbe() { ++alive; }
  LifetimeProbe(const LifetimeProbe&) { ++alive; }
  ~LifetimeProbe() { --alive; }
  int operator()() const { return alive; }
};
int LifetimeProbe::alive = 0;

TEST(Function, CallableDestroyedWithLastReference) {
  {
    Function f = Function::FromTyped(LifetimeProbe(), "probe");
    EXPECT_EQ(LifetimeProbe::alive, 1);
    Function g = f;
    EXPECT_EQ(f.use_count(), 2u);
    EXPECT_TRUE(g.same_as(f));
    EXPECT_EQ(g().cast<int>(), 1);
  }
  EXPECT_EQ(LifetimeProbe::alive, 0);
  {
    Function p = Function::FromPacked([probe = LifetimeProbe()](PackedArgs, Any*) { (void)probe; });
    EXPECT_EQ(LifetimeProbe::alive, 1);
  }
  EXPECT_EQ(LifetimeProbe::alive, 0);
}

TEST(Function, ResultsHoldReferences) {
  String held(std::string(50, 'h'));
  Function keep = Function::FromTyped([held]() { return held; }, "keep");
  Any r = keep();
  EXPECT_EQ(r.raw().v_obj, held.raw().v_obj);
  EXPECT_EQ(held.raw().v_obj->ref_count, 3u);  // held, the lambda's copy, r
}

TEST(Function, NullFunctionCallThrows) {
  Function empty;
  EXPECT_FALSE(empty.defined());
  EXPECT_EQ(Catch([&] { empty(); }).kind(), "ValueError");
}

TEST(Function, CalledThroughTheCAbi) {
  Function add = Function::FromTyped(Add, "mylib.add");
  PFAny args[2] = {};
  args[0].type_index = kPFTypeInt;
  args[0].v_int64 = 20;
  args[1].type_index = kPFTypeInt;
  args[1].v_int64 = 22;
  PFAny result{};
  ASSERT_EQ(PFFunctionCall(add.get(), args, 2, &result), 0);
  EXPECT_EQ(result.type_index, kPFTypeInt);
  EXPECT_EQ(result.v_int64, 42);
  args[1].type_index = kPFTypeRawStr;
  args[1].v_c_str = "nope";
  ASSERT_NE(PFFunctionCall(add.get(), args, 2, &result), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  Error e = Error::FromObject(packedfun::ObjectPtr<PFObject>::FromOwned(err));
  EXPECT_EQ(e.message(), "mylib.add: argument 1: expected int, got str");
}

TEST(Function, GILPolicyDefaultsToReleaseAndIsShared) {
  Function f = Function::FromTyped([](int64_t x) { return x; });
  EXPECT_EQ(f.GetGILPolicy(), packedfun::GILPolicy::kRelease);
  Function same = f;
  f.SetGILPolicy(packedfun::GILPolicy::kHold);
  EXPECT_EQ(same.GetGILPolicy(), packedfun::GILPolicy::kHold);
  EXPECT_NE(f.get()->flags & PACKEDFUN_FUNCTION_FLAG_GIL_HOLD, 0u);  // one load for a binding
  f.SetGILPolicy(packedfun::GILPolicy::kRelease);
  EXPECT_EQ(f.GetGILPolicy(), packedfun::GILPolicy::kRelease);
  EXPECT_EQ(f(int64_t{7}).cast<int64_t>(), 7);  // C++ callers ignore the policy
}

TEST(Function, GILPolicyEntryPointsRejectBadInput) {
  Function f = Function::FromTyped([]() {});
  EXPECT_NE(PFFunctionSetGILPolicy(f.get(), 7), 0);
  Error bad = Catch([] { packedfun::detail::ThrowRaised(); });
  EXPECT_EQ(bad.kind(), "ValueError");
  packedfun::List<> not_a_function;
  int32_t out = -1;
  EXPECT_NE(PFFunctionGetGILPolicy(not_a_function.get(), &out), 0);
  Error wrong = Catch([] { packedfun::detail::ThrowRaised(); });
  EXPECT_EQ(wrong.kind(), "TypeError");
  EXPECT_EQ(out, -1);
}

}  // namespace
