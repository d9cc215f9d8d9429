# `python -m packedfun.demo`: a one-screen tour of calls and errors crossing Python and C++.
"""Demonstration: C++ called from Python, Python called from C++, and errors crossing over."""

from __future__ import annotations

import packedfun
from packedfun import testing


def main() -> None:
    """Runs the demonstration, printing one line per step."""
    print(f"packedfun {packedfun.__version__} (backend: {packedfun.BACKEND})")

    # 1. A C++ function called from Python.
    print("1. C++ testing.add_int(40, 2) ->", testing.add_int(40, 2))

    # 2. A Python callback called from C++: testing.apply(f, *args) calls f(*args) in C++.
    result = testing.apply(lambda name: f"hello, {name}", "world")
    print("2. C++ testing.apply(<Python lambda>, 'world') ->", repr(result))

    # 3. A Python function registered globally and called by name from C++.
    @packedfun.register_global_func("demo.square", override=True)
    def square(x):
        return x * x

    print(
        "3. C++ testing.call_global('demo.square', 12) ->", testing.call_global("demo.square", 12)
    )
    packedfun.remove_global_func("demo.square")

    # 4. A C++ error arriving as the right Python exception.
    try:
        testing.test_raise_error("ValueError", "bad value from C++")
    except ValueError as err:
        kind = getattr(err, "kind", None)
        print(f"4. C++ error caught in Python: {type(err).__name__}: {err} (kind={kind!r})")


if __name__ == "__main__":
    main()
