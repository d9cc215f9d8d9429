# <packedfun/compat/tvm_ffi.h>: apache-tvm-ffi kernel sources compile and run against packedfun.
"""The seeds' add_one_cpu source, with its tvm::ffi names and TVM_FFI_ macros left as written,
built by ``load_inline(..., tvm_ffi_compat=True)`` and by an explicit include in a source file."""

import json
import re
from pathlib import Path

import packedfun
import pytest
import suite

np = suite.require("numpy")
cpp = suite.require("packedfun.cpp")

SEED_CELLS = Path(__file__).resolve().parent / "seeds" / "seed003_python_guide.json"

KERNELS = r"""
#include <packedfun/compat/tvm_ffi.h>

namespace ffi = tvm::ffi;

int64_t checked_half(int64_t x) {
  TVM_FFI_CHECK(x % 2 == 0, ValueError) << "checked_half: " << x << " is odd";
  TVM_FFI_CHECK_GE(x, 0, IndexError) << "checked_half: negative";
  return x / 2;
}

ffi::String kind_of(ffi::Any value) {
  if (value == nullptr) TVM_FFI_THROW(TypeError) << "kind_of: got None";
  return "something";
}

int64_t ndim_of(tvm::ffi::TensorView x) {
  TVM_FFI_ICHECK_GE(x->ndim, 1);
  return x->ndim;
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(checked_half, checked_half);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(kind_of, kind_of);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(ndim_of, ndim_of);
"""


def _seed_add_one_source() -> str:
    """cell 8's cpp_source, exactly as the seed writes it (tvm::ffi names, TVM_FFI_ICHECK)."""
    cells = json.loads(SEED_CELLS.read_text())
    code = next(c["code"] for c in cells if "add_one_cpu(tvm::ffi::TensorView" in c["code"])
    match = re.search(r"cpp_source = '''(.*?)'''", code, re.S)
    assert match is not None
    return match.group(1)


def _check_add_one(fn):
    x = np.arange(5, dtype="float32")
    y = np.empty_like(x)
    fn(x, y)
    np.testing.assert_array_equal(y, x + 1)
    with pytest.raises(packedfun.InternalError, match="x->ndim == 1"):
        fn(np.zeros((2, 2), "float32"), np.zeros((2, 2), "float32"))
    with pytest.raises(packedfun.InternalError, match=r"x->dtype == f32_dtype"):
        fn(np.zeros(3, "float64"), np.zeros(3, "float32"))


def test_load_inline_option_builds_the_seed_source_unchanged(tmp_path):
    source = _seed_add_one_source()
    assert "tvm::ffi::TensorView" in source and "TVM_FFI_ICHECK" in source
    mod = cpp.load_inline("seed_add_one_compat", cpp_sources=source, functions="add_one_cpu",
                          build_directory=str(tmp_path), tvm_ffi_compat=True)  # fmt: skip
    _check_add_one(mod.add_one_cpu)


def test_without_the_option_the_tvm_names_are_unknown(tmp_path):
    with pytest.raises(cpp.BuildError, match="tvm"):
        cpp.build_inline("seed_add_one_plain", cpp_sources=_seed_add_one_source(),
                         functions="add_one_cpu", build_directory=str(tmp_path))  # fmt: skip


def test_explicit_include_with_tvm_export_macro(tmp_path):
    src = tmp_path / "kernels.cc"
    src.write_text(KERNELS + _seed_add_one_source()
                   + "\nTVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one_cpu, add_one_cpu);\n")  # fmt: skip
    mod = cpp.load("tvm_compat_kernels", [str(src)], build_directory=str(tmp_path / "build"),
                   extra_cflags=["-Wall", "-Wextra", "-Werror"])  # fmt: skip
    _check_add_one(mod.add_one_cpu)
    assert mod.checked_half(10) == 5
    with pytest.raises(ValueError, match="checked_half: 3 is odd"):
        mod.checked_half(3)
    with pytest.raises(IndexError, match="negative"):
        mod.checked_half(-4)
    assert mod.kind_of(1) == "something"
    with pytest.raises(TypeError, match="kind_of: got None"):
        mod.kind_of(None)
    assert mod.ndim_of(np.zeros((2, 3))) == 2
    with pytest.raises(packedfun.InternalError):
        mod.ndim_of(np.zeros(()))


# Sources that include tvm-ffi's headers by name: packedfun's tvm/ffi tree answers them.
TREE_KERNELS = r"""
#include <tvm/ffi/tvm_ffi.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

int64_t deref_positive(int64_t x) {
  const int64_t* p = x > 0 ? &x : nullptr;
  return *TVM_FFI_CHECK_NOTNULL(p, ValueError);  // an expression, as in tvm-ffi
}

void add_one_cpu(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  TVM_FFI_DCHECK_EQ(x->ndim, 1);
  for (int64_t i = 0; i < x->shape[0]; ++i) {
    static_cast<float*>(y->data)[i] = static_cast<float*>(x->data)[i] + 1;
  }
}
"""


def test_tvm_ffi_includes_resolve_to_packedfun_tree(tmp_path):
    mod = cpp.load_inline("tvm_tree_kernels", cpp_sources=TREE_KERNELS,
                          functions=["deref_positive", "add_one_cpu"],
                          build_directory=str(tmp_path), tvm_ffi_compat=True)  # fmt: skip
    assert mod.deref_positive(7) == 7
    with pytest.raises(ValueError, match="Check not null: p"):
        mod.deref_positive(-1)
    x = np.arange(4, dtype="float32")
    y = np.empty_like(x)
    mod.add_one_cpu(x, y)
    np.testing.assert_array_equal(y, x + 1)


@pytest.mark.parametrize("header", ["tvm/ffi/c_api.h", "tvm/ffi/extra/json.h"])
def test_tree_refuses_what_packedfun_lacks_by_name(tmp_path, header):
    """No silent stand-in: tvm-ffi's C API (its error cell among it) and extra/ fail the build
    with the header's name and the migration page."""
    source = f"#include <{header}>\nint64_t zero() {{ return 0; }}\n"
    with pytest.raises(cpp.BuildError) as info:
        cpp.build_inline("tvm_tree_refused", cpp_sources=source, functions="zero",
                         build_directory=str(tmp_path), tvm_ffi_compat=True)  # fmt: skip
    assert f"<{header}>" in str(info.value) and "migration-from-tvm-ffi.md" in str(info.value)


# tvm-ffi's spellings on String, Any and TypeIndex, used from a source written for tvm-ffi.
SPELLING_KERNELS = r"""
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/container/tuple.h>
#include <tvm/ffi/container/variant.h>
#include <tvm/ffi/string.h>

#include <unordered_set>

namespace ffi = tvm::ffi;

ffi::String string_ops(ffi::String s, ffi::String needle) {
  size_t at = s.find(needle);
  bool found = at != ffi::String::npos;
  ffi::String where = found ? ffi::String(std::to_string(at)) : ffi::String("none");
  ffi::String tail = found ? s.substr(at + needle.size()) : ffi::String("");
  return where + "|" + tail + "|" + (s.starts_with(needle) ? "S" : "-") +
         (s.ends_with(needle) ? "E" : "-") + (s > needle ? ">" : "<=") +
         std::to_string(s.compare(needle));
}

ffi::String substr_at(ffi::String s, int64_t pos) { return s.substr(static_cast<size_t>(pos), 2); }

int64_t distinct(ffi::String a, ffi::String b, ffi::String c) {
  std::unordered_set<ffi::String> seen{a, b, c};
  return static_cast<int64_t>(seen.size());
}

ffi::String try_cast_float(ffi::Any v) {
  std::optional<double> d = v.try_cast<double>();
  if (!d) return "none";
  return std::to_string(static_cast<int64_t>(*d * 10));
}

int64_t tuple_ops(int64_t a, double b) {
  ffi::Tuple<int64_t, double> t(a, b);
  t.Set<0>(t.get<0>() * 10);
  return t.get<0>() + static_cast<int64_t>(t.get<1>());
}

int64_t variant_int(ffi::Variant<int64_t, ffi::String> v) { return v.get<int64_t>(); }

int64_t products(int64_t a, int64_t b, ffi::TensorView x) {
  ffi::Shape s({a, b});
  return s.Product() * 1000 + x.shape().Product();
}

ffi::String kind(ffi::Any v) {
  switch (v.type_index()) {
    case ffi::TypeIndex::kTVMFFINone: return "none";
    case ffi::TypeIndex::kTVMFFIInt: return "int";
    case ffi::TypeIndex::kTVMFFIFloat: return "float";
    case ffi::TypeIndex::kTVMFFISmallStr:
    case ffi::TypeIndex::kTVMFFIStr: return "str";
    default: return v.type_index() >= ffi::TypeIndex::kTVMFFIStaticObjectBegin ? "object" : "?";
  }
}
"""


def test_tvm_ffi_string_any_and_type_index_spellings(tmp_path):
    mod = cpp.load_inline("tvm_spellings", cpp_sources=SPELLING_KERNELS,
                          functions=["string_ops", "substr_at", "distinct", "try_cast_float",
                                     "tuple_ops", "variant_int", "products", "kind"],
                          build_directory=str(tmp_path), tvm_ffi_compat=True)  # fmt: skip
    # find / substr / starts_with / ends_with / ordering / compare (-1, 0, 1 as tvm-ffi's)
    assert mod.string_ops("hello world", "wor") == "6|ld|--<=-1"
    assert mod.string_ops("abcabc", "abc") == "0|abc|SE>1"
    assert mod.string_ops("abc", "abc") == "0||SE<=0"
    assert mod.string_ops("abc", "zz") == "none||--<=-1"
    assert mod.string_ops("a long string past the small form", "form") == "29||-E<=-1"
    assert mod.substr_at("hello", 3) == "lo"
    assert mod.substr_at("hello", 5) == ""
    with pytest.raises(IndexError, match="position past the end"):
        mod.substr_at("hello", 6)
    # std::hash<String> hashes by content: equal strings, small or not, are one key
    long = "x" * 40
    assert mod.distinct("a", "a", "b") == 2
    assert mod.distinct(long, "x" * 40, long + "y") == 2
    # Any::try_cast converts (int -> double) and gives nullopt where no conversion exists
    assert mod.try_cast_float(1.5) == "15"
    assert mod.try_cast_float(3) == "30"
    assert mod.try_cast_float("no") == "none"
    # Tuple::get/Set, Variant::get, Shape/ShapeView::Product
    assert mod.tuple_ops(3, 2.5) == 32
    assert mod.variant_int(7) == 7
    with pytest.raises(TypeError, match="holds alternative 1"):
        mod.variant_int("seven")
    assert mod.products(3, 4, np.zeros((2, 5))) == 12010
    assert mod.products(0, 4, np.zeros(())) == 1
    # TypeIndex names compare with type_index()
    assert [mod.kind(v) for v in (None, 1, 2.5, "s", "a string longer than seven", [1])] == [
        "none", "int", "float", "str", "str", "object"]  # fmt: skip
