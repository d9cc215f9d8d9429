# Sphinx configuration of the packedfun documentation site (built by tests/python/test_docs.py).
"""Build with ``sphinx-build -W --keep-going docs <outdir>`` from a checkout.

The pages are the Markdown files of ``docs/`` (MyST); the API reference is generated from the
docstrings of the importable ``packedfun`` (the installed package, or ``PYTHONPATH=python`` in a
built checkout) and the C ABI reference from ``include/packedfun/c_api.h`` (``_ext/c_abi.py``).
"""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "packedfun"
author = "packedfun contributors"
copyright = "packedfun contributors"
release = version = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "c_abi",
    "cpp_api",
    "benchmark_results",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
# changelog.md and every page other engineers add are picked up by index.md's glob toctree.
exclude_patterns = ["_build", "_ext", "**/.*"]

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# Docstrings are NumPy style (STYLE.md).
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"

html_theme = "alabaster"
html_title = "packedfun"
html_static_path: list[str] = []
