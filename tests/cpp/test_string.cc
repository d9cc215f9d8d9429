// Tests of String and Bytes: small and object forms, sharing, comparisons, conversions.
#include <gtest/gtest.h>
#include <packedfun/packedfun.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using packedfun::Any;
using packedfun::AnyView;
using packedfun::Bytes;
using packedfun::String;

TEST(String, SmallAndObjectForms) {
  String empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_STREQ(empty.c_str(), "");
  String small("seven77");
  EXPECT_EQ(small.raw().type_index, kPFTypeSmallStr);
  EXPECT_EQ(small.size(), 7u);
  EXPECT_STREQ(small.c_str(), "seven77");
  String big("eight888");
  EXPECT_EQ(big.raw().type_index, kPFTypeString);
  EXPECT_STREQ(big.c_str(), "eight888");
}

TEST(String, CopiesShareTheObject) {
  String a(std::string(100, 'a'));
  PFObject* obj = a.raw().v_obj;
  EXPECT_EQ(obj->ref_count, 1u);
  {
    String b = a;
    EXPECT_EQ(b.raw().v_obj, obj);
    EXPECT_EQ(b.data(), a.data());
    EXPECT_EQ(obj->ref_count, 2u);
    String c = std::move(b);
    EXPECT_EQ(obj->ref_count, 2u);
    EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
  }
  EXPECT_EQ(obj->ref_count, 1u);
}

TEST(String, Comparisons) {
  String a("abc"), b("abd");
  EXPECT_TRUE(a == "abc");
  EXPECT_TRUE("abc" == a);
  EXPECT_TRUE(a == std::string("abc"));
  EXPECT_TRUE(a != b);
  EXPECT_TRUE(a < b);
  EXPECT_EQ(a.compare("abc"), 0);
  std::string s = a;
  EXPECT_EQ(s, "abc");
}

TEST(String, EmbeddedNul) {
  String s("a\0b", 3);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.str(), std::string("a\0b", 3));
  EXPECT_FALSE(s == "a");
}

TEST(String, TryFromEveryStringKind) {
  PFAny raw{};
  raw.type_index = kPFTypeRawStr;
  raw.v_c_str = "from a raw C string";
  EXPECT_EQ(*String::TryFrom(raw), "from a raw C string");

  PFByteArray arr{"view!", 5};
  PFAny view{};
  view.type_index = kPFTypeStrView;
  view.v_ptr = &arr;
  EXPECT_EQ(*String::TryFrom(view), "view!");

  String obj(std::string(9, 'o'));
  std::optional<String> shared = String::TryFrom(obj.raw());
  EXPECT_EQ(shared->raw().v_obj, obj.raw().v_obj);

  PFAny bytes_view{};
  bytes_view.type_index = kPFTypeBytesView;
  bytes_view.v_ptr = &arr;
  EXPECT_FALSE(String::TryFrom(bytes_view).has_value());
  EXPECT_FALSE(Bytes::TryFrom(view).has_value());
  EXPECT_EQ(Bytes::TryFrom(bytes_view)->str(), "view!");
}

TEST(Bytes, FormsAndEquality) {
  Bytes small("\x00\x01\x02", 3);
  EXPECT_EQ(small.raw().type_index, kPFTypeSmallBytes);
  EXPECT_EQ(small.size(), 3u);
  EXPECT_EQ(small.data()[1], '\x01');
  Bytes big(std::string(64, '\xff'));
  EXPECT_EQ(big.raw().type_index, kPFTypeBytes);
  EXPECT_EQ(big.size(), 64u);
  EXPECT_TRUE(big == Bytes(std::string(64, '\xff')));
  EXPECT_TRUE(small != big);
  Any a = big;
  EXPECT_EQ(a.type_index(), kPFTypeBytes);
  EXPECT_EQ(a.type_name(), "bytes");
  EXPECT_EQ(a.cast<Bytes>(), big);
  EXPECT_FALSE(a.as<String>().has_value());
}

TEST(String, AnyRoundTrip) {
  String s("through any, as an object");
  Any a = s;
  EXPECT_EQ(a.raw().v_obj, s.raw().v_obj);
  EXPECT_EQ(a.cast<String>(), s);
  EXPECT_EQ(a.cast<std::string>(), "through any, as an object");
}

// A typed Function called the way bindings call it: a StrView borrowed from the caller.
Any CallWithView(const packedfun::Function& f, const std::string& text) {
  PFByteArray bytes{text.data(), text.size()};
  PFAny arg{};
  arg.type_index = kPFTypeStrView;
  arg.v_ptr = &bytes;
  return f.CallPacked(packedfun::PackedArgs(&arg, 1));
}

TEST(String, TypedParameterBorrowsTheCallersBytes) {
  std::string text(40, 'b');
  bool borrowed = false;
  const char* seen = nullptr;
  auto f = packedfun::Function::FromTyped([&](const String& s) {
    borrowed = s.is_borrowed();
    seen = s.view().data();
    return static_cast<int64_t>(s.size());
  });
  EXPECT_EQ(CallWithView(f, text).cast<int64_t>(), 40);
  EXPECT_TRUE(borrowed);
  EXPECT_EQ(seen, text.data());  // no copy
  // By value too (the parameter is built in place, never moved from a temporary).
  auto g = packedfun::Function::FromTyped([&](String s) { return s.is_borrowed(); });
  EXPECT_TRUE(CallWithView(g, text).cast<bool>());
  // Short strings go inline: nothing to borrow.
  EXPECT_FALSE(CallWithView(g, "short").cast<bool>());
}

TEST(String, BorrowedParameterCopiesWhenItEscapes) {
  std::string text = "a string longer than seven bytes";
  std::vector<String> kept;
  Any stored;
  const char* c_str = nullptr;
  auto f = packedfun::Function::FromTyped([&](const String& s) {
    EXPECT_EQ(s.view().data(), text.data());  // borrowed until...
    c_str = s.c_str();                        // ...NUL-terminated bytes are asked for: a copy
    EXPECT_NE(c_str, text.data());
    EXPECT_STREQ(c_str, "a string longer than seven bytes");
    EXPECT_EQ(s.c_str(), c_str);  // made once
    kept.push_back(s);            // copy: owned
    String moved = String(s);
    kept.push_back(std::move(moved));
    stored = s;  // into an Any: owned
    return s;    // the result: owned
  });
  Any result = CallWithView(f, text);
  text.assign(text.size(), 'X');  // the caller's bytes change after the call
  EXPECT_EQ(result.cast<String>(), "a string longer than seven bytes");
  ASSERT_EQ(kept.size(), 2u);
  for (const String& k : kept) {
    EXPECT_FALSE(k.is_borrowed());
    EXPECT_EQ(k, "a string longer than seven bytes");
  }
  EXPECT_EQ(stored.type_index(), kPFTypeString);
  EXPECT_EQ(stored.cast<String>(), "a string longer than seven bytes");
}

// The same, from a caller that promises the bytes end in a NUL (a Python str, a std::string).
Any CallWithNulView(const packedfun::Function& f, const std::string& text) {
  PFByteArray bytes{text.data(), text.size()};
  PFAny arg{};
  arg.type_index = kPFTypeStrView;
  arg.zero_padding = PACKEDFUN_VIEW_NUL_TERMINATED;
  arg.v_ptr = &bytes;
  return f.CallPacked(packedfun::PackedArgs(&arg, 1));
}

TEST(String, NulTerminatedParameterGivesTheCallersBytesToCStr) {
  std::string text = "a string longer than seven bytes";
  std::vector<String> kept;
  auto f = packedfun::Function::FromTyped([&](const String& s) {
    EXPECT_TRUE(s.is_borrowed());
    EXPECT_EQ(s.c_str(), text.data());  // no copy: the caller promised the NUL
    EXPECT_EQ(s.data(), text.data());
    EXPECT_EQ(s.view().data(), text.data());
    EXPECT_EQ(s.raw().zero_padding, PACKEDFUN_VIEW_NUL_TERMINATED);  // passed on as promised
    kept.push_back(s);                                               // still copied when it escapes
    EXPECT_NE(kept.back().c_str(), text.data());
    return s;
  });
  Any result = CallWithNulView(f, text);
  text.assign(text.size(), 'X');
  EXPECT_EQ(result.cast<String>(), "a string longer than seven bytes");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_FALSE(kept[0].is_borrowed());
  EXPECT_EQ(kept[0], "a string longer than seven bytes");
}

TEST(String, NulTerminatedBytesParameterGivesTheCallersBytes) {
  std::string text("raw\0bytes, more than seven", 26);
  PFByteArray bytes{text.data(), text.size()};
  PFAny arg{};
  arg.type_index = kPFTypeBytesView;
  arg.zero_padding = PACKEDFUN_VIEW_NUL_TERMINATED;
  arg.v_ptr = &bytes;
  auto f = packedfun::Function::FromTyped([&](packedfun::Bytes b) {
    EXPECT_EQ(b.size(), 26u);
    return b.data() == text.data();
  });
  EXPECT_TRUE(f.CallPacked(packedfun::PackedArgs(&arg, 1)).cast<bool>());
  arg.zero_padding = 0;  // no promise (an older caller): copied
  EXPECT_FALSE(f.CallPacked(packedfun::PackedArgs(&arg, 1)).cast<bool>());
}

TEST(String, StdStringArgumentsPromiseTheirNul) {
  // A C++ caller passing std::string marks the view; the callee's c_str() is the caller's.
  std::string text(30, 's');
  const char* seen = nullptr;
  auto f = packedfun::Function::FromTyped([&](const String& s) {
    seen = s.c_str();
    return static_cast<int64_t>(std::strlen(s.c_str()));
  });
  EXPECT_EQ(f(text).cast<int64_t>(), 30);
  EXPECT_EQ(seen, text.data());
  // A std::string_view promises nothing (its bytes may run on): the callee copies.
  std::string longer = text + "tail";
  EXPECT_EQ(f(std::string_view(longer).substr(0, 30)).cast<int64_t>(), 30);
  EXPECT_NE(seen, longer.data());
}

TEST(String, StringViewParameter) {
  // In the umbrella header (no stl.h): borrowed, no copy, errors as for String.
  std::string text = "a view of the caller's bytes";
  const char* seen = nullptr;
  auto f = packedfun::Function::FromTyped(
      [&](std::string_view s) {
        seen = s.data();
        return s.substr(2);
      },
      "t.view");
  EXPECT_EQ(CallWithView(f, text).cast<std::string>(), "view of the caller's bytes");
  EXPECT_EQ(seen, text.data());
  EXPECT_EQ(CallWithView(f, "short").cast<std::string>(), "ort");  // inline small form
  EXPECT_EQ(f(String("an owned String object")).cast<std::string>(), " owned String object");
  auto g =
      packedfun::Function::FromTyped([](int64_t, const std::string_view& s) { return s; }, "t.g");
  try {
    g(1, 2);
    FAIL() << "expected a TypeError";
  } catch (const packedfun::Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_NE(std::string(e.what()).find("t.g: argument 1: expected str, got int"),
              std::string::npos)
        << e.what();
  }
}

TEST(String, BorrowedParameterErrorsStillNameTheArgument) {
  auto f = packedfun::Function::FromTyped([](int64_t, const String& s) { return s; }, "t.f");
  try {
    f(1, 2);
    FAIL() << "expected a TypeError";
  } catch (const packedfun::Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_NE(std::string(e.what()).find("t.f: argument 1: expected str, got int"),
              std::string::npos)
        << e.what();
  }
}

TEST(PackedArgs, StrViewBorrows) {
  std::string text = "borrowed name of some length";
  PFByteArray bytes{text.data(), text.size()};
  PFAny args[2] = {};
  args[0].type_index = kPFTypeStrView;
  args[0].v_ptr = &bytes;
  args[1].type_index = kPFTypeInt;
  packedfun::PackedArgs packed(args, 2);
  ASSERT_TRUE(packed.str_view(0).has_value());
  EXPECT_EQ(packed.str_view(0)->data(), text.data());
  EXPECT_FALSE(packed.str_view(1).has_value());
  EXPECT_THROW(packed.str_view(2), packedfun::Error);
}

}  // namespace
