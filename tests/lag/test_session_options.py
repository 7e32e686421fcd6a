"""The local session's JVM options follow the input size: the JIT's first tier only for small
inputs (``lag.spark.session.local_jvm_options``), sized from the input files
(``lag.spark.sizing.local_input_bytes``)."""

from __future__ import annotations

from pathlib import Path

from lag.spark.session import (
    LOCAL_JVM_OPTIONS,
    SMALL_INPUT_BYTES,
    SMALL_INPUT_JVM_OPTIONS,
    local_jvm_options,
)
from lag.spark.sizing import local_input_bytes


def test_small_inputs_run_the_first_jit_tier_only() -> None:
    assert SMALL_INPUT_JVM_OPTIONS in local_jvm_options(0)
    assert SMALL_INPUT_JVM_OPTIONS in local_jvm_options(SMALL_INPUT_BYTES)
    assert local_jvm_options(SMALL_INPUT_BYTES + 1) == LOCAL_JVM_OPTIONS
    assert local_jvm_options(None) == LOCAL_JVM_OPTIONS


def test_input_bytes_sum_files_and_folders_and_give_up_on_remote_or_missing(
    tmp_path: Path,
) -> None:
    one = tmp_path / "ends.jsonl"
    one.write_bytes(b"x" * 10)
    folder = tmp_path / "offsets.parquet"
    (folder / "sub").mkdir(parents=True)
    (folder / "part-0.parquet").write_bytes(b"y" * 100)
    (folder / "sub" / "part-1.parquet").write_bytes(b"z" * 1000)
    assert local_input_bytes([str(one), str(folder)]) == 1110
    assert local_input_bytes([f"file://{one}"]) == 10
    assert local_input_bytes([]) == 0
    assert local_input_bytes([str(one), "hdfs://nn/offsets/"]) is None
    assert local_input_bytes([str(tmp_path / "missing")]) is None
