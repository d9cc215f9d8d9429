# Tensor return cases (issue 11): a torch tensor echoed back as a torch.Tensor, beside tvm-ffi.
"""``testing.echo(t)`` with ``t`` a torch CPU tensor, through packedfun and apache-tvm-ffi (both
return a ``torch.Tensor``), and through packedfun with ``tensor_return("packedfun")`` (the cost of
returning a ``packedfun.Tensor`` instead)."""

from __future__ import annotations

from harness import Case, Target, call_loop, empty_loop
from peers import Peers


def _kept_loop(echo, arg):
    """A loop calling ``echo(arg)`` with packedfun.Tensor results (the switch set once)."""
    import packedfun

    inner = call_loop(echo, arg)

    def loop(n: int) -> None:
        with packedfun.tensor_return("packedfun"):
            inner(n)

    return loop


def make_cases(peers: Peers) -> list:
    """Return the torch echo cases (none without torch)."""
    try:
        import torch
    except ImportError:
        return []
    t = torch.zeros(4)
    framework, kept = {}, {}
    if "packedfun" in peers.loaded:
        import packedfun

        echo = packedfun.get_global_func("testing.echo")
        if type(echo(t)) is not torch.Tensor:
            raise AssertionError("packedfun: testing.echo(torch) did not return a torch.Tensor")
        framework["packedfun"] = call_loop(echo, t)
        kept["packedfun"] = _kept_loop(echo, t)
    if "tvm-ffi" in peers.loaded:
        import tvm_ffi

        tvm_echo = tvm_ffi.get_global_func("testing.echo")
        if type(tvm_echo(t)) is not torch.Tensor:
            raise AssertionError("tvm-ffi: testing.echo(torch) did not return a torch.Tensor")
        framework["tvm-ffi"] = call_loop(tvm_echo, t)
        kept["tvm-ffi"] = framework["tvm-ffi"]
    target = Target("≥ 2× faster than tvm-ffi", faster_than=("tvm-ffi", 2.0))
    return [
        Case("torch float32[4] echo → torch.Tensor", framework, empty_loop(1), target,
             group="tensor"),
        Case("torch float32[4] echo → packedfun.Tensor (tvm-ffi: → torch)", kept,
             empty_loop(1), None, group="tensor"),
    ]  # fmt: skip
