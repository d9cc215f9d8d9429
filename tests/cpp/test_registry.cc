// Tests of global registration: the macro, lookups, duplicates, docs and DLL-exported symbols.
#include <gtest/gtest.h>
#include "catch_error.h"
#include <packedfun/packedfun.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using packedfun::Any;
using packedfun::Error;
using packedfun::Function;
using packedfun::PackedArgs;

int64_t AddIntegers(int64_t a, int64_t b) { return a + b; }
int64_t Sub(int64_t a, int64_t b) { return a - b; }

PACKEDFUN_REGISTER_GLOBAL("test_registry.add").set_body_typed(AddIntegers);
PACKEDFUN_REGISTER_GLOBAL("test_registry.add").set_body_typed(AddIntegers);  // same body: silent
PACKEDFUN_REGISTER_GLOBAL("test_registry.sub").set_body_typed(Sub).describe("a - b");
PACKEDFUN_REGISTER_GLOBAL("test_registry.sub").set_body_typed(AddIntegers);  // clash: kept first
PACKEDFUN_REGISTER_GLOBAL("test_registry.count").set_body_packed([](PackedArgs args, Any* rv) {
  *rv = args.size();
});
PACKEDFUN_REGISTER_GLOBAL("test_registry.body")
    .set_body(Function::FromTyped([]() { return 1; }, "test_registry.body"));

PACKEDFUN_DLL_EXPORT_TYPED_FUNC(test_add, AddIntegers);
PACKEDFUN_DLL_EXPORT_DOC(test_add, "Adds two integers.");
PACKEDFUN_DLL_EXPORT_PACKED_FUNC(test_count, [](PackedArgs args, Any* rv) { *rv = args.size(); });

TEST(Registry, StaticRegistration) {
  Function add = Function::GetGlobalRequired("test_registry.add");
  EXPECT_EQ(add(2, 3).cast<int64_t>(), 5);
  EXPECT_EQ(Function::GetGlobalRequired("test_registry.count")(1, 2, 3).cast<int>(), 3);
  EXPECT_EQ(Function::GetGlobalRequired("test_registry.body")().cast<int>(), 1);
  Error e = Catch([&] { add("a", 1); });
  EXPECT_EQ(e.message(), "test_registry.add: argument 0: expected int, got str");
}

TEST(Registry, DuplicateKeepsTheFirst) {
  EXPECT_EQ(Function::GetGlobalRequired("test_registry.sub")(5, 3).cast<int64_t>(), 2);
}

TEST(Registry, DuplicateIsReportedOnStderr) {
  testing::internal::CaptureStderr();
  [[maybe_unused]] static auto clash =
      packedfun::detail::GlobalRegistration("test_registry.sub").set_body_typed(AddIntegers);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("packedfun: cannot register global function 'test_registry.sub'"),
            std::string::npos)
      << err;
  testing::internal::CaptureStderr();
  [[maybe_unused]] static auto same =
      packedfun::detail::GlobalRegistration("test_registry.add").set_body_typed(AddIntegers);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Registry, Docstrings) {
  PFByteArray name{"test_registry.sub", 17};
  PFAny doc{};
  ASSERT_EQ(PFFunctionGetGlobalDoc(&name, &doc), 0);
  Any owned = packedfun::detail::AnyUnsafe::MoveFromPFAny(&doc);
  EXPECT_EQ(owned.cast<std::string>(), "a - b");
}

TEST(Registry, MissingNames) {
  EXPECT_FALSE(Function::GetGlobal("test_registry.no_such_function").has_value());
  Error e = Catch([] { Function::GetGlobalRequired("test_registry.no_such_function"); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_NE(e.message().find("test_registry.no_such_function"), std::string::npos);
}

TEST(Registry, SetListRemove) {
  Function f = Function::FromTyped([](int64_t x) { return -x; }, "test_registry.neg");
  Function::SetGlobal("test_registry.neg", f);
  EXPECT_EQ(Function::GetGlobalRequired("test_registry.neg")(4).cast<int64_t>(), -4);
  Error dup = Catch([&] { Function::SetGlobal("test_registry.neg", f); });
  EXPECT_EQ(dup.kind(), "ValueError");
  EXPECT_NE(dup.message().find("test_registry.neg"), std::string::npos);
  Function g = Function::FromTyped([](int64_t x) { return x * x; }, "test_registry.neg");
  Function::SetGlobal("test_registry.neg", g, /*override=*/true, "squares");
  EXPECT_EQ(Function::GetGlobalRequired("test_registry.neg")(4).cast<int64_t>(), 16);
  std::vector<std::string> names = Function::ListGlobalNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "test_registry.neg"), names.end());
  EXPECT_TRUE(Function::RemoveGlobal("test_registry.neg"));
  EXPECT_FALSE(Function::RemoveGlobal("test_registry.neg"));
  EXPECT_FALSE(Function::GetGlobal("test_registry.neg").has_value());
}

TEST(Registry, RegistryHoldsAReference) {
  Function f = Function::FromTyped([]() { return 7; }, "test_registry.ref");
  EXPECT_EQ(f.use_count(), 1u);
  Function::SetGlobal("test_registry.ref", f);
  EXPECT_EQ(f.use_count(), 2u);
  Function::RemoveGlobal("test_registry.ref");
  EXPECT_EQ(f.use_count(), 1u);
}

// Lookups are cached per thread; every change must still be seen at once, by every thread, and a
// removed function must not be kept alive by the cache of the thread that removed it.
TEST(Registry, CachedLookupsFollowChanges) {
  Function f = Function::FromTyped([]() { return 1; }, "test_registry.cached");
  Function g = Function::FromTyped([]() { return 2; }, "test_registry.cached");
  Function::SetGlobal("test_registry.cached", f);
  for (int i = 0; i < 3; ++i) {  // the first lookup fills the cache, the others hit it
    EXPECT_EQ(Function::GetGlobalRequired("test_registry.cached")().cast<int>(), 1);
  }
  Function::SetGlobal("test_registry.cached", g, /*override=*/true);
  EXPECT_EQ(Function::GetGlobalRequired("test_registry.cached")().cast<int>(), 2);
  EXPECT_EQ(f.use_count(), 1u);  // replaced: neither the registry nor a cache holds it
  std::thread([] {
    EXPECT_EQ(Function::GetGlobalRequired("test_registry.cached")().cast<int>(), 2);
  }).join();
  EXPECT_TRUE(Function::RemoveGlobal("test_registry.cached"));
  EXPECT_EQ(g.use_count(), 1u);
  EXPECT_FALSE(Function::GetGlobal("test_registry.cached").has_value());
  std::thread([] { EXPECT_FALSE(Function::GetGlobal("test_registry.cached").has_value()); }).join();
}

// A function whose body owns `token`: the token expires exactly when the function is freed.
Function Tracked(const std::shared_ptr<int>& token) {
  return Function::FromTyped([token]() { return *token; }, "test_registry.tracked");
}

// Another thread's cached lookup must not keep a removed (or replaced) function alive, even while
// that thread lives on without looking anything up again.
TEST(Registry, RemovalReleasesOtherThreadsCachesAtOnce) {
  auto token = std::make_shared<int>(3);
  std::weak_ptr<int> alive = token;
  Function::SetGlobal("test_registry.shared", Tracked(token));
  token.reset();
  auto replacement = std::make_shared<int>(4);
  std::weak_ptr<int> replacement_alive = replacement;
  std::atomic<int> step{0};
  std::thread reader([&] {
    for (int i = 0; i < 3; ++i) {  // fills, then hits, the reader's cache
      EXPECT_EQ(Function::GetGlobalRequired("test_registry.shared")().cast<int>(), 3);
    }
    step = 1;
    while (step.load() != 2) std::this_thread::yield();  // idle: no lookup
    EXPECT_EQ(Function::GetGlobalRequired("test_registry.shared")().cast<int>(), 4);
    step = 3;
    while (step.load() != 4) std::this_thread::yield();
  });
  while (step.load() != 1) std::this_thread::yield();
  EXPECT_FALSE(alive.expired());
  Function::SetGlobal("test_registry.shared", Tracked(replacement), /*override=*/true);
  replacement.reset();
  EXPECT_TRUE(alive.expired());  // replaced: freed though the reader cached it
  step = 2;
  while (step.load() != 3) std::this_thread::yield();
  EXPECT_TRUE(Function::RemoveGlobal("test_registry.shared"));
  EXPECT_TRUE(replacement_alive.expired());  // removed: freed while the reader idles
  step = 4;
  reader.join();
}

// Lookups racing with overrides and a removal: once the removal returns and the readers have
// stopped (still alive), no function registered under the name is left alive.
TEST(Registry, RacingLookupsReleaseEverythingOnRemoval) {
  std::vector<std::weak_ptr<int>> tokens;
  std::atomic<bool> stop{false};
  std::atomic<int> stopped{0};
  std::atomic<bool> done{false};
  auto token = std::make_shared<int>(0);
  tokens.push_back(token);
  Function::SetGlobal("test_registry.race", Tracked(token));
  token.reset();
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        std::optional<Function> f = Function::GetGlobal("test_registry.race");
        if (f.has_value()) {
          EXPECT_GE((*f)().cast<int>(), 0);
        }
      }
      ++stopped;
      while (!done.load()) std::this_thread::yield();
    });
  }
  for (int i = 1; i <= 200; ++i) {
    auto next = std::make_shared<int>(i);
    tokens.push_back(next);
    Function::SetGlobal("test_registry.race", Tracked(next), /*override=*/true);
  }
  stop = true;
  while (stopped.load() != 3) std::this_thread::yield();
  EXPECT_TRUE(Function::RemoveGlobal("test_registry.race"));
  for (const std::weak_ptr<int>& t : tokens) EXPECT_TRUE(t.expired());
  done = true;
  for (std::thread& r : readers) r.join();
}

// Names too long for the cache take the locked path every time.
TEST(Registry, LongNames) {
  std::string name = "test_registry." + std::string(100, 'x');
  Function::SetGlobal(name, Function::FromTyped([]() { return 5; }, "long"));
  EXPECT_EQ(Function::GetGlobalRequired(name)().cast<int>(), 5);
  EXPECT_EQ(Function::GetGlobalRequired(name)().cast<int>(), 5);
  EXPECT_TRUE(Function::RemoveGlobal(name));
  EXPECT_FALSE(Function::GetGlobal(name).has_value());
}

TEST(Registry, DllExportedSymbols) {
  PFAny args[2] = {};
  args[0].type_index = kPFTypeInt;
  args[0].v_int64 = 4;
  args[1].type_index = kPFTypeInt;
  args[1].v_int64 = 5;
  PFAny result{};
  ASSERT_EQ(__packedfun_test_add(nullptr, args, 2, &result), 0);
  EXPECT_EQ(result.v_int64, 9);
  EXPECT_STREQ(__packedfun_doc__test_add, "Adds two integers.");
  ASSERT_NE(__packedfun_test_add(nullptr, args, 1, &result), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  Error e = Error::FromObject(packedfun::ObjectPtr<PFObject>::FromOwned(err));
  EXPECT_EQ(e.message(), "test_add: expected 2 arguments, got 1");
  PFAny count{};
  ASSERT_EQ(__packedfun_test_count(nullptr, args, 2, &count), 0);
  EXPECT_EQ(count.v_int64, 2);
}

}  // namespace
