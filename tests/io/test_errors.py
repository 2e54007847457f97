"""Every kind of bad input: a clear message naming the file and the line or JSON path."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
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


BIG = "1" + "0" * 400
JSON = ('{"format": "coflowopt-instance/1", "ports": {"ingress": [1, 1], "egress": [1, 1]}, '
        '"coflows": [{"id": "a", %s}]}')
# file name, its text, the line or JSON path expected in the message, and the message
EDGES = [
    ("big_size.json", JSON % f'"flows": [[0, 1, {BIG}]]', "$.coflows[0].flows[0][2]",
     "size is too large, got 100000000000...000000 (401 digits)"),
    ("big_port.json", JSON % '"flows": [[9223372036854775808, 1, 1]]', "$.coflows[0].flows[0][0]",
     "ingress port is too large, got 9223372036854775808"),
    ("big_delay.json", JSON % f'"flows": [[0, 1, 1, {BIG}]]', "$.coflows[0].flows[0][3]",
     "delay is too large"),
    ("big_release.json", JSON % f'"release": {BIG}, "flows": [[0, 1, 1]]', "$.coflows[0].release",
     "release is too large for a float"),
    ("subnormal_size.json", JSON % '"flows": [[0, 1, 1e-320]]', "$.coflows[0].flows[0][2]",
     "sizes must be at least 2.23e-308, the smallest normal float"),
    ("subnormal_capacity.json", JSON.replace('"egress": [1, 1]', '"egress": [1, 1e-308]')
     % '"flows": [[0, 1, 1]]', "$.ports.egress[1]", "egress capacity of port 1 is 1e-308"),
    ("overflow.txt", "2 1\n1 0 1 0 1 1:1e308\n", ":2:",
     "shuffle MB of reducer 0 of coflow '1' is too large: '1e308' MB overflows"),
    ("subnormal.txt", "2 1\n1 0 1 0 1 1:1e-320\n", ":2:", "is too small: '1e-320' MB is below"),
    ("separator.txt", "2 1\n1 0 1 0 1 1:1_0\n", ":2:", "must be a number, got '1_0'"),
    ("ports.txt", "99999999999 1\n1 0 1 0 1 1:1\n", ":1:",
     "number of ports must be at most 10,000,000, got 99,999,999,999"),
    ("overflow_sincronia.txt", "2 1\n1 0 1 1 1 0 1 1e308\n", ":2:",
     "size of flow 0 of coflow '1' is too large: '1e308' MB overflows"),
    ("separator_sincronia.txt", "2 1\n1 0 1 1 1 0 1_0 1\n", ":2:",
     "destination of flow 0 of coflow '1' must be an integer, got '1_0'"),
    # a damaged first coflow line of a Coflow-Benchmark trace (no reducers): still that format
    ("truncated.txt", "2 2\n1 0 2 0 1\n2 0 1 0 1 1:1\n", ":2:",
     "coflow '1' announces 2 mappers but the line ends after 2"),
]


@pytest.mark.parametrize(("name", "text", "where", "what"), EDGES)
def test_numbers_out_of_range_are_located_without_warnings(name, text, where, what, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow RuntimeWarning on the way
        with pytest.raises(InputError) as err:
            io.read(path)
    message = str(err.value)
    assert message.startswith(str(path)) and where in message and what in message, message


LONG = "1" * 5000  # more digits than Python converts to an int (4,300)


@pytest.mark.parametrize("args, text, where", [
    (["validate"], '{"format": "coflowopt-instance/1", "ports": {"ingress": [1], "egress": [1]}, '
     '"coflows": [{"id": "a", "flows": [[0, 0, LONG]]}]}'.replace("LONG", LONG), "$.coflows[0].flows[0][2]"),
    (["fair"], '{"format": "coflowopt-demands/1", "links": ["L1", "L2"], "capacity": [1, 1], '
     '"coflows": [{"id": "A", "vector": [1, LONG]}]}'.replace("LONG", LONG), "$.coflows[0].vector[1]"),
], ids=["instance", "demands"])
def test_a_json_integer_too_long_for_python_is_located(args, text, where, tmp_path, capsys):
    # was: a ValueError traceback ("Exceeds the limit (4300 digits)"), exit 1
    f = tmp_path / "long.json"
    f.write_text(text)
    assert main([*args, str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and where in err


def test_a_pipe_is_read_once(tmp_path):
    # the format used to be detected from one read and the instance parsed from a second:
    # a pipe read empty ("empty file") and a FIFO waited forever
    trace = (DATA / "good_benchmark.txt").read_text()
    out = subprocess.run([sys.executable, "-m", "coflowopt", "validate", "/dev/stdin"],
                         input=trace, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "valid instance" in out.stdout
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat > {fifo}"], stdin=subprocess.PIPE, text=True)
    writer.stdin.write(trace)  # type: ignore[union-attr]
    writer.stdin.close()  # type: ignore[union-attr]
    try:
        inst = io.read(fifo)
    finally:
        writer.wait(timeout=60)
    assert inst.num_coflows >= 1
