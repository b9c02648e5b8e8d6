"""The table and LUT generators of case files (conformance/corpus/generators.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conformance.corpus import arrays
from conformance.corpus import generators as tables
from conformance.corpus.arrays import ArraySpecError, splitmix64

CPU = torch.device("cpu")


# ---------------------------------------------------------------------------------------------
# Table and LUT generators


def test_linear_table():
    table = tables.build_table({"generator": "linear", "max_reqs": 4, "max_seq_len": 16}, CPU)
    assert table.dtype == torch.int32 and table.shape == (4, 16) and table.is_contiguous()
    assert table[2, 6].item() == 38 and table[3, 15].item() == 63 and table[0, 0].item() == 0


def test_permuted_table_is_a_seeded_shuffle_of_linear():
    spec = {"generator": "permuted", "max_reqs": 3, "max_seq_len": 5, "seed": 11}
    table = tables.build_table(spec, CPU)
    assert table.dtype == torch.int32 and table.shape == (3, 5) and table.is_contiguous()
    assert sorted(table.flatten().tolist()) == list(range(15))
    assert table.flatten().tolist() == arrays.permutation(11, 15).tolist()
    assert torch.equal(tables.build_table(spec, CPU), table)
    assert not torch.equal(tables.build_table({**spec, "seed": 12}, CPU), table)


def test_explicit_table_and_set():
    spec = {"generator": "explicit", "values": [[1, 2, 3], [4, 5, 6]], "set": [[1, 0, -7]]}
    assert tables.table_shape(spec) == (2, 3)
    assert tables.build_table(spec, CPU).tolist() == [[1, 2, 3], [-7, 5, 6]]
    empty = tables.build_table({"generator": "explicit", "values": []}, CPU)
    assert empty.shape == (0, 0)


@pytest.mark.parametrize(("spec", "values"), [
    ({"generator": "identity", "len": 4}, [0, 1, 2, 3]),
    ({"generator": "shift", "len": 3, "shift": 100}, [100, 101, 102]),
    ({"generator": "permutation", "len": 6, "seed": 3},
     np.argsort(splitmix64(3, 6), kind="stable").tolist()),
    ({"generator": "explicit", "values": [9, -1, 4]}, [9, -1, 4]),
    ({"generator": "identity", "len": 4, "set": [[0, -5], [3, 99]]}, [-5, 1, 2, 99]),
])
def test_luts(spec, values):
    lut = tables.build_lut(spec, CPU)
    assert lut.dtype == torch.int64 and lut.dim() == 1 and lut.tolist() == values
    assert tables.lut_len(spec) == len(values)


def test_generator_errors():
    assert tables.build_lut(None, CPU) is None
    with pytest.raises(ArraySpecError, match="unknown table generator 'zigzag'"):
        tables.build_table({"generator": "zigzag", "max_reqs": 1, "max_seq_len": 1}, CPU)
    with pytest.raises(ArraySpecError, match=r"table 65536 x 65536 is outside"):
        tables.build_table({"generator": "linear", "max_reqs": 1 << 16, "max_seq_len": 1 << 16}, CPU)
    with pytest.raises(ArraySpecError, match=r"table -1 x 4 is outside"):
        tables.build_table({"generator": "linear", "max_reqs": -1, "max_seq_len": 4}, CPU)
    with pytest.raises(ArraySpecError, match=r"LUT length -2 is outside"):
        tables.build_lut({"generator": "identity", "len": -2}, CPU)
    with pytest.raises(ArraySpecError, match="unknown LUT generator 'square'"):
        tables.build_lut({"generator": "square", "len": 2}, CPU)
