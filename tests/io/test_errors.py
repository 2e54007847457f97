"""Every kind of bad input: a clear message naming the file and the line or JSON path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coflowopt import InputError, io
from coflowopt.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"

# file, the line (text) or JSON path expected in the message, and the offending value
BAD = [
    ("bad_benchmark_malformed.txt", ":3:", "announces 2 reducers but lists 1"),
    ("bad_benchmark_port.txt", ":3:", "mapper rack of coflow '2' is 7, but the fabric has 4 ports"),
    ("bad_benchmark_negative.txt", ":3:", "must be > 0, got '-4.0'"),
    ("bad_benchmark_nan.txt", ":3:", "must be finite, got 'nan'"),
    ("bad_benchmark_duplicate.txt", ":3:", "duplicate coflow id '1'"),
    ("bad_benchmark_count.txt", ":1:", "announces 3 coflows but the file has 2"),
    ("bad_benchmark_number.txt", ":3:", "must be a number, got 'abc'"),
    ("bad_sincronia_malformed.txt", ":2:", "announces 2 flows (6 numbers) but has 5"),
    ("bad_sincronia_port.txt", ":3:", "is port 9, but the fabric has 4 ports"),
    ("bad_sincronia_negative.txt", ":2:", "must be > 0, got '-1'"),
    ("bad_sincronia_duplicate.txt", ":3:", "duplicate coflow id '1'"),
    ("bad_json_negative_size.json", "$.coflows[0].flows[1][2]", "size -3.0"),
    ("bad_json_nan_size.json", "$.coflows[0].flows[0][2]", "size nan"),
    ("bad_json_port.json", "$.coflows[1].flows[1][1]", "egress port 5, but the fabric has 2 ports"),
    ("bad_json_port_float.json", "$.coflows[0].flows[0][1]", "must be an integer, got 1.5"),
    ("bad_json_duplicate.json", "$.coflows[1].id", "duplicate coflow id 'a'"),
    ("bad_json_unknown_dependency.json", "$.coflows[1].starts_after", "unknown coflow 'zz'"),
    ("bad_json_wrong_type.json", "$.coflows[0].release", "must be a number, got a string '0'"),
    ("bad_json_size_type.json", "$.coflows[0].flows[0][2]", "must be a number, got a string '2'"),
    ("bad_json_cycle.json", "$.coflows[0]", "dependency cycle"),
    ("bad_json_syntax.json", ":2:", "invalid JSON"),
    ("bad_json_missing_key.json", "$.coflows[0]", "missing required key 'flows'"),
    ("bad_json_capacity.json", "$.ports.ingress[1]", "capacity must be > 0, got 0.0"),
    ("bad_json_unknown_key.json", "$.coflows[0].wieght", "unknown key 'wieght'"),
    ("bad_json_deadline.json", "$.coflows[0].deadline", "deadline 2.0 not after its release 3.0"),
]


@pytest.mark.parametrize(("name", "where", "what"), BAD)
def test_reader_names_file_location_and_value(name, where, what):
    with pytest.raises(InputError) as err:
        io.read(DATA / name)
    message = str(err.value)
    assert message.startswith(str(DATA / name))
    assert where in message
    assert what in message


@pytest.mark.parametrize(("name", "where", "what"), BAD)
def test_cli_exits_2_with_the_message_and_writes_nothing(name, where, what, tmp_path, capsys):
    out = tmp_path / "out.json"
    code = main(["convert", str(DATA / name), str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("coflowopt: error: ")
    assert where in err and what in err
    assert "Traceback" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["bad_json_port.json", "bad_benchmark_nan.txt", "bad_sincronia_port.txt"])
def test_real_process_shows_no_traceback(name):
    proc = subprocess.run(
        [sys.executable, "-m", "coflowopt", "info", str(DATA / name)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert str(DATA / name) in proc.stderr
    assert proc.stdout == ""


def test_missing_file_and_port_rate_misuse():
    with pytest.raises(InputError, match="no such file"):
        io.read(DATA / "nope.json")
    with pytest.raises(InputError, match="port rate applies to trace formats only"):
        io.read(DATA / "good_instance.json", port_rate=1e9)
