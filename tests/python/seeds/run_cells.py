# Child process: runs notebook cells (JSON on stdin) in one namespace, one JSON result per cell.
"""Each cell runs like a notebook cell: shared globals, the exception (if any) recorded, the next
cell run regardless. Prints one JSON list: ``{"error": None | [type, message]}`` per cell."""

import json
import sys
import traceback

cells = json.load(sys.stdin)
namespace: dict = {"__name__": "__main__"}
results = []
for index, cell in enumerate(cells):
    try:
        exec(compile(cell["code"], f"<cell {index}>", "exec"), namespace)
        results.append({"error": None})
    except BaseException as exc:  # noqa: BLE001 - a notebook records every failure
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        results.append({"error": [type(exc).__name__, str(exc)], "traceback": tb})
print("RESULTS " + json.dumps(results))
