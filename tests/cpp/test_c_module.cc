// Tests of the module entry points of c_api.h: loading fixture libraries and calling their exports.
#include <gtest/gtest.h>
#include "abi_values.h"
#include <packedfun/c_api.h>

#include <string>

// A function compiled into this executable (exported with ENABLE_EXPORTS) for the system library.
extern "C" PACKEDFUN_EXPORT int __packedfun_test_system_echo(void* self, const PFAny* args,
                                                             int32_t num_args, PFAny* result) {
  if (self != nullptr || num_args != 1) {
    return PFErrorSetRaisedFromCStr("TypeError", "system_echo: bad call");
  }
  return PFAnyViewToOwned(&args[0], result);
}

namespace {

PFByteArray Bytes(const std::string& s) { return PFByteArray{s.data(), s.size()}; }

/*! The text of a string PFAny (small or object form), or "<None>"; releases the value. */
std::string TakeString(PFAny* v) {
  std::string s = "<type " + std::to_string(v->type_index) + ">";
  if (v->type_index == kPFTypeNone) s = "<None>";
  if (v->type_index == kPFTypeSmallStr) s.assign(v->v_bytes, v->small_len);
  if (v->type_index == kPFTypeString) {
    auto* b = reinterpret_cast<PFBytesObject*>(v->v_obj);
    s.assign(b->bytes.data, b->bytes.size);
  }
  PFAnyRelease(v);
  return s;
}

PFObject* Load(const std::string& path) {
  PFByteArray p = Bytes(path);
  PFObject* mod = nullptr;
  EXPECT_EQ(PFModuleLoadFromFile(&p, &mod), 0) << TakeError();
  return mod;
}

PFObject* GetFunction(PFObject* mod, const std::string& name, int query_imports = 0) {
  PFByteArray n = Bytes(name);
  PFObject* f = reinterpret_cast<PFObject*>(0x1);
  EXPECT_EQ(PFModuleGetFunction(mod, &n, query_imports, &f), 0) << TakeError();
  return f;
}

int64_t CallInt(PFObject* f, int64_t x) {
  PFAny arg{};
  arg.type_index = kPFTypeInt;
  arg.v_int64 = x;
  PFAny result{};
  EXPECT_EQ(PFFunctionCall(f, &arg, 1, &result), 0) << TakeError();
  EXPECT_EQ(result.type_index, kPFTypeInt);
  return result.v_int64;
}

/*! Loading `path` fails with an error of `kind` whose message contains the path and `needle`. */
void ExpectLoadFails(const std::string& path, const std::string& needle,
                     const std::string& kind = "OSError") {
  PFByteArray p = Bytes(path);
  PFObject* mod = nullptr;
  EXPECT_NE(PFModuleLoadFromFile(&p, &mod), 0);
  std::string err = TakeError();
  EXPECT_TRUE(StartsWith(err, kind + ": ")) << err;
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find(needle), std::string::npos) << err;
  EXPECT_EQ(mod, nullptr);
}

TEST(CModule, LoadsAndCallsAnExportedFunction) {
  PFObject* mod = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  ASSERT_NE(mod, nullptr);
  EXPECT_EQ(mod->type_index, kPFTypeModule);
  PFObject* f = GetFunction(mod, "add_one");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type_index, kPFTypeFunction);
  EXPECT_EQ(CallInt(f, 41), 42);
  PFObjectDecRef(f);
  PFObjectDecRef(mod);
}

TEST(CModule, ErrorsComeBackThroughModuleFunctions) {
  PFObject* mod = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  PFObject* f = GetFunction(mod, "fail");
  ASSERT_NE(f, nullptr);
  PFAny result{};
  EXPECT_NE(PFFunctionCall(f, nullptr, 0, &result), 0);
  EXPECT_EQ(TakeError(), "ValueError: fail: as requested");
  PFObjectDecRef(f);
  PFObjectDecRef(mod);
}

TEST(CModule, MissingFunctionIsNullNotAnError) {
  PFObject* mod = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  EXPECT_EQ(GetFunction(mod, "no_such_function"), nullptr);
  EXPECT_EQ(GetFunction(mod, std::string("add_one\0x", 9)), nullptr);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  EXPECT_EQ(err, nullptr);
  PFObjectDecRef(mod);
}

TEST(CModule, FunctionKeepsTheModuleAlive) {
  PFObject* mod = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  PFObject* f = GetFunction(mod, "add_one");
  EXPECT_EQ(mod->ref_count, 2u);
  PFObjectDecRef(mod);  // the function's reference is now the only one
  EXPECT_EQ(mod->ref_count, 1u);
  EXPECT_EQ(CallInt(f, 1), 2);
  PFObjectDecRef(f);  // releases the module too
}

TEST(CModule, LoadingTwiceGivesTwoWorkingModules) {
  PFObject* a = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  PFObject* b = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  PFObjectDecRef(a);
  PFObject* f = GetFunction(b, "add_one");
  EXPECT_EQ(CallInt(f, 10), 11);
  PFObjectDecRef(f);
  PFObjectDecRef(b);
}

TEST(CModule, LoadingRunsStaticInitRegistrationsOnce) {
  PFObject* mod = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  PFObject* again = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  std::string name = "fixture.add_two";
  PFByteArray n = Bytes(name);
  PFObject* f = nullptr;
  ASSERT_EQ(PFFunctionGetGlobal(&n, &f), 0) << TakeError();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(CallInt(f, 1), 3);
  PFObjectDecRef(f);
  PFObjectDecRef(again);
  PFObjectDecRef(mod);
}

TEST(CModule, PathIsKept) {
  PFObject* mod = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  PFAny path{};
  ASSERT_EQ(PFModuleGetPath(mod, &path), 0);
  EXPECT_EQ(TakeString(&path), PACKEDFUN_FIXTURE_ADD_ONE);
  PFObjectDecRef(mod);
}

TEST(CModule, MissingFileIsFileNotFoundErrorWithPath) {
  ExpectLoadFails("/nonexistent/dir/libnothing.so", "No such file", "FileNotFoundError");
}

TEST(CModule, NonLibraryFileIsOSErrorWithLoaderMessage) {
  ExpectLoadFails(PACKEDFUN_FIXTURE_NOT_A_LIBRARY, "invalid ELF header");
}

TEST(CModule, UnresolvedSymbolIsOSErrorWithLoaderMessage) {
  ExpectLoadFails(PACKEDFUN_FIXTURE_UNRESOLVED, "packedfun_fixture_symbol_nobody_defines");
}

TEST(CModule, BadArgumentsAreRejected) {
  PFObject* mod = nullptr;
  EXPECT_NE(PFModuleLoadFromFile(nullptr, &mod), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "ValueError: "));
  std::string with_nul("/tmp/a\0b.so", 11);
  PFByteArray p = Bytes(with_nul);
  EXPECT_NE(PFModuleLoadFromFile(&p, &mod), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "ValueError: "));
  PFByteArray empty = Bytes("");
  EXPECT_NE(PFModuleLoadFromFile(&empty, &mod), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "OSError: "));
  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, nullptr, &opaque), 0);
  PFByteArray n = Bytes("add_one");
  PFObject* f = nullptr;
  EXPECT_NE(PFModuleGetFunction(opaque, &n, 0, &f), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "TypeError: "));
  EXPECT_NE(PFModuleGetFunction(nullptr, &n, 0, &f), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "TypeError: "));
  PFAny out{};
  EXPECT_NE(PFModuleGetPath(opaque, &out), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "TypeError: "));
  EXPECT_EQ(mod, nullptr);
  EXPECT_EQ(f, nullptr);
  PFObjectDecRef(opaque);
}

TEST(CModule, ImportsAreSearchedOnlyWhenAsked) {
  PFObject* main_mod = Load(PACKEDFUN_FIXTURE_TIMES_TWO);
  PFObject* dep = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  ASSERT_EQ(PFModuleImport(main_mod, dep), 0) << TakeError();
  PFObjectDecRef(dep);  // the importer keeps it
  EXPECT_EQ(GetFunction(main_mod, "add_one", 0), nullptr);
  PFObject* f = GetFunction(main_mod, "add_one", 1);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(CallInt(f, 5), 6);
  PFObjectDecRef(f);
  PFObject* g = GetFunction(main_mod, "times_two", 1);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(CallInt(g, 5), 10);
  PFObjectDecRef(g);

  PFAny imports{};
  ASSERT_EQ(PFModuleGetImports(main_mod, &imports), 0) << TakeError();
  ASSERT_EQ(imports.type_index, kPFTypeArray);
  auto* seq = reinterpret_cast<PFSeqObject*>(imports.v_obj);
  ASSERT_EQ(seq->size, 1);
  EXPECT_EQ(seq->data[0].v_obj, dep);
  PFAnyRelease(&imports);
  PFObjectDecRef(main_mod);
}

TEST(CModule, ImportCyclesAreRejected) {
  PFObject* a = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  PFObject* b = Load(PACKEDFUN_FIXTURE_TIMES_TWO);
  PFObject* c = Load(PACKEDFUN_FIXTURE_TIMES_TWO);
  EXPECT_NE(PFModuleImport(a, a), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "ValueError: "));
  ASSERT_EQ(PFModuleImport(a, b), 0);
  ASSERT_EQ(PFModuleImport(b, c), 0);
  ASSERT_EQ(PFModuleImport(a, c), 0);  // a diamond is fine
  std::string err;
  EXPECT_NE(PFModuleImport(c, a), 0);
  err = TakeError();
  EXPECT_TRUE(StartsWith(err, "ValueError: ")) << err;
  EXPECT_NE(err.find("cycle"), std::string::npos) << err;
  EXPECT_EQ(GetFunction(a, "missing_everywhere", 1), nullptr);
  PFObject* f = GetFunction(a, "times_two", 1);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(CallInt(f, 4), 8);
  PFObjectDecRef(f);
  PFObjectDecRef(c);
  PFObjectDecRef(b);
  PFObjectDecRef(a);
}

TEST(CModule, DocstringsFollowTheFunctionLookup) {
  PFObject* mod = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  PFObject* importer = Load(PACKEDFUN_FIXTURE_TIMES_TWO);
  ASSERT_EQ(PFModuleImport(importer, mod), 0);
  auto doc = [](PFObject* m, const std::string& name, int query_imports) {
    PFByteArray n = Bytes(name);
    PFAny out{};
    EXPECT_EQ(PFModuleGetFunctionDoc(m, &n, query_imports, &out), 0) << TakeError();
    return TakeString(&out);
  };
  EXPECT_EQ(doc(mod, "add_one", 0), "Adds one to an int.");
  EXPECT_EQ(doc(mod, "fail", 0), "<None>");
  EXPECT_EQ(doc(mod, "missing", 0), "<None>");
  EXPECT_EQ(doc(importer, "add_one", 0), "<None>");
  EXPECT_EQ(doc(importer, "add_one", 1), "Adds one to an int.");
  EXPECT_EQ(doc(importer, "times_two", 1), "<None>");
  PFObjectDecRef(importer);
  PFObjectDecRef(mod);
}

TEST(CModule, EntryNameComesFromTheMainSymbol) {
  PFObject* mod = Load(PACKEDFUN_FIXTURE_ADD_ONE);
  PFObject* other = Load(PACKEDFUN_FIXTURE_TIMES_TWO);
  PFAny out{};
  ASSERT_EQ(PFModuleGetEntryName(mod, &out), 0) << TakeError();
  std::string entry = TakeString(&out);
  EXPECT_EQ(entry, "add_one");
  PFObject* f = GetFunction(mod, entry);
  EXPECT_EQ(CallInt(f, 0), 1);
  PFObjectDecRef(f);
  ASSERT_EQ(PFModuleGetEntryName(other, &out), 0);
  EXPECT_EQ(TakeString(&out), "<None>");
  PFObjectDecRef(other);
  PFObjectDecRef(mod);
}

TEST(CModule, SystemLibFindsFunctionsOfTheRunningProgram) {
  PFObject* sys = nullptr;
  ASSERT_EQ(PFModuleGetSystemLib(&sys), 0) << TakeError();
  PFAny path{};
  ASSERT_EQ(PFModuleGetPath(sys, &path), 0);
  EXPECT_EQ(TakeString(&path), "");
  PFObject* f = GetFunction(sys, "test_system_echo");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(CallInt(f, 99), 99);
  PFObjectDecRef(sys);
  EXPECT_EQ(CallInt(f, 7), 7);
  PFObjectDecRef(f);
}

}  // namespace
