# packedfun.stubgen: stubs from metadata, mypy --strict on them, --check, the shipped testing.pyi.
import os
import subprocess
import sys

import packedfun
import pytest
import suite
from packedfun import stubgen

PKG = os.path.dirname(os.path.abspath(packedfun.__file__))
SHIPPED = os.path.join(PKG, "testing.pyi")
TESTING_ARGS = ["--prefix", "testing", "--python-module", "packedfun.testing"]


def _stubgen(*args, backend=None):
    env = dict(os.environ)
    if backend is not None:
        env["PACKEDFUN_BACKEND"] = backend
    return subprocess.run(
        [sys.executable, "-m", "packedfun.stubgen", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("backend", ["_core", "ctypes"])
def test_shipped_testing_stub_is_current(backend):
    proc = _stubgen(*TESTING_ARGS, "-o", SHIPPED, "--check", backend=backend)
    assert proc.returncode == 0, (
        "python/packedfun/testing.pyi is stale; regenerate it with "
        "`python -m packedfun.stubgen --prefix testing --python-module packedfun.testing "
        "-o python/packedfun/testing.pyi`\n" + proc.stderr
    )


def test_check_fails_on_stale_or_missing_stub(tmp_path):
    out = tmp_path / "t.pyi"
    assert _stubgen(*TESTING_ARGS, "-o", str(out), "--check").returncode == 1  # missing
    assert _stubgen(*TESTING_ARGS, "-o", str(out)).returncode == 0
    assert _stubgen(*TESTING_ARGS, "-o", str(out), "--check").returncode == 0
    out.write_text(out.read_text().replace("def add_kw(a: int", "def add_kw(a: str"))
    proc = _stubgen(*TESTING_ARGS, "-o", str(out), "--check")
    assert proc.returncode == 1 and "stale" in proc.stderr


def test_stub_text_from_metadata():
    text = stubgen.generate(["testing"], python_module="packedfun.testing")
    assert text == stubgen.generate(["testing"], python_module="packedfun.testing")
    assert "def add_kw(a: int, b: int = 2) -> int: ..." in text
    assert "def head(xs: Sequence[int], n: int | None = None) -> packedfun.Array: ..." in text
    assert 'greeting: str = "hello",' in text and "scale: float = 0.5," in text
    assert "class TestIntPair(packedfun.Object):" in text
    assert "    def __init__(self, a: int, b: int = 0) -> None: ..." in text
    assert "    @property\n    def a(self) -> int: ..." in text
    assert "def echo(*args: Any) -> Any: ..." in text  # no metadata: anything goes
    assert "def library_path() -> str: ..." in text  # the module's own Python function
    # Without a Python module every object type under the prefix becomes a class.
    text = stubgen.generate(["testing"])
    assert "class Derived(Base):" in text and "class MoreDerived(Derived):" in text


@pytest.mark.parametrize(
    ("schema", "param", "result"),
    [
        ("int", "int", "int"),
        ("Optional[Array[int]]", "Sequence[int] | None", "packedfun.Array | None"),
        ("Map[str, Array[float]]", "Mapping[str, Sequence[float]]", "packedfun.Map"),
        ("Callable[[int, str], float]", "Callable[[int, str], float]", "packedfun.Function"),
        ("Variant[int, str]", "int | str", "int | str"),
        ("Tuple[int, str]", "tuple[int, str]", "packedfun.Array"),
        ("list[int; 3]", "Sequence[int]", "packedfun.Array"),
        ("Tensor", "Any", "packedfun.Tensor"),
        ("mylib.Unknown", "Any", "Any"),
        ("Array[", "Any", "Any"),
    ],
)
def test_annotations_of_type_schemas(schema, param, result):
    assert stubgen.annotation(schema, param=True) == param
    assert stubgen.annotation(schema, param=False) == result


def _mypy(tmp_path, *files):
    env = dict(os.environ)
    root = os.path.dirname(PKG)
    if "site-packages" not in root:  # in-tree: let mypy find packedfun beside the stub
        env["MYPYPATH"] = root
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
         "--cache-dir", str(tmp_path / "cache"), *files],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=300,
    )  # fmt: skip


def test_generated_stub_passes_mypy_strict(tmp_path):
    suite.require("mypy")
    stub = tmp_path / "mytesting.pyi"
    assert _stubgen(*TESTING_ARGS, "-o", str(stub)).returncode == 0
    good = tmp_path / "use_good.py"
    good.write_text(
        "import mytesting\n"
        "x: int = mytesting.add_kw(1, b=2) + mytesting.add_kw(3)\n"
        "p = mytesting.TestIntPair(1, b=2)\n"
        "y: int = p.a + p.b\n"
        "s: str = mytesting.greet('a', times=2)\n"
    )
    proc = _mypy(tmp_path, str(stub), str(good))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = tmp_path / "use_bad.py"
    bad.write_text("import mytesting\nmytesting.add_kw('x', c=2)\n")
    proc = _mypy(tmp_path, str(stub), str(bad))
    assert proc.returncode != 0
    assert 'Unexpected keyword argument "c"' in proc.stdout
    assert 'incompatible type "str"; expected "int"' in proc.stdout


def test_stub_of_python_defined_types():
    from typing import Optional

    from packedfun.dataclasses import KW_ONLY, field, method, py_class

    @py_class("stub_py.Node")
    class Node(packedfun.Object):
        name: str
        weight: float = 1.0
        kids: list = field(default_factory=list)
        _: KW_ONLY
        parent: Optional["Node"] = None

        @method
        def scaled(self, k: int, note: Optional[str] = None) -> float:
            """Weight times k."""
            return self.weight * k

        @method
        @staticmethod
        def make(name: str) -> "Node":
            return Node(name)

    @py_class("stub_py.Leaf")
    class Leaf(Node):
        owner: Optional[Node] = None

    text = stubgen.generate(["stub_py"])
    assert "class Node(packedfun.Object):" in text and "class Leaf(Node):" in text
    assert "    parent: Node | None\n" in text and "    owner: Node | None\n" in text
    assert "    weight: float\n" in text and "    kids: packedfun.Array\n" in text
    assert (
        "    def __init__(\n        self,\n        name: str,\n        weight: float = 1.0,\n"
        "        kids: Sequence[Any] = ...,\n        *,\n        parent: Node | None = None,\n"
        "    ) -> None: ..."
    ) in text
    assert "    def scaled(self, k: int, note: str | None = None) -> float: ..." in text
    assert "    @staticmethod\n    def make(name: str) -> Node: ..." in text
    assert "def __init__(self, *args: Any)" not in text
    compile(text, "stub_py.pyi", "exec")  # valid Python


def test_stub_of_enums_defined_in_python():
    from packedfun.dataclasses import Enum, StrEnum, entry

    class Shade(Enum, type_key="stub_pe.Shade"):
        weight: float
        LIGHT = entry(0.5)
        DARK = entry(2.0)

    class Speed(StrEnum, type_key="stub_pe.Speed"):
        FAST = "fast"

    text = stubgen.generate(["stub_pe"])
    assert "import packedfun\nimport packedfun.dataclasses\n" in text
    assert "class Shade(packedfun.dataclasses.Enum):\n    LIGHT: Shade\n    DARK: Shade\n" in text
    assert "class Speed(packedfun.dataclasses.StrEnum):\n    FAST: Speed\n" in text
    assert "    @property\n    def weight(self) -> float: ..." in text
    assert "__init__" not in text  # the class looks variants up, it makes none
    compile(text, "stub_pe.pyi", "exec")
