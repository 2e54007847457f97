"""Writing files: all or nothing, through links, with the usual permissions, errors located."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from coflowopt import InputError
from coflowopt._files import read_text
from coflowopt.io._common import atomic_writer, atomic_writers


def test_nothing_is_written_when_the_body_fails(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    b.write_text("old")
    with pytest.raises(RuntimeError), atomic_writers([a, b]) as (fa, fb):
        fa.write("new a")
        fb.write("new b")
        raise RuntimeError("stop")
    assert not a.exists() and b.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.txt"]  # no temporary files left


def test_a_bad_second_target_stops_everything_before_writing(tmp_path):
    a = tmp_path / "a.txt"
    (tmp_path / "adir").mkdir()
    for bad, why in ((tmp_path / "adir", "is a directory"),
                     (tmp_path / "nodir" / "x", "directory to write into does not exist")):
        with pytest.raises(InputError, match=why) as err, atomic_writers([a, bad]) as handles:
            for fh in handles:
                fh.write("x")
        assert str(err.value).startswith(str(bad))
        assert not a.exists()


def test_a_link_is_written_through_and_modes_are_kept(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with atomic_writer(link) as fh:
        fh.write("new")
    assert link.is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    old = os.umask(0o022)
    try:
        with atomic_writer(tmp_path / "fresh.txt") as fh:
            fh.write("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "fresh.txt").stat().st_mode) == 0o644


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_a_full_device_is_an_input_error_naming_it_and_stays_a_device(tmp_path):
    keep = tmp_path / "keep.txt"
    keep.write_text("keep")
    with pytest.raises(InputError, match="No space left") as err, \
            atomic_writers([keep, "/dev/full"]) as (fk, ff):
        fk.write("new")
        ff.write("x" * 100_000)
    assert str(err.value).startswith("/dev/full: cannot write")
    assert keep.read_text() == "keep"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_binary_atomic_writer_writes_bytes_whole_or_not_at_all(tmp_path):
    # mcs sweep --plot writes its figure this way
    out = tmp_path / "fig.png"
    with atomic_writer(out, binary=True) as fh:
        fh.write(b"\x89PNG\r\n")
    assert out.read_bytes() == b"\x89PNG\r\n"
    with pytest.raises(RuntimeError), atomic_writer(out, binary=True) as fh:
        fh.write(b"partial")
        raise RuntimeError("the plot failed")
    assert out.read_bytes() == b"\x89PNG\r\n" and sorted(tmp_path.iterdir()) == [out]


def test_reading_stops_at_binary_data_and_keeps_text_as_it_was(tmp_path):
    # `coflowopt info /dev/zero` read until memory ran out: reading is chunked
    # and a NUL byte ends it at once, with its position
    with pytest.raises(InputError, match=r"NUL byte at byte 0"):
        read_text("/dev/zero")
    bin_file = tmp_path / "b.txt"
    bin_file.write_bytes(b"4 1\n\x00\x01")
    with pytest.raises(InputError, match=r"b\.txt.*NUL byte at byte 4"):
        read_text(bin_file)
    # a character split across the reading chunks, CRLF line ends and a bad byte's offset
    text = "é" * (1 << 20) + "\r\nok\r\n"
    f = tmp_path / "t.txt"
    f.write_bytes(text.encode())
    assert read_text(f) == text and read_text(f).splitlines()[1] == "ok"
    f.write_bytes(b"ab\r\n\xff")
    with pytest.raises(InputError, match="at byte 4"):
        read_text(f)
    # a byte-order mark first (as spreadsheets save UTF-8) is dropped; offsets still count it
    f.write_bytes(b"\xef\xbb\xbf4 3\n")
    assert read_text(f) == "4 3\n"  # the header read '\ufeff4' as the number of ports
    f.write_bytes(b"\xef\xbb\xbfab\xff")
    with pytest.raises(InputError, match="at byte 5"):
        read_text(f)
