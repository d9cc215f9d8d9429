# examples/inline_module: the Python guide's inline C++ module, built on the fly (packedfun.cpp).
"""Write plain C++ in a Python string, compile it on the fly, call it.

Usage::

    python examples/inline_module/inline_module.py [BUILD_DIRECTORY]

The first run compiles (a second or two); later runs hit the build cache and start no compiler.
When packedfun has tensors (``packedfun/tensor.h``), ``add_one_cpu`` writes ``x + 1`` into ``y``
for NumPy arrays as in the guide; ``add_int`` shows the same flow for plain integers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import packedfun
import packedfun.config
import packedfun.cpp

INT_SOURCE = r"""
int64_t add_int(int64_t a, int64_t b) { return a + b; }
"""

TENSOR_SOURCE = r"""
void add_one_cpu(packedfun::TensorView x, packedfun::TensorView y) {
  DLDataType f32{kDLFloat, 32, 1};
  if (x->ndim != 1 || y->ndim != 1) throw std::invalid_argument("x and y must be 1-d");
  if (x->dtype.code != f32.code || x->dtype.bits != f32.bits ||
      y->dtype.code != f32.code || y->dtype.bits != f32.bits) {
    throw std::invalid_argument("x and y must be float32");
  }
  if (x->shape[0] != y->shape[0]) throw std::invalid_argument("x and y must have one shape");
  const float* src = static_cast<const float*>(x->data);
  float* dst = static_cast<float*>(y->data);
  for (int64_t i = 0; i < x->shape[0]; ++i) dst[i] = src[i] + 1;
}
"""


def has_tensors() -> bool:
    """Whether this packedfun has tensors in C++ and Python, and NumPy is there to make arrays."""
    header = Path(packedfun.config.get_include_dir()) / "packedfun" / "tensor.h"
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return header.exists() and hasattr(packedfun, "from_dlpack")


def run_int(build_directory: str | None) -> None:
    mod = packedfun.cpp.load_inline(
        "inline_add_int",
        cpp_sources=INT_SOURCE,
        functions={"add_int": "add_int(a, b) -> int: the sum of two integers."},
        build_directory=build_directory,
    )
    print(f"add_int(40, 2) -> {mod.add_int(40, 2)}")
    print(f"add_int.__doc__ -> {mod.add_int.__doc__!r}")
    path = packedfun.cpp.build_inline(
        "inline_add_int",
        cpp_sources=INT_SOURCE,
        functions={"add_int": "add_int(a, b) -> int: the sum of two integers."},
        build_directory=build_directory,
    )
    again = packedfun.load_module(path)
    print(f"build_inline + load_module: add_int(1, 2) -> {again.add_int(1, 2)}")


def run_tensor(build_directory: str | None) -> None:
    import numpy as np

    mod = packedfun.cpp.load_inline(
        "inline_add_one",
        cpp_sources="#include <stdexcept>\n" + TENSOR_SOURCE,
        functions="add_one_cpu",
        build_directory=build_directory,
    )
    x = np.array([1, 2, 3, 4, 5], dtype=np.float32)
    y = np.empty_like(x)
    mod.add_one_cpu(x, y)
    np.testing.assert_allclose(y, x + 1)
    print(f"add_one_cpu({x.tolist()}) -> {y.tolist()}")


def main(build_directory: str | None = None) -> None:
    run_int(build_directory)
    if has_tensors():
        run_tensor(build_directory)
    else:
        print("(this packedfun has no tensors: add_one_cpu skipped)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
