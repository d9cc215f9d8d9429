# apache-tvm-ffi's C++ unit tests (its sdist's tests/cpp) built against packedfun's tvm/ffi tree.
"""Each test file of the pinned sdist is compiled unchanged against the installed packedfun's
``tvm/ffi`` header tree; a ``TEST`` whose code does not compile is left out (the machinery is
``tvm_ffi_cpp_suite.py``, which also prints the per-file table when run by hand). The rest is
linked with GoogleTest and ``libpackedfun`` and run.

``PASSING`` lists, per file, the tests that compile and pass today. A listed test that no longer
does fails this test (a regression of the tvm-ffi C++ surface), and so does a test that passes but
is not listed (add it), so the list only grows. Nothing of tvm-ffi is copied into this repository:
the sources come from the cached sdist (``tvm_ffi_sdist.py``)."""

from __future__ import annotations

import os

import packedfun.config
import pytest
import suite
import tvm_ffi_cpp_suite
import tvm_ffi_sdist

pytestmark = [
    pytest.mark.deselect_if(
        os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
        reason="C++ programs only: no Python backend is involved",
    ),
    suite.full_only(
        "builds apache-tvm-ffi's 29 C++ test files outside extra/ (4-5 minutes on 2 loaded cores)"
    ),
]

#: The tests of apache-tvm-ffi 0.1.15's tests/cpp that compile and pass on packedfun, by file.
PASSING: dict[str, list[str]] = {
    "test_array.cc": [
        "Array.Basic",
        "Array.FuncArrayAnyArg",
        "Array.Iterator",
    ],
    "test_device.cc": [
        "Device.RejectInvalidStrings",
    ],
    "test_dtype.cc": [
        "DType.StringConversionAllDLPackTypes",
    ],
    "test_dict.cc": [
        "Dict.AnyConversion",
        "Dict.Basic",
        "Dict.Clear",
        "Dict.DefaultConstruction",
        "Dict.Erase",
        "Dict.InitializerList",
        "Dict.InplaceSwitchTo",
        "Dict.ManyElements",
        "Dict.PODKeys",
        "Dict.SharedMutation",
        "Dict.UpdateExistingKey",
    ],
    "test_error.cc": [
        "CheckError.CheckBinaryOps",
        "CheckError.DCheck",
        "CheckError.PassingCondition",
    ],
    "test_example.cc": [
        "Example.Any",
        "Example.Array",
        "Example.Map",
        "Example.ObjectPtr",
        "Example.Optional",
        "Example.String",
    ],
    "test_expected.cc": [
        "Expected.ArrayType",
        "Expected.BadAccessThrowsOriginalError",
        "Expected.BasicErr",
        "Expected.BasicOk",
        "Expected.LambdaDirectCall",
        "Expected.MoveSemantics",
        "Expected.NestedOptional",
        "Expected.ObjectRefInheritance",
        "Expected.ObjectRefType",
        "Expected.RvalueErrorAccess",
        "Expected.RvalueValueAccess",
        "Expected.StringType",
        "Expected.TryCastIncompatible",
        "Expected.TypeTraitsRoundtrip",
        "Expected.ValueOrWithError",
        "ExpectedRvalueMove.DLDataTypeMoveCompiles",
        "ExpectedRvalueMove.PodTypesCompile",
        "ExpectedRvalueMove.ValueOrMovesNotCopies",
        "ExpectedRvalueMove.ValueOrRvalueErrorPath",
    ],
    "test_function.cc": [
        "Func.PassReturnAny",
        "Func.TypedFunctionAsAny",
        "Func.TypedFunctionAsAnyView",
    ],
    "test_list.cc": [
        "List.Basic",
        "List.EmptyListDestructorDoesNotCrash",
        "List.SharedMutation",
    ],
    "test_map.cc": [
        "Map.Object",
        "Map.Str",
    ],
    "test_object.cc": [
        "Object.MakeObjectPropagatesConstructorException",
    ],
    "test_object_ptr.cc": [
        "ObjectPtr.AnyRoundTripUsesRuntimeAncestry",
    ],
    "test_optional.cc": [
        "Optional.OptionalInArray",
        "Optional.StorageEnabledPassThrough",
    ],
    "test_string.cc": [
        "String.Assignment",
        "String.CString",
        "String.Cast",
        "String.Compare",
        "String.CompareSameMemoryRegionDifferentSize",
        "String.Comparisons",
        "String.Concat",
        "String.CopyFromStd",
        "String.EndsWith",
        "String.Find",
        "String.NullByteHandling",
        "String.StartsWith",
        "String.StdHash",
        "String.Substr",
        "String.compare",
        "String.empty",
        "String.hash",
    ],
    "test_tensor.cc": [
        "Tensor.GetDataSize",
    ],
    "test_tuple.cc": [
        "Tuple.ArrayIterForwardSingleElem",
        "Tuple.ArrayIterForwarding",
    ],
    "test_variant.cc": [
        "Variant.Basic",
    ],
}


def test_tvm_ffi_cpp_tests_that_pass_keep_passing(tmp_path):
    tests = os.path.join(tvm_ffi_sdist.source_root(), "tests", "cpp")
    include = packedfun.config.get_include_dir()
    includes = [os.path.join(include, "packedfun", "compat"), include]
    results = tvm_ffi_cpp_suite.run_suite(
        tests,
        includes,
        packedfun.config.get_lib_dir(),
        str(tmp_path),
        tvm_ffi_cpp_suite.gtest_cache_dir(),
    )
    print(tvm_ffi_cpp_suite.table(results))
    passed = {r.name: sorted(r.passed) for r in results if r.passed}
    pinned = {f: sorted(names) for f, names in PASSING.items()}
    lost = {
        f: sorted(set(names) - set(passed.get(f, [])))
        for f, names in pinned.items()
        if set(names) - set(passed.get(f, []))
    }
    why = {r.name: r.error or f"failed: {r.failed}" for r in results if r.name in lost}
    assert not lost, f"tvm-ffi C++ tests that passed no longer do: {lost}\n{why}"
    new = {
        f: sorted(set(names) - set(pinned.get(f, [])))
        for f, names in passed.items()
        if set(names) - set(pinned.get(f, []))
    }
    assert not new, f"these tvm-ffi C++ tests pass now: add them to PASSING: {new}"


def test_tree_answers_every_tvm_ffi_header():
    """Every header name of the pinned apache-tvm-ffi has its file in packedfun's tree (a
    forwarding header, or one that refuses the API by name)."""
    theirs = os.path.join(tvm_ffi_sdist.source_root(), "include")
    ours = os.path.join(packedfun.config.get_include_dir(), "packedfun", "compat")
    names = sorted(
        os.path.relpath(os.path.join(d, f), theirs)
        for d, _, files in os.walk(os.path.join(theirs, "tvm"))
        for f in files
        if f.endswith(".h")
    )
    assert names
    missing = [n for n in names if not os.path.isfile(os.path.join(ours, n))]
    assert not missing, missing
