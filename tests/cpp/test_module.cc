// Tests of packedfun::Module: loading libraries from C++, their functions, docs, imports, entry.
#include <gtest/gtest.h>
#include "catch_error.h"
#include <packedfun/packedfun.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

namespace pf = packedfun;
using pf::Function;
using pf::Module;

int64_t SystemTriple(int64_t x) { return 3 * x; }

}  // namespace

// Exported from this executable (ENABLE_EXPORTS) for the system library.
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(test_module_triple, SystemTriple);

namespace {

TEST(Module, LoadsAndCallsFunctions) {
  Module mod = Module::LoadFromFile(PACKEDFUN_FIXTURE_ADD_ONE);
  EXPECT_EQ(mod.type_index(), kPFTypeModule);
  EXPECT_EQ(mod.path(), PACKEDFUN_FIXTURE_ADD_ONE);
  std::optional<Function> f = mod.GetFunction("add_one");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ((*f)(41).cast<int64_t>(), 42);
  EXPECT_FALSE(mod.GetFunction("nothing_here").has_value());
  EXPECT_EQ(mod.GetFunctionDoc("add_one").value_or(""), "Adds one to an int.");
  EXPECT_FALSE(mod.GetFunctionDoc("fail").has_value());
  pf::Error e = Catch([&] { mod.GetFunctionRequired("fail")(); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(), "fail: as requested");
  // The registration the library runs at load time.
  EXPECT_EQ(Function::GetGlobalRequired("fixture.add_two")(1).cast<int64_t>(), 3);
}

TEST(Module, FunctionKeepsTheLibraryLoaded) {
  Function f = Module::LoadFromFile(PACKEDFUN_FIXTURE_ADD_ONE).GetFunctionRequired("add_one");
  EXPECT_EQ(f(1).cast<int64_t>(), 2);  // the Module reference is gone, the Function still works
}

TEST(Module, MissingFunctionIsAttributeError) {
  Module mod = Module::LoadFromFile(PACKEDFUN_FIXTURE_ADD_ONE);
  pf::Error e = Catch([&] { mod.GetFunctionRequired("nothing_here"); });
  EXPECT_EQ(e.kind(), "AttributeError");
  EXPECT_EQ(e.message(), std::string("module '") + PACKEDFUN_FIXTURE_ADD_ONE +
                             "' has no function 'nothing_here'");
}

TEST(Module, LoadErrorsHaveTheirKinds) {
  pf::Error missing = Catch([] { Module::LoadFromFile("/nonexistent/dir/libnothing.so"); });
  EXPECT_EQ(missing.kind(), "FileNotFoundError");
  EXPECT_NE(missing.message().find("/nonexistent/dir/libnothing.so"), std::string::npos);
  pf::Error bad = Catch([] { Module::LoadFromFile(PACKEDFUN_FIXTURE_NOT_A_LIBRARY); });
  EXPECT_EQ(bad.kind(), "OSError");
  EXPECT_NE(bad.message().find("invalid ELF header"), std::string::npos) << bad.what();
  EXPECT_EQ(Catch([] { Module::LoadFromFile(""); }).kind(), "OSError");
}

TEST(Module, ListsFunctions) {
  Module mod = Module::LoadFromFile(PACKEDFUN_FIXTURE_ADD_ONE);
  std::vector<std::string> names = mod.ListFunctions().value();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "add_one"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "fail"), names.end());
  EXPECT_FALSE(Module::SystemLib().ListFunctions().has_value());
}

TEST(Module, ImportsAreSearchedOnRequest) {
  Module main = Module::LoadFromFile(PACKEDFUN_FIXTURE_ADD_ONE);
  Module dep = Module::LoadFromFile(PACKEDFUN_FIXTURE_TIMES_TWO);
  EXPECT_TRUE(main.imports().empty());
  main.Import(dep);
  ASSERT_EQ(main.imports().size(), 1u);
  EXPECT_TRUE(main.imports()[0].same_as(dep));
  EXPECT_FALSE(main.GetFunction("times_two").has_value());
  EXPECT_EQ(main.GetFunctionRequired("times_two", true)(5).cast<int64_t>(), 10);
  std::vector<std::string> all = main.ListFunctions(true).value();
  EXPECT_NE(std::find(all.begin(), all.end(), "times_two"), all.end());
  EXPECT_EQ(Catch([&] { dep.Import(main); }).kind(), "ValueError");  // a cycle
}

TEST(Module, EntryFunction) {
  Module mod = Module::LoadFromFile(PACKEDFUN_FIXTURE_ADD_ONE);
  ASSERT_TRUE(mod.GetEntryFunction().has_value());
  EXPECT_EQ(mod(9).cast<int64_t>(), 10);
  Module dep = Module::LoadFromFile(PACKEDFUN_FIXTURE_TIMES_TWO);
  EXPECT_FALSE(dep.GetEntryFunction().has_value());
  EXPECT_EQ(Catch([&] { dep(1); }).kind(), "TypeError");
}

TEST(Module, SystemLibFindsTheProgramsExports) {
  Module sys = Module::SystemLib();
  EXPECT_EQ(sys.path(), "");
  EXPECT_EQ(sys.GetFunctionRequired("test_module_triple")(4).cast<int64_t>(), 12);
}

TEST(Module, TravelsInTypedSignatures) {
  Function path = Function::FromTyped([](Module m) { return m.path(); }, "t.path");
  EXPECT_EQ(path(Module::SystemLib()).cast<std::string>(), "");
  pf::Error e = Catch([&] { path(1); });
  EXPECT_EQ(e.message(), "t.path: argument 0: expected Module, got int");
}

}  // namespace
