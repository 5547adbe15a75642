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
import re
from typing import List

#: Modules a kernel does not need and an attack on the harness does.
FORBIDDEN_MODULES = {"gc", "inspect", "ctypes", "multiprocessing", "kernelsynth", "traceback",
                     # other processes and shared mappings: work the census of this process cannot see
                     # (redteam_s24 cs_f1: the sums computed in an os.fork child, read back through an mmap)
                     "subprocess", "_posixsubprocess", "mmap", "pty"}
#: Attribute names that reach frames, the heap or tracing hooks.
FORBIDDEN_ATTRIBUTES = {"_getframe", "currentframe", "f_locals", "f_back", "f_globals", "tb_frame", "gi_frame",
                        "settrace", "setprofile", "get_objects", "get_referrers", "get_referents", "_current_frames",
                        # memory torch does not own turned into a storage (redteam_s9 fa1: outputs on a ring of
                        # slots of a kept buffer) or a shared file mapping written again later
                        "_construct_storage_from_data_pointer", "from_file",
                        # a function's code, closure and globals: forged to pass for Triton's own code
                        # (redteam_s16b d2: a do_bench whose code claimed triton/runtime/autotuner.py)
                        "__code__", "__closure__", "__globals__",
                        # a process of its own (redteam_s24 cs_f1): the census watches this one only
                        "fork", "forkpty", "posix_spawn", "posix_spawnp", "spawnv", "spawnve", "spawnvp", "spawnvpe",
                        "execv", "execve", "execvp", "execvpe", "popen", "register_at_fork"}

#: Names that switch off or bypass the census's views (VERIFICATION.md rule 14: the dispatch and
#: torch-function modes, RecordFunction, the profiler) or tell a watched call from another:
#: redteam_s10 mh1 ran ``torch.addmm`` inside ``torch._C._DisableTorchDispatch()`` and recognised
#: the profiled call by ``torch.autograd._profiler_enabled()``; mi1 took the running mode with
#: ``_get_current_dispatch_mode()``. Flagged as an attribute, an imported name, a bare name or a
#: string constant (``getattr(torch._C, "_DisableTorchDispatch")``).
CENSUS_EVASION_NAMES = frozenset({
    # dispatch keys and modes switched off or popped
    "_DisableTorchDispatch", "_ExcludeDispatchKeyGuard", "_IncludeDispatchKeyGuard", "_ForceDispatchKeyGuard",
    "_PreserveDispatchKeyGuard", "_DisablePythonDispatcher", "_EnablePythonDispatcher", "_RestorePythonTLSSnapshot",
    "_dispatch_tls_set_dispatch_key_excluded", "_dispatch_tls_set_dispatch_key_included",
    "_dispatch_tls_local_exclude_set", "_dispatch_tls_local_include_set",
    "_disable_current_modes", "_pop_mode", "_pop_mode_temporarily", "_pop_torch_dispatch_stack",
    "_pop_torch_function_stack", "_unset_dispatch_mode", "_set_dispatch_mode", "_push_on_torch_dispatch_stack",
    "_push_on_torch_function_stack", "DisableTorchFunction", "DisableTorchFunctionSubclass", "_no_torch_function_mode",
    # the running modes read (their state edited)
    "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack", "_get_dispatch_mode", "_get_dispatch_stack_at",
    "_get_function_stack_at", "_len_torch_dispatch_stack", "_len_torch_function_stack", "_is_torch_function_mode_enabled",
    "_is_torch_function_all_disabled", "_get_current_function_mode", "_get_current_function_mode_stack",
    # the profiler detected or switched off
    "_profiler_enabled", "_is_profiler_enabled", "_profiler_type", "_enable_record_function", "_disable_profiler",
    "_disable_profiler_legacy", "_enable_profiler", "_enable_profiler_legacy", "_prepare_profiler",
    # RecordFunction's callbacks removed, collection paused, ranges opened by hand (red team s30 c1-c4)
    "_clear_callbacks", "_toggle_collection_dynamic", "_record_function_with_args_enter",
    "_record_function_with_args_exit",
})


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
            # a forbidden attribute imported by name (``from os import fork``, ``from sys import _getframe``)
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in FORBIDDEN_ATTRIBUTES]
        elif isinstance(node, ast.Attribute):
            if node.attr in FORBIDDEN_ATTRIBUTES:
                found.append(f"line {node.lineno}: uses .{node.attr}")
            elif node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys":
                found.append(f"line {node.lineno}: uses sys.modules")
        elif isinstance(node, ast.Name) and node.id == "__import__":
            found.append(f"line {node.lineno}: uses __import__")
        name = _evasion_name(node)
        if name is not None:
            found.append(f"line {node.lineno}: uses {name} (switches off or detects the census, rule 14)")
    return found


def _evasion_name(node):
    """The :data:`CENSUS_EVASION_NAMES` entry ``node`` names (attribute, bare name, imported name,
    string constant), or None."""
    if isinstance(node, ast.Attribute):
        name = node.attr
    elif isinstance(node, ast.Name):
        name = node.id
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        hits = [p for a in node.names for p in a.name.split(".") if p in CENSUS_EVASION_NAMES]
        return hits[0] if hits else None
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        name = node.value
    else:
        return None
    return name if name in CENSUS_EVASION_NAMES else None


#: Names through which Python code reads or writes memory at a raw address, or wraps a buffer,
#: without a torch door the census can count (VERIFICATION.md rule 14): numpy's array interfaces
#: (an object whose ``__array_interface__`` names ``tensor.data_ptr()`` is read by any numpy call,
#: tests/adversarial/redteam_s8 xent cf1), ``numpy.ctypeslib``, ``frombuffer``, ctypes' address
#: constructors.
HOST_ACCESS_NAMES = frozenset({"__array_interface__", "__array_struct__", "__cuda_array_interface__", "ctypeslib",
                               "frombuffer", "from_address", "from_buffer", "from_buffer_copy", "string_at",
                               "PyMemoryView_FromMemory", "process_vm_readv", "process_vm_writev"})
#: A string constant naming a process's memory file (``/proc/self/mem``, ``/proc/<pid>/mem``): reads and
#: writes there at ``data_ptr()`` touch no torch door (tests/adversarial/redteam_s15 ce_f1; the sandbox's
#: worker is refused it, an unsandboxed one is not). Labelled ``host:proc_mem``.
PROC_MEM = re.compile(r"/proc/[^/\s]*/(task/[^/\s]*/)?mem")


def host_access(source: str) -> List[str]:
    """The census labels (``host:<name>``, sorted) of the raw-memory doors of
    :data:`HOST_ACCESS_NAMES` that ``source`` names -- as an attribute, a name, an imported name or
    a string constant equal to one (a dict key ``"__array_interface__"``) -- and ``host:proc_mem`` for a
    string constant naming a process's memory file (:data:`PROC_MEM`). Unlike
    :func:`screen_source` these are not refused: the worker adds them to the candidate's
    ``library_calls`` (host arithmetic is not a kernel of its own, rule 14), whatever
    ``exploration.screen_sources`` says. A tripwire by names like the screen: a name built at run
    time passes it. Source that does not parse gives none (its import fails anyway)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.alias):
            name = node.name.split(".")[-1]
        elif isinstance(node, (ast.ImportFrom, ast.Import)):  # import numpy.ctypeslib, from numpy.ctypeslib import ...
            parts = [p for a in getattr(node, "names", []) for p in a.name.split(".")] + (node.module or "").split(".") \
                if isinstance(node, ast.ImportFrom) else [p for a in node.names for p in a.name.split(".")]
            found.update(f"host:{p}" for p in parts if p in HOST_ACCESS_NAMES)
            continue
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
            if PROC_MEM.fullmatch(name.strip()):
                found.add("host:proc_mem")
        else:
            continue
        if name in HOST_ACCESS_NAMES:
            found.add(f"host:{name}")
    return sorted(found)
