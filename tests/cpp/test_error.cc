// Tests of packedfun::Error and the throw/check macros.
#include <gtest/gtest.h>
#include "catch_error.h"
#include <packedfun/packedfun.h>

#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using packedfun::Error;

TEST(Error, KindMessageWhat) {
  Error e("ValueError", "bad value");
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(), "bad value");
  EXPECT_STREQ(e.what(), "ValueError: bad value");
  ASSERT_NE(e.get(), nullptr);
  EXPECT_EQ(e.get()->type_index, kPFTypeError);
  EXPECT_FALSE(e.cause().defined());
}

TEST(Error, EveryConstructorSpellingKeepsKindAndMessage) {
  const std::string kind = "IndexError", detail = "index 7 of 3";
  EXPECT_STREQ(Error("ValueError", "literal").what(), "ValueError: literal");
  EXPECT_STREQ(Error("ValueError", "at " + detail).what(), "ValueError: at index 7 of 3");
  EXPECT_STREQ(Error(kind, detail).what(), "IndexError: index 7 of 3");
  const char* no_text = nullptr;
  Error empty(no_text, no_text);  // NULL reads as ""
  EXPECT_EQ(empty.kind(), "");
  EXPECT_EQ(empty.message(), "");
  std::string with_nul("a\0b", 3);  // the std::string forms keep every byte
  EXPECT_EQ(Error(kind, with_nul).message(), with_nul);
}

TEST(Error, CatchableAsStdException) {
  try {
    throw Error("KeyError", "missing");
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "KeyError: missing");
  }
}

TEST(Error, WhatOfACaughtErrorAndItsCopies) {
  try {
    PACKEDFUN_THROW(IndexError) << "index " << 7 << " is out of range";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "IndexError: index 7 is out of range");
    EXPECT_EQ(e.what(), e.what());  // built once, then the same text for the error's life
    Error copy = e;
    EXPECT_STREQ(copy.what(), e.what());
    Error moved = std::move(copy);
    EXPECT_STREQ(moved.what(), "IndexError: index 7 is out of range");
    Error assigned("KeyError", "k");
    EXPECT_STREQ(assigned.what(), "KeyError: k");
    assigned = moved;
    EXPECT_STREQ(assigned.what(), "IndexError: index 7 is out of range");
    EXPECT_EQ(assigned.kind(), "IndexError");
    EXPECT_EQ(assigned.message(), "index 7 is out of range");
  }
  // An error that came back through the C ABI (thrown by ThrowRaised) has the same text.
  PFErrorSetRaisedFromCStr("ValueError", "from the slot");
  try {
    packedfun::detail::ThrowRaised();
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "ValueError: from the slot");
  }
}

TEST(Error, WhatFromManyThreadsAtOnce) {
  for (int round = 0; round < 20; ++round) {
    Error e("ValueError", "shared by threads " + std::to_string(round));
    std::string want = "ValueError: shared by threads " + std::to_string(round);
    std::vector<const char*> seen(8, nullptr);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < seen.size(); ++t) {
      threads.emplace_back([&e, &seen, t] { seen[t] = e.what(); });
    }
    for (std::thread& t : threads) t.join();
    for (const char* text : seen) {
      EXPECT_EQ(text, seen[0]);  // every thread got the one published text
      EXPECT_EQ(want, text);
    }
  }
}

TEST(Error, ProducerBacktraceIsKept) {
  Error e("RuntimeError", "m", "frame one\nframe two");
  EXPECT_NE(e.backtrace().find("frame one"), std::string::npos);
}

TEST(Error, NativeBacktraceIsCaptured) {
  Error e("RuntimeError", "m");
  EXPECT_FALSE(e.backtrace().empty());
}

__attribute__((noinline)) void ThrowFromANamedFunction(const std::string& why) {
  PACKEDFUN_THROW(ValueError) << why;
}

TEST(Error, BacktraceShowsTheThrowerNotTheMachinery) {
  Error e = Catch([] { ThrowFromANamedFunction("named"); });
  std::string bt = e.backtrace();
  // Most recent call last; the thrower by its short name (no parameter list, no std::__cxx11).
  std::string last = bt.substr(bt.rfind('\n') + 1);
  EXPECT_NE(last.find(", in ThrowFromANamedFunction"), std::string::npos) << bt;
  EXPECT_EQ(last.find("basic_string"), std::string::npos) << bt;
  // packedfun's own frames (Error's constructor, the throw helper) are left out.
  EXPECT_EQ(bt.find("packedfun::"), std::string::npos) << bt;
}

TEST(Error, ThrowMacroStreams) {
  Error e =
      Catch([] { PACKEDFUN_THROW(ValueError) << "x=" << 3 << ", y=" << 2.5 << ", " << true; });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(), "x=3, y=2.5, true");
  Error d = Catch([] {
    PACKEDFUN_THROW(TypeError) << DLDataType{kDLFloat, 32, 1} << " on " << DLDevice{kDLCUDA, 1};
  });
  EXPECT_EQ(d.message(), "float32 on cuda:1");
  Error s = Catch([] { PACKEDFUN_THROW(KeyError) << packedfun::String("k") << std::string("!"); });
  EXPECT_EQ(s.message(), "k!");
}

int Positive(int x) {
  PACKEDFUN_CHECK(x > 0) << "x must be positive, got " << x;
  return x;
}

TEST(Error, CheckNamesTheCondition) {
  EXPECT_EQ(Positive(3), 3);
  Error e = Catch([] { Positive(-2); });
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_EQ(e.message(), "Check failed: (x > 0) is false: x must be positive, got -2");
  Error bare = Catch([] { PACKEDFUN_CHECK(1 == 2); });
  EXPECT_EQ(bare.message(), "Check failed: (1 == 2) is false");
}

TEST(Error, BinaryChecksPrintOperands) {
  int a = 3, b = 4;
  Error e = Catch([&] { PACKEDFUN_CHECK_EQ(a, b) << "sizes differ"; });
  EXPECT_EQ(e.message(), "Check failed: a == b (3 vs. 4): sizes differ");
  EXPECT_EQ(Catch([&] { PACKEDFUN_CHECK_LT(b, a); }).message(), "Check failed: b < a (4 vs. 3)");
  PACKEDFUN_CHECK_LE(a, b);
  PACKEDFUN_CHECK_NE(a, b);
  PACKEDFUN_CHECK_GE(b, a);
  PACKEDFUN_CHECK_GT(b, a);
  int calls = 0;
  auto once = [&calls] { return ++calls; };
  PACKEDFUN_CHECK_EQ(once(), 1);
  EXPECT_EQ(calls, 1);  // operands are evaluated once
}

TEST(Error, InternalChecks) {
  Error e = Catch([] { PACKEDFUN_ICHECK(false) << "invariant"; });
  EXPECT_EQ(e.kind(), "InternalError");
  EXPECT_EQ(e.message(), "Check failed: (false) is false: invariant");
  Error eq = Catch([] { PACKEDFUN_ICHECK_EQ(1, 2); });
  EXPECT_EQ(eq.kind(), "InternalError");
}

TEST(Error, ChecksNestInIfElse) {
  int taken = 0;
  if (taken == 0)
    PACKEDFUN_CHECK(true) << "never";
  else
    taken = 2;
  EXPECT_EQ(taken, 0);
}

TEST(Error, RaisedErrorsComeBackAsError) {
  EXPECT_EQ(PFErrorSetRaisedFromCStr("NotImplementedError", "later"), -1);
  try {
    packedfun::detail::ThrowRaised();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "NotImplementedError");
    EXPECT_EQ(e.message(), "later");
  }
}

TEST(Error, ThrownInATypedOrPackedBodyReachesTheSlotAsTheSameObject) {
  static PFObject* thrown = nullptr;
  auto body = [](int64_t x) -> int64_t {
    Error e("ValueError", "no " + std::to_string(x));
    thrown = e.get();
    throw e;
  };
  packedfun::Function typed = packedfun::Function::FromTyped(body);
  packedfun::Function packed =
      packedfun::Function::FromPacked([body](packedfun::PackedArgs args, packedfun::Any* rv) {
        *rv = body(args[0].cast<int64_t>());
      });
  for (const packedfun::Function& f : {typed, packed}) {
    PFAny arg{}, result{};
    arg.type_index = kPFTypeInt;
    arg.v_int64 = 3;
    ASSERT_EQ(PFFunctionCall(f.get(), &arg, 1, &result), -1);
    PFObject* err = nullptr;
    PFErrorMoveFromRaised(&err);
    ASSERT_EQ(err, thrown);         // the caught Error's object, handed over
    EXPECT_EQ(err->ref_count, 1u);  // the exception object let go of its reference
    EXPECT_STREQ(PFErrorGetWhat(err), "ValueError: no 3");
    PFObjectDecRef(err);
  }
}

TEST(Error, CauseIsPreserved) {
  static int freed = 0;
  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(&freed, [](void* h) { ++*static_cast<int*>(h); }, &opaque), 0);
  PFByteArray kind{"ValueError", 10}, msg{"wrapped", 7};
  PFObject* err = nullptr;
  ASSERT_EQ(PFErrorCreate(&kind, &msg, nullptr, opaque, &err), 0);
  PFErrorSetRaised(err);
  PFObjectDecRef(err);
  try {
    packedfun::detail::ThrowRaised();
  } catch (const Error& e) {
    EXPECT_EQ(e.cause().get(), opaque);
    EXPECT_EQ(e.cause().type_index(), kPFTypeOpaque);
  }
  PFObjectDecRef(opaque);
  EXPECT_EQ(freed, 1);
}

}  // namespace
