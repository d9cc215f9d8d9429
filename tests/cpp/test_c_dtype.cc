// Tests of the data type entry points of c_api.h: parsing and printing every DLPack type name.
#include <gtest/gtest.h>
#include "abi_values.h"
#include <packedfun/c_api.h>

#include <string>
#include <utility>
#include <vector>

namespace {

PFByteArray Bytes(const std::string& s) { return PFByteArray{s.data(), s.size()}; }

/*! The text of a string PFAny (small or object form); releases the value. */
std::string TakeString(PFAny* v) {
  std::string s;
  if (v->type_index == kPFTypeSmallStr) {
    s.assign(v->v_bytes, v->small_len);
  } else if (v->type_index == kPFTypeString) {
    auto* b = reinterpret_cast<PFBytesObject*>(v->v_obj);
    s.assign(b->bytes.data, b->bytes.size);
  } else {
    ADD_FAILURE() << "not a string: type index " << v->type_index;
  }
  PFAnyRelease(v);
  return s;
}

DLDataType Parse(const std::string& text) {
  PFByteArray b = Bytes(text);
  DLDataType t{0, 0, 0};
  EXPECT_EQ(PFDataTypeFromString(&b, &t), 0) << text << ": " << TakeError();
  return t;
}

std::string Print(DLDataType t) {
  PFAny out{};
  EXPECT_EQ(PFDataTypeToString(t, &out), 0) << TakeError();
  return TakeString(&out);
}

struct Expected {
  const char* name;
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

const std::vector<Expected>& AllNames() {
  static const std::vector<Expected> names = {
      {"bool", kDLBool, 8, 1},
      {"int8", kDLInt, 8, 1},
      {"int16", kDLInt, 16, 1},
      {"int32", kDLInt, 32, 1},
      {"int64", kDLInt, 64, 1},
      {"uint8", kDLUInt, 8, 1},
      {"uint16", kDLUInt, 16, 1},
      {"uint32", kDLUInt, 32, 1},
      {"uint64", kDLUInt, 64, 1},
      {"float16", kDLFloat, 16, 1},
      {"float32", kDLFloat, 32, 1},
      {"float64", kDLFloat, 64, 1},
      {"bfloat16", kDLBfloat, 16, 1},
      {"float8_e3m4", kDLFloat8_e3m4, 8, 1},
      {"float8_e4m3", kDLFloat8_e4m3, 8, 1},
      {"float8_e4m3b11fnuz", kDLFloat8_e4m3b11fnuz, 8, 1},
      {"float8_e4m3fn", kDLFloat8_e4m3fn, 8, 1},
      {"float8_e4m3fnuz", kDLFloat8_e4m3fnuz, 8, 1},
      {"float8_e5m2", kDLFloat8_e5m2, 8, 1},
      {"float8_e5m2fnuz", kDLFloat8_e5m2fnuz, 8, 1},
      {"float8_e8m0fnu", kDLFloat8_e8m0fnu, 8, 1},
      {"float6_e2m3fn", kDLFloat6_e2m3fn, 6, 1},
      {"float6_e3m2fn", kDLFloat6_e3m2fn, 6, 1},
      {"float4_e2m1fn", kDLFloat4_e2m1fn, 4, 1},
      {"complex64", kDLComplex, 64, 1},
      {"complex128", kDLComplex, 128, 1},
      {"handle", kDLOpaqueHandle, 64, 1},
      {"float32x4", kDLFloat, 32, 4},
      {"int8x16", kDLInt, 8, 16},
      {"boolx2", kDLBool, 8, 2},
      {"float16x65535", kDLFloat, 16, 65535},
      {"float4_e2m1fnx2", kDLFloat4_e2m1fn, 4, 2},
      {"float8_e4m3fnx8", kDLFloat8_e4m3fn, 8, 8},
      {"int4", kDLInt, 4, 1},
      {"uint1", kDLUInt, 1, 1},
      {"handle32", kDLOpaqueHandle, 32, 1},
      {"complex128x2", kDLComplex, 128, 2},
  };
  return names;
}

TEST(CDataType, ParsesEveryName) {
  for (const Expected& e : AllNames()) {
    DLDataType t = Parse(e.name);
    EXPECT_EQ(t.code, e.code) << e.name;
    EXPECT_EQ(t.bits, e.bits) << e.name;
    EXPECT_EQ(t.lanes, e.lanes) << e.name;
  }
}

TEST(CDataType, PrintsEveryNameBack) {
  for (const Expected& e : AllNames()) {
    EXPECT_EQ(Print(DLDataType{e.code, e.bits, e.lanes}), e.name);
    EXPECT_EQ(Print(Parse(e.name)), e.name);
  }
}

TEST(CDataType, AliasesPrintCanonically) {
  EXPECT_EQ(Print(Parse("bool8")), "bool");
  EXPECT_EQ(Print(Parse("handle64")), "handle");
  EXPECT_EQ(Print(Parse("float32x1")), "float32");
}

TEST(CDataType, RejectsMalformedNamesWithValueErrorNamingTheText) {
  const std::vector<std::string> bad = {
      "",
      "floaty32",
      "float",
      "int0",
      "int256",
      "float32x0",
      "float32x",
      "x4",
      "float32x65536",
      "Float32",
      " float32",
      "float32 ",
      "int-8",
      "int+8",
      "float8_e4m3fnX2",
      "float8_e4m3fnz",
      "complex",
      "uint08x",
      std::string("int8\0", 5),
  };
  for (const std::string& text : bad) {
    PFByteArray b = Bytes(text);
    DLDataType t{1, 2, 3};
    EXPECT_NE(PFDataTypeFromString(&b, &t), 0) << "accepted '" << text << "'";
    std::string err = TakeError();
    EXPECT_EQ(err.rfind("ValueError: ", 0), 0u) << err;
    EXPECT_NE(err.find("'" + text + "'"), std::string::npos) << err;
    EXPECT_EQ(t.code, 1) << "output touched on failure";
  }
}

TEST(CDataType, ParseRejectsNullArguments) {
  DLDataType t{};
  EXPECT_NE(PFDataTypeFromString(nullptr, &t), 0);
  EXPECT_EQ(TakeError().rfind("ValueError", 0), 0u);
  PFByteArray b = Bytes("int8");
  EXPECT_NE(PFDataTypeFromString(&b, nullptr), 0);
  EXPECT_EQ(TakeError().rfind("ValueError", 0), 0u);
}

TEST(CDataType, PrintRejectsTypesDLPackDoesNotDefine) {
  const std::vector<DLDataType> bad = {
      {99, 32, 1},
      {kDLFloat, 0, 1},
      {kDLInt, 32, 0},
      {kDLFloat8_e4m3fn, 16, 1},
      {kDLFloat4_e2m1fn, 8, 1},
  };
  for (DLDataType t : bad) {
    PFAny out{};
    EXPECT_NE(PFDataTypeToString(t, &out), 0);
    std::string err = TakeError();
    EXPECT_EQ(err.rfind("ValueError: ", 0), 0u) << err;
    EXPECT_NE(err.find("code=" + std::to_string(t.code)), std::string::npos) << err;
    EXPECT_EQ(out.type_index, kPFTypeNone);
  }
}

TEST(CDataType, LongNamesComeBackAsStringObjects) {
  PFAny out{};
  ASSERT_EQ(PFDataTypeToString(DLDataType{kDLFloat8_e4m3b11fnuz, 8, 4}, &out), 0);
  EXPECT_EQ(out.type_index, kPFTypeString);
  EXPECT_EQ(TakeString(&out), "float8_e4m3b11fnuzx4");
}

}  // namespace
