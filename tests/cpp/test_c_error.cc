// C-ABI tests: the thread-local error slot, error objects, causes and lazy backtraces.
#include <gtest/gtest.h>
#include <packedfun/c_api.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

PFByteArray Bytes(const char* s) { return PFByteArray{s, std::strlen(s)}; }

std::string Text(const PFByteArray& a) { return std::string(a.data, a.size); }

PFErrorObject* AsError(PFObject* obj) { return reinterpret_cast<PFErrorObject*>(obj); }

TEST(CError, SetRaisedFromCStrAndMove) {
  EXPECT_EQ(PFErrorSetRaisedFromCStr("ValueError", "bad value 42"), -1);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->type_index, kPFTypeError);
  EXPECT_EQ(err->ref_count, 1u);
  EXPECT_EQ(Text(AsError(err)->kind), "ValueError");
  EXPECT_EQ(Text(AsError(err)->message), "bad value 42");
  EXPECT_EQ(AsError(err)->message.data[AsError(err)->message.size], '\0');
  EXPECT_EQ(AsError(err)->cause, nullptr);
  // The slot was cleared by the move.
  PFObject* again = reinterpret_cast<PFObject*>(0x1);
  PFErrorMoveFromRaised(&again);
  EXPECT_EQ(again, nullptr);
  PFObjectDecRef(err);
}

TEST(CError, SetRaisedTakesItsOwnReferenceAndReleasesThePrevious) {
  PFByteArray kind = Bytes("KeyError"), msg = Bytes("first");
  PFObject* first = nullptr;
  ASSERT_EQ(PFErrorCreate(&kind, &msg, nullptr, nullptr, &first), 0);
  PFErrorSetRaised(first);
  EXPECT_EQ(first->ref_count, 2u);
  PFErrorSetRaisedFromCStr("IndexError", "second");
  EXPECT_EQ(first->ref_count, 1u);  // replaced: the slot released it
  PFObject* got = nullptr;
  PFErrorMoveFromRaised(&got);
  EXPECT_EQ(Text(AsError(got)->kind), "IndexError");
  PFObjectDecRef(got);
  PFObjectDecRef(first);
}

TEST(CError, NewNeverFailsAndWhatIsBuiltOnceByTheRuntime) {
  PFByteArray kind = Bytes("ValueError"), msg = Bytes("bad value 42");
  PFObject* err = PFErrorNew(&kind, &msg, nullptr);  // native stack captured
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->type_index, kPFTypeError);
  EXPECT_EQ(err->ref_count, 1u);
  EXPECT_EQ(Text(AsError(err)->kind), "ValueError");
  EXPECT_EQ(Text(AsError(err)->message), "bad value 42");
  EXPECT_EQ(AsError(err)->cause, nullptr);
  const char* what = PFErrorGetWhat(err);
  EXPECT_STREQ(what, "ValueError: bad value 42");
  EXPECT_EQ(PFErrorGetWhat(err), what);  // kept by the error
  PFObjectDecRef(err);
  // A producer's backtrace is kept as given.
  PFByteArray bt = Bytes("File \"x.py\", line 1, in f");
  err = PFErrorNew(&kind, &msg, &bt);
  PFByteArray got{nullptr, 0};
  ASSERT_EQ(PFErrorGetBacktrace(err, &got), 0);
  EXPECT_EQ(Text(got), "File \"x.py\", line 1, in f");
  PFObjectDecRef(err);
  // Not an error: a fixed text, never NULL.
  EXPECT_STREQ(PFErrorGetWhat(nullptr), "packedfun::Error");
  PFObject* str = nullptr;
  PFByteArray text = Bytes("a string long enough to be an object, not an error");
  PFAny any{};
  ASSERT_EQ(PFStringCreate(&text, &any), 0);
  ASSERT_EQ(any.type_index, kPFTypeString);
  str = any.v_obj;
  EXPECT_STREQ(PFErrorGetWhat(str), "packedfun::Error");
  PFObjectDecRef(str);
}

TEST(CError, MoveToRaisedTakesTheCallersReference) {
  PFByteArray kind = Bytes("KeyError"), msg = Bytes("moved");
  PFObject* err = PFErrorNew(&kind, &msg, nullptr);
  PFObjectIncRef(err);  // ours, kept to watch the count
  PFErrorMoveToRaised(err);
  EXPECT_EQ(err->ref_count, 2u);  // the slot holds the reference handed to it, no new one
  PFObjectIncRef(err);
  PFErrorMoveToRaised(err);       // the same error again
  EXPECT_EQ(err->ref_count, 2u);  // the slot released the one it held
  PFObject* got = nullptr;
  PFErrorMoveFromRaised(&got);
  EXPECT_EQ(got, err);
  PFObjectDecRef(got);
  EXPECT_EQ(err->ref_count, 1u);
  PFObjectDecRef(err);
}

TEST(CError, SlotIsPerThread) {
  PFErrorSetRaisedFromCStr("RuntimeError", "main thread");
  PFObject* seen_by_other = reinterpret_cast<PFObject*>(0x1);
  std::thread([&] {
    PFErrorMoveFromRaised(&seen_by_other);
    PFErrorSetRaisedFromCStr("RuntimeError", "left behind at thread exit");
  }).join();
  EXPECT_EQ(seen_by_other, nullptr);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(Text(AsError(err)->message), "main thread");
  PFObjectDecRef(err);
}

int g_cause_freed = 0;
void FreeCause(void*) { ++g_cause_freed; }

TEST(CError, CauseIsOwned) {
  PFObject* cause = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, &FreeCause, &cause), 0);
  PFByteArray kind = Bytes("ZeroDivisionError"), msg = Bytes("division by zero");
  PFObject* err = nullptr;
  ASSERT_EQ(PFErrorCreate(&kind, &msg, nullptr, cause, &err), 0);
  EXPECT_EQ(AsError(err)->cause, cause);
  EXPECT_EQ(cause->ref_count, 2u);
  PFObjectDecRef(cause);
  EXPECT_EQ(g_cause_freed, 0);
  PFObjectDecRef(err);
  EXPECT_EQ(g_cause_freed, 1);
}

TEST(CError, ProducerBacktraceAndAppend) {
  PFByteArray kind = Bytes("TypeError"), msg = Bytes("m");
  PFByteArray bt = Bytes("  frame A\n  frame B");
  PFObject* err = nullptr;
  ASSERT_EQ(PFErrorCreate(&kind, &msg, &bt, nullptr, &err), 0);
  PFByteArray text;
  ASSERT_EQ(PFErrorGetBacktrace(err, &text), 0);
  EXPECT_EQ(Text(text), "  frame A\n  frame B");
  PFByteArray more = Bytes("  File \"x.py\", line 3, in f");
  ASSERT_EQ(PFErrorAppendBacktrace(err, &more), 0);
  ASSERT_EQ(PFErrorGetBacktrace(err, &text), 0);
  EXPECT_EQ(Text(text), "  frame A\n  frame B\n  File \"x.py\", line 3, in f");
  PFObjectDecRef(err);
}

__attribute__((noinline)) PFObject* RaiseFromNamedFunction() {
  PFErrorSetRaisedFromCStr("RuntimeError", "raised in a named function");
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  asm volatile("" ::: "memory");  // no tail call
  return err;
}

TEST(CError, NativeBacktraceIsSymbolizedLazily) {
  PFObject* err = RaiseFromNamedFunction();
  ASSERT_NE(err, nullptr);
  PFByteArray text;
  ASSERT_EQ(PFErrorGetBacktrace(err, &text), 0);
  std::string bt = Text(text);
  // Named from the executable's own symbol table (it exports nothing dynamically).
  EXPECT_NE(bt.find("RaiseFromNamedFunction"), std::string::npos) << bt;
  EXPECT_EQ(bt.find("PFErrorSetRaisedFromCStr"), std::string::npos) << bt;  // runtime frames cut
  // Python's order and shape: most recent call last, `File "<file>", offset 0x.., in <name>`.
  EXPECT_EQ(bt.rfind("File \"", 0), 0u) << bt;
  std::string last = bt.substr(bt.rfind('\n') + 1);
  EXPECT_NE(last.find(", in RaiseFromNamedFunction"), std::string::npos) << bt;
  EXPECT_NE(last.find("\", offset 0x"), std::string::npos) << bt;
  EXPECT_EQ(bt.find("__libc_start_main"), std::string::npos) << bt;  // libc is not the user's
  PFByteArray again;
  ASSERT_EQ(PFErrorGetBacktrace(err, &again), 0);
  EXPECT_EQ(again.data, text.data);  // symbolized once, then cached
  PFObjectDecRef(err);
}

__attribute__((noinline)) std::string RaiseAtDepth(int depth) {
  if (depth > 0) {
    std::string text = RaiseAtDepth(depth - 1);
    asm volatile("" ::: "memory");  // keep the recursion a real call
    return text;
  }
  PFErrorSetRaisedFromCStr("RuntimeError", "deep");
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  PFByteArray text;
  EXPECT_EQ(PFErrorGetBacktrace(err, &text), 0);
  std::string bt = Text(text);
  PFObjectDecRef(err);
  return bt;
}

TEST(CError, RepeatedCapturesOfOneStackAgree) {
  // The first capture unwinds with DWARF and fills the frame cache; later ones walk the cache.
  std::string texts[4];
  for (std::string& text : texts) text = RaiseAtDepth(12);  // one call site for all four
  for (const std::string& text : texts) EXPECT_EQ(text, texts[0]);
  const std::string& first = texts[0];
  EXPECT_NE(RaiseAtDepth(3), first);
  int lines = 1;
  for (char c : first) lines += c == '\n';
  EXPECT_GE(lines, 13);
  EXPECT_LE(lines, 32);  // capped
}

TEST(CError, CaptureIsCheap) {
  RaiseAtDepth(0);  // warm the frame cache
  auto start = std::chrono::steady_clock::now();
  constexpr int kIters = 2000;
  for (int i = 0; i < kIters; ++i) {
    PFErrorSetRaisedFromCStr("ValueError", "timing");
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  PFObjectDecRef(err);
  // Generous bound (sanitizer builds, loaded machines); the cached walk takes ~0.1 us.
  double per_call_us = std::chrono::duration<double, std::micro>(elapsed).count() / kIters;
  EXPECT_LT(per_call_us, 20.0);
}

TEST(CError, BacktraceOfANonErrorIsATypeError) {
  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, nullptr, &opaque), 0);
  PFByteArray text;
  EXPECT_NE(PFErrorGetBacktrace(opaque, &text), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(Text(AsError(err)->kind), "TypeError");
  PFObjectDecRef(err);
  PFObjectDecRef(opaque);
}

TEST(CError, EmptyKindAndMessage) {
  PFObject* err = nullptr;
  ASSERT_EQ(PFErrorCreate(nullptr, nullptr, nullptr, nullptr, &err), 0);
  EXPECT_EQ(AsError(err)->kind.size, 0u);
  EXPECT_STREQ(AsError(err)->message.data, "");
  PFObjectDecRef(err);
}

}  // namespace
