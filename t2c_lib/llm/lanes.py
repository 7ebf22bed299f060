"""Lanes: several replies of a packaged model decoded together, in a schedule fixed by the work itself.

On a CPU one token of a 1.5B model costs about as much as reading its weights; decoding
several sequences in one `llama_decode` shares that read (measured: 4 sequences together
about 1.8x the tokens/s of one). `LaneEngine` holds one llama.cpp context with a KV
sequence per lane plus one for the shared prompt prefix, which is evaluated once and
copied (shared cells, no recompute) into every lane that asks with the same prefix.

Batched evaluation changes llama.cpp's arithmetic (which tokens share a matrix product,
where a sequence's cells sit in the cache), so a reply can differ from the one-sequence
engine's. What keeps it reproducible is the schedule: the work is split into a fixed
number of lanes, each lane is one thread that asks its questions in order, and the engine
takes a step only when every open lane is either waiting for a reply or closed -- never
while a lane's thread is between two requests. Which tokens go into each step is then a
function of the requests alone, not of timing or machine load. The lane count and the
engine settings are part of the cache key (`LocalModel.fingerprint`).
"""

from __future__ import annotations

import contextlib
import enum
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from t2c_lib.llm.base import LLMError, LLMUnavailableError
from t2c_lib.llm.stopping import ReplyText

LAST_N_TOKENS = 64  # the penalties sampler's window, as llama-cpp-python sets it (penalties are neutral here)


@dataclass(frozen=True)
class LaneRequest:
    """One completion: prompt token ids (shared prefix, own suffix) and how to sample and stop."""

    prefix_ids: tuple[int, ...]
    suffix_ids: tuple[int, ...]
    max_tokens: int
    temperature: float
    seed: int
    stops: tuple[str, ...] = ()


@dataclass(frozen=True)
class LaneReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


class LaneStatus(enum.Enum):
    WAITING = "waiting"  # the lane's thread is between requests: the engine waits for it
    BUSY = "busy"  # a request is being answered
    CLOSED = "closed"  # the lane's thread has no more work


class _Phase(enum.Enum):
    NEW = "new"  # not yet placed in the cache
    PREFIX = "prefix"  # waits for the shared prefix to be evaluated
    PROMPT = "prompt"  # its own prompt tokens are being evaluated
    DECODE = "decode"  # one token per step


@dataclass
class _Lane:
    status: LaneStatus = LaneStatus.WAITING
    request: LaneRequest | None = None
    phase: _Phase = _Phase.NEW
    pending: list[int] = field(default_factory=list)
    position: int = 0
    sampler: Any = None
    reply: ReplyText | None = None
    result: LaneReply | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


def _sampler_chain(n_vocab: int, temperature: float, seed: int) -> Any:
    """The sampler llama-cpp-python builds for these settings (no top-k/top-p/min-p cut, neutral penalties)."""
    import llama_cpp.llama_cpp as lc

    chain = lc.llama_sampler_chain_init(lc.llama_sampler_chain_default_params())
    lc.llama_sampler_chain_add(chain, lc.llama_sampler_init_penalties(n_vocab, LAST_N_TOKENS, 1.0, 0.0, 0.0))
    if temperature <= 0.0:
        lc.llama_sampler_chain_add(chain, lc.llama_sampler_init_greedy())
        return chain
    for sampler in (
        lc.llama_sampler_init_top_k(0),
        lc.llama_sampler_init_typical(1.0, 1),
        lc.llama_sampler_init_top_p(1.0, 1),
        lc.llama_sampler_init_min_p(0.0, 1),
        lc.llama_sampler_init_temp(temperature),
        lc.llama_sampler_init_dist(seed),
    ):
        lc.llama_sampler_chain_add(chain, sampler)
    return chain


class LaneEngine:
    """`lanes` sequences decoded together on the weights of a loaded `llama_cpp.Llama`.

    Threads call `complete(lane, request)` (blocking) and `close(lane)` when they have no
    more work; one engine thread runs the steps. Use it through `LaneGroup`.
    """

    def __init__(self, llama: Any, lanes: int, n_ctx_per_lane: int, n_threads: int, n_batch: int = 512) -> None:
        import llama_cpp.llama_cpp as lc

        if lanes < 1:
            raise ValueError("lanes must be at least 1")
        self._lc = lc
        self._llama = llama
        self.lanes = lanes
        self.n_ctx_per_lane = n_ctx_per_lane
        self.n_batch = n_batch
        self._prefix_seq = lanes  # the shared prefix lives in its own sequence
        params = lc.llama_context_default_params()
        params.n_ctx = n_ctx_per_lane * lanes
        params.n_batch = n_batch
        params.n_ubatch = n_batch
        params.n_seq_max = lanes + 1
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        params.kv_unified = True  # cells of the shared prefix are shared, not copied
        self._ctx = lc.llama_init_from_model(llama.model, params)
        if not self._ctx:
            raise LLMError(f"could not create a {lanes}-lane context ({params.n_ctx} tokens)")
        self._memory = lc.llama_get_memory(self._ctx)
        self._batch = lc.llama_batch_init(n_batch, 0, lanes + 1)
        self._vocab = llama._model.vocab
        self._n_vocab = llama.n_vocab()
        self._state = [_Lane() for _ in range(lanes)]
        self._held_prefix: tuple[int, ...] | None = None
        self._prefix_todo: list[int] = []
        self._cond = threading.Condition()
        self._failure: BaseException | None = None
        self.steps = 0
        self._thread = threading.Thread(target=self._run, name="t2c-lanes", daemon=True)
        self._thread.start()

    # -- called by the lanes' threads ------------------------------------------------------

    def complete(self, lane: int, request: LaneRequest) -> LaneReply:
        """Answer `request` in `lane` (blocks until the reply is finished)."""
        state = self._state[lane]
        with self._cond:
            if isinstance(self._failure, LLMError):
                raise self._failure
            if self._failure is not None:
                raise LLMError(f"the lanes engine stopped: {self._failure}") from self._failure
            if state.status is not LaneStatus.WAITING:
                raise RuntimeError(f"lane {lane} is {state.status.value}, not waiting for a request")
            state.request, state.phase, state.result, state.error = request, _Phase.NEW, None, None
            state.done.clear()
            state.status = LaneStatus.BUSY
            self._cond.notify_all()
        state.done.wait()
        if isinstance(state.error, LLMError):
            raise state.error
        if state.error is not None:
            raise LLMError(f"generation failed: {state.error}") from state.error
        assert state.result is not None
        return state.result

    def close(self, lane: int) -> None:
        """The lane's thread has no more requests: the engine stops waiting for it."""
        with self._cond:
            self._state[lane].status = LaneStatus.CLOSED
            self._cond.notify_all()

    def shutdown(self, reason: str = "") -> None:
        """Close every lane, stop the engine thread and free the context.

        With a `reason` (an interrupted run) requests still being answered end with
        `LLMUnavailableError`, which stops a study without recording their questions.
        """
        with self._cond:
            if reason:
                self._failure = self._failure or LLMUnavailableError(reason)
            for state in self._state:
                if state.status is LaneStatus.BUSY and reason:
                    state.error = self._failure
                    state.done.set()
                state.status = LaneStatus.CLOSED
            self._cond.notify_all()
        self._thread.join()
        self._lc.llama_batch_free(self._batch)
        self._lc.llama_free(self._ctx)

    # -- the engine thread -----------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._failure is not None:
                        return
                    statuses = [s.status for s in self._state]
                    if all(s is LaneStatus.CLOSED for s in statuses):
                        return
                    if LaneStatus.WAITING not in statuses:
                        break
                    self._cond.wait()
            try:
                self._step()
            except BaseException as exc:
                with self._cond:
                    self._failure = exc
                    for state in self._state:
                        if state.status is LaneStatus.BUSY:
                            state.error = exc
                            state.status = LaneStatus.WAITING
                            state.done.set()
                    self._cond.notify_all()
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                return

    def _place(self, lane: int, state: _Lane) -> None:
        """Put a new request's prompt in the lane's sequence (sharing the prefix when it is held)."""
        request = state.request
        assert request is not None
        lc = self._lc
        if state.phase is _Phase.NEW:
            lc.llama_memory_seq_rm(self._memory, lane, -1, -1)
            if request.prefix_ids and request.prefix_ids != self._held_prefix:
                if self._prefix_todo:
                    return  # another prefix is being evaluated; this one waits its turn
                lc.llama_memory_seq_rm(self._memory, self._prefix_seq, -1, -1)
                self._held_prefix = request.prefix_ids
                self._prefix_todo = list(request.prefix_ids)
            state.phase = _Phase.PREFIX
        if state.phase is _Phase.PREFIX:
            if request.prefix_ids and (request.prefix_ids != self._held_prefix or self._prefix_todo):
                if request.prefix_ids != self._held_prefix:
                    state.phase = _Phase.NEW  # its prefix was displaced before it was copied: ask again
                return
            if request.prefix_ids:
                lc.llama_memory_seq_cp(self._memory, self._prefix_seq, lane, -1, -1)
            state.pending = list(request.suffix_ids)
            state.position = len(request.prefix_ids)
            state.phase = _Phase.PROMPT
            state.sampler = _sampler_chain(self._n_vocab, request.temperature, request.seed)
            room = self.n_ctx_per_lane - len(request.prefix_ids) - len(request.suffix_ids)
            state.reply = ReplyText(
                self._detokenize,
                tuple(s.encode("utf-8") for s in request.stops),
                max(1, min(request.max_tokens, room)),
            )

    def _detokenize(self, tokens: list[int]) -> bytes:
        return self._llama.detokenize(tokens)

    def _add(self, token: int, position: int, seq: int, wants_logits: bool) -> int:
        batch = self._batch
        i = batch.n_tokens
        batch.token[i] = token
        batch.pos[i] = position
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = seq
        batch.logits[i] = wants_logits
        batch.n_tokens = i + 1
        return i

    def _step(self) -> None:
        """One `llama_decode`: a token per decoding lane, a chunk of the shared prefix, prompt chunks, in lane order."""
        lc = self._lc
        busy = [(i, s) for i, s in enumerate(self._state) if s.status is LaneStatus.BUSY]
        for i, state in busy:
            if state.phase in (_Phase.NEW, _Phase.PREFIX):
                self._place(i, state)
        self._batch.n_tokens = 0
        budget = self.n_batch
        sample_at: dict[int, int] = {}
        for i, state in busy:
            if state.phase is _Phase.DECODE:
                sample_at[i] = self._add(state.pending[0], state.position, i, True)
                state.position += 1
                budget -= 1
        prefix_start = len(self._held_prefix or ()) - len(self._prefix_todo)
        prefix_chunk = self._prefix_todo[:budget]
        for k, token in enumerate(prefix_chunk):
            self._add(token, prefix_start + k, self._prefix_seq, False)
        budget -= len(prefix_chunk)
        for i, state in busy:
            if state.phase is _Phase.PROMPT and budget > 0 and state.pending:
                chunk, state.pending = state.pending[:budget], state.pending[budget:]
                for k, token in enumerate(chunk):
                    index = self._add(token, state.position + k, i, not state.pending and k == len(chunk) - 1)
                state.position += len(chunk)
                budget -= len(chunk)
                if not state.pending:
                    sample_at[i] = index
        if self._batch.n_tokens == 0:
            raise RuntimeError("no work could be scheduled (a prompt without tokens?)")
        code = lc.llama_decode(self._ctx, self._batch)
        if code != 0:
            raise RuntimeError(
                f"llama_decode returned {code}" + (" (no room left in the lanes' cache)" if code == 1 else "")
            )
        self.steps += 1
        del self._prefix_todo[: len(prefix_chunk)]
        finished: list[tuple[int, _Lane]] = []
        for i, index in sample_at.items():
            state = self._state[i]
            token = lc.llama_sampler_sample(state.sampler, self._ctx, index)
            assert state.reply is not None and state.request is not None
            if state.reply.push(token, bool(lc.llama_vocab_is_eog(self._vocab, token))):
                request = state.request
                state.result = LaneReply(
                    state.reply.reply(),
                    len(request.prefix_ids) + len(request.suffix_ids),
                    len(state.reply.tokens),
                )
                finished.append((i, state))
            else:
                state.phase = _Phase.DECODE
                state.pending = [token]
        if finished:
            with self._cond:
                for i, state in finished:
                    lc.llama_sampler_free(state.sampler)
                    state.sampler = None
                    lc.llama_memory_seq_rm(self._memory, i, -1, -1)
                    state.status = LaneStatus.WAITING
                    state.done.set()


_bound = threading.local()


@dataclass(frozen=True)
class Binding:
    """The lane the current thread works in, and the model whose requests go there."""

    engine: LaneEngine
    lane: int
    owner: Any


def bound_lane() -> Binding | None:
    """What `LaneGroup.bind` set for the current thread, if anything."""
    return getattr(_bound, "lane", None)


class LaneGroup:
    """A `LaneEngine` for the duration of a `with` block; each worker thread binds to one lane.

    The engine waits for every lane before its first step, so all `lanes` threads must
    either bind and work or the lane must be closed (`bind` closes it on exit).
    """

    def __init__(self, engine_factory: Any, lanes: int, owner: Any = None, description: str = "") -> None:
        self._factory = engine_factory
        self.lanes = lanes
        self.owner = owner
        self.description = description or f"lanes={lanes}"  # recorded in the cell manifest
        self.engine: LaneEngine | None = None

    def __enter__(self) -> LaneGroup:
        self.engine = self._factory()
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if self.engine is not None:
            self.engine.shutdown("the run was interrupted" if kind is not None else "")
            self.engine = None

    @contextlib.contextmanager
    def bind(self, lane: int) -> Iterator[None]:
        """Requests of a model served by `owner` from this thread go to `lane` until the block ends."""
        engine = self.engine
        assert engine is not None, "use the group in a with block"
        _bound.lane = Binding(engine, lane, self.owner)
        try:
            yield
        finally:
            _bound.lane = None
            engine.close(lane)


def split_for_lanes(items: Sequence[Any], lanes: int) -> list[list[Any]]:
    """Item k goes to lane k mod `lanes`: the same split for the same list, whatever the timing."""
    return [list(items[i::lanes]) for i in range(lanes)]
