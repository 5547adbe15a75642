"""The dispatcher guard's fast path (kernelsynth.verify.guard.check_dispatch): an unchanged dump is
accepted by one string comparison per operator, and a registration still fails it."""

import pytest
import torch

from kernelsynth.verify.failures import TamperingError
from kernelsynth.verify.guard import DispatchTables, check_dispatch, dispatch_tables


def test_unchanged_tables_pass_and_carry_the_raw_dumps():
    tables = dispatch_tables(["flip", "aten::roll"])
    assert isinstance(tables, DispatchTables)
    assert set(tables) == set(tables.raw) == {"aten::flip", "aten::roll"}
    assert all(line in tables.raw[q] for q in tables for line in tables[q].splitlines())
    check_dispatch(tables)
    check_dispatch(dict(tables))  # a plain dict (no raw dumps): the full comparison


def test_a_registration_fails_with_and_without_the_raw_dumps():
    tables = dispatch_tables(["rot90"])
    lib = torch.library.Library("aten", "IMPL")
    try:
        lib.impl("rot90", lambda x, k=1, dims=(0, 1): x.clone(), "CPU")
        for before in (tables, dict(tables)):
            with pytest.raises(TamperingError, match="aten::rot90"):
                check_dispatch(before)
    finally:
        lib._destroy()
    check_dispatch(tables)  # gone again


def test_a_changed_dump_outside_the_computing_keys_is_not_tampering():
    tables = dispatch_tables(["flip"])
    tables.raw["aten::flip"] += "\nMeta: a line no computing key has"  # the dump differs, the kernels do not
    check_dispatch(tables)
