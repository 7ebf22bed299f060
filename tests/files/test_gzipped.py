"""Deterministic gzip for committed files and reading them within a limit (`t2c_lib.files.gzipped`)."""

from __future__ import annotations

import gzip

import pytest

from t2c_lib.files.gzipped import GzipReadError, gzip_bytes, read_gzip


def test_the_same_data_gives_the_same_bytes_with_no_time_and_no_name_in_the_header():
    data = b'{"question_id": "q1"}\n' * 500
    first, second = gzip_bytes(data), gzip_bytes(data)
    assert first == second and gzip.decompress(first) == data
    assert first[4:8] == b"\0\0\0\0"  # mtime 0
    assert first[3] & 0x08 == 0  # no FNAME flag: no file name recorded
    assert len(first) < len(data) // 10


def test_reading_returns_the_data_within_the_limit(tmp_path):
    path = tmp_path / "log.jsonl.gz"
    path.write_bytes(gzip_bytes(b"abc\n" * 1000))
    assert read_gzip(path, 4000) == b"abc\n" * 1000


@pytest.mark.parametrize(
    ("content", "limit", "says"),
    [
        (gzip_bytes(b"\0" * 5_000_000), 1_000_000, "more than 1000000 bytes decompressed"),  # a small bomb
        (gzip_bytes(b"abc" * 1000)[:20], 10_000, "not a readable gzip file"),  # cut short
        (b"just text", 10_000, "not a readable gzip file"),
    ],
)
def test_a_bad_or_oversized_file_is_one_clear_error(tmp_path, content, limit, says):
    path = tmp_path / "bad.gz"
    path.write_bytes(content)
    with pytest.raises(GzipReadError, match=says):
        read_gzip(path, limit)


def test_a_missing_file_is_one_clear_error(tmp_path):
    with pytest.raises(GzipReadError, match="no such file"):
        read_gzip(tmp_path / "none.gz", 10)
