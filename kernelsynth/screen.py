"""Static screen of a candidate's Python source, run by the parent before the candidate is
imported (references/VERIFICATION.md, rule 20).

A kernel has no reason to read the interpreter's frames or heap, or to import the harness. Those
are the ways a candidate reaches the harness's state in its own process (its locals, its
result, its pipe) -- the attacks that the in-process checks cannot see and that can forge a
result. The screen flags them by name in the syntax tree. It is a tripwire, not a proof: code
built from strings at run time (``getattr(sys, "_get" + "frame")``) passes it, and the
independent check (rule 18) still stands behind it.
"""

from __future__ import annotations

import ast
from typing import List

#: Modules a kernel does not need and an attack on the harness does.
FORBIDDEN_MODULES = {"gc", "inspect", "ctypes", "multiprocessing", "kernelsynth", "traceback"}
#: Attribute names that reach frames, the heap or tracing hooks.
FORBIDDEN_ATTRIBUTES = {"_getframe", "currentframe", "f_locals", "f_back", "f_globals", "tb_frame", "gi_frame",
                        "settrace", "setprofile", "get_objects", "get_referrers", "get_referents", "_current_frames"}


def screen_source(source: str) -> List[str]:
    """What in ``source`` reaches outside a kernel's business, as ``"line N: what"`` strings
    (empty: nothing found). Raises SyntaxError for source that does not parse (the worker's
    import reports it as the candidate's own error, so callers may ignore it). Source nested too
    deep for the parser (it raises MemoryError or RecursionError: 200 KB of unary minus,
    tests/adversarial/sandbox_s7 screen_crash) is a finding: it ended the run when it escaped."""
    found: List[str] = []
    try:
        tree = ast.parse(source)
    except (MemoryError, RecursionError) as e:
        return [f"the source is nested too deep to parse ({type(e).__name__})"]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FORBIDDEN_MODULES:
                    found.append(f"line {node.lineno}: imports {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
                found.append(f"line {node.lineno}: imports from {node.module}")
        elif isinstance(node, ast.Attribute):
            if node.attr in FORBIDDEN_ATTRIBUTES:
                found.append(f"line {node.lineno}: uses .{node.attr}")
            elif node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys":
                found.append(f"line {node.lineno}: uses sys.modules")
        elif isinstance(node, ast.Name) and node.id == "__import__":
            found.append(f"line {node.lineno}: uses __import__")
    return found
