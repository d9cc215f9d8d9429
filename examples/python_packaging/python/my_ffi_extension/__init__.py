# my_ffi_extension: loads the C++ library shipped inside this package and exposes its functions.
"""An example packedfun extension package.

Importing it loads ``libmy_ffi_extension.so`` (which registers ``my_ffi_extension.*`` global
functions and the ``my_ffi_extension.IntPair`` object type) and binds the functions here.
"""

from packedfun import Object, init_ffi_api, register_object
from packedfun.libinfo import load_package_library

_LIB = load_package_library(__name__, "my_ffi_extension")

init_ffi_api("my_ffi_extension", __name__)


@register_object("my_ffi_extension.IntPair")
class IntPair(Object):
    """A pair of integers defined in C++; fields ``a``, ``b`` and the method ``sum()``."""


__all__ = ["IntPair", "add_one", "greet", "raise_error"]  # noqa: F822 - bound by init_ffi_api
