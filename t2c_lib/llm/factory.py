"""`make_model(spec)`: turn a model name and the environment into a `ChatModel`.

Environment variables (secrets are read from the environment only, never from params):

| variable | meaning | default |
| --- | --- | --- |
| `T2C_MODEL` | model to use when no spec is given: `local` (or a packaged model's name) or an endpoint's model name | `local` without an endpoint |
| `T2C_LLM_BASE_URL` | any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server, ...), e.g. `http://127.0.0.1:8000/v1` | unset |
| `T2C_LLM_API_KEY` | key for `T2C_LLM_BASE_URL`, the only key a custom endpoint ever receives (never logged or written) | `not-needed` |
| `GROQ_API_KEY` | preset: Groq at `https://api.groq.com/openai/v1` (used when `T2C_LLM_BASE_URL` is unset); sent to Groq's own host only | unset |
| `OPENROUTER_API_KEY` | preset: OpenRouter at `https://openrouter.ai/api/v1` (after Groq); sent to OpenRouter's own host only | unset |
| `T2C_LLM_TIMEOUT` | seconds one HTTP request may take | `120` |
| `T2C_LLM_MAX_ATTEMPTS` | tries per request (429 / 5xx / timeouts / bad bodies are retried) | `6` |
| `T2C_LLM_MAX_WAIT` | seconds of backoff a request may accumulate before giving up | `180` |
| `T2C_LLM_SEED` | sampling seed sent to the endpoint and used by the local model; `none` to omit | `42` |
| `T2C_LOCAL_N_CTX` | context window of the local model (tokens) | the registry's (`4096`) |
| `T2C_LOCAL_THREADS` | CPU threads of the local model | the cores, at most 4 |
| `T2C_LOCAL_EXTRA_BUFFERS` | `1` lets llama.cpp use its extra (repacked/AMX) weight buffers | off |

`local` is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M); `local/qwen2.5-coder-0.5b` and
`local/gemma-3-270m` are the smaller packaged options (`t2c_lib.llm.registry`). Each is
run in process by llama-cpp-python from a GGUF joined under `<project>/.cache/models/`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from t2c_lib.llm.base import ChatModel, LLMConfigError, LLMError, env_number
from t2c_lib.llm.registry import find_local

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.llm.local import LocalModel


def seed_from_env(env: Mapping[str, str], default: int | None = 42) -> int | None:
    """T2C_LLM_SEED as an int; `none` means do not send a seed."""
    raw = (env.get("T2C_LLM_SEED") or "").strip()
    if not raw:
        return default
    if raw.lower() in ("none", "off", "null"):
        return None
    try:
        return int(raw)
    except ValueError:
        raise LLMError(f"T2C_LLM_SEED must be an integer or 'none', got {raw!r}") from None


def make_model(spec: str | None = None, env: Mapping[str, str] | None = None, seed: int | None = None) -> ChatModel:
    """`local` or a packaged model's name -> that model in process; any other name -> the configured endpoint.

    With no spec, `T2C_MODEL` decides; without that, the local model unless an endpoint
    is configured (then `T2C_MODEL` is required, since endpoints serve many models).
    `seed` (e.g. from a parameter file) overrides `T2C_LLM_SEED`.
    """
    env = os.environ if env is None else env
    from t2c_lib.llm.openai_compat import OpenAICompatModel, RetryPolicy, resolve_endpoint

    endpoint = resolve_endpoint(env)
    name = (spec or env.get("T2C_MODEL") or "").strip()
    if not name:
        if endpoint is None:
            name = "local"
        else:
            raise LLMError(
                f"an endpoint is configured ({endpoint.label}) but no model: set T2C_MODEL "
                "or pass a model name (use 'local' for the packaged local model)"
            )
    packaged = find_local(name)
    if packaged is not None:
        from t2c_lib.llm.local import LocalModel

        local_seed = seed if seed is not None else seed_from_env(env)
        return LocalModel(packaged, seed=local_seed if local_seed is not None else 42)
    if name.lower().startswith("local/"):
        from t2c_lib.llm.registry import resolve_local

        resolve_local(name)  # raises, listing the packaged models
    if endpoint is None:
        raise LLMError(
            f"model {name!r} needs an OpenAI-compatible endpoint: set T2C_LLM_BASE_URL "
            "(and T2C_LLM_API_KEY), or GROQ_API_KEY / OPENROUTER_API_KEY; or use 'local'"
        )
    policy = RetryPolicy(
        max_attempts=max(1, int(env_number(env, "T2C_LLM_MAX_ATTEMPTS", 6.0, float, "a number"))),
        max_total_wait_s=env_number(env, "T2C_LLM_MAX_WAIT", 180.0, float, "a number"),
        timeout_s=env_number(env, "T2C_LLM_TIMEOUT", 120.0, float, "a number"),
    )
    return OpenAICompatModel(name, endpoint, retry=policy, seed=seed if seed is not None else seed_from_env(env))


def make_cached_model(spec: str | None = None, no_cache: bool = False, refresh: bool = False) -> ChatModel:
    """`t2c ask`'s model: `build_model(spec)` behind the response cache (`no_cache`: bypass it; `refresh`: call and
    overwrite)."""
    from t2c_lib.llm.cache import CacheMode

    return build_model(spec, cache_mode=CacheMode.from_flags(no_cache=no_cache, refresh=refresh).value)


def build_model(
    spec: str | None = None,
    *,
    seed: int | None = None,
    cache_mode: str = "use",
    grammar: str | None = None,
    lanes: int = 1,
    n_ctx: int | None = None,
    requests_per_minute: float | None = None,
    slots: Any = None,
) -> ChatModel:
    """The model stack for `spec` (`llm.stack`): backend, pacing, response cache; the one builder of the study,
    `t2c ask` and chat (a conversation evaluation wraps it in `llm.stack.StopOnOutage` itself).

    `seed` (a parameter file's) overrides `T2C_LLM_SEED`; `slots` are a run's `llm.stack.RequestSlots`;
    `requests_per_minute` is the endpoint model's budget on this machine.

    `lanes` > 1 and `n_ctx` apply to a packaged model (decoded in lanes; a context of its own) and to no
    other; `grammar` holds the model to a GBNF grammar (refused in one line by a model that takes none).
    """
    from t2c_lib.llm.cache import CachedModel, CacheMode
    from t2c_lib.llm.stack import PacedModel, shared_limiter

    model = make_model(spec, seed=seed)
    if getattr(model, "packaged", False):
        changes: dict[str, Any] = {}
        if lanes > 1:
            changes["lanes"] = lanes
        if n_ctx is not None:
            changes.update(n_ctx=n_ctx, grammar=None)
        if changes:
            model = cast("LocalModel", model).variant(**changes)  # the one packaged kind make_model makes
    if grammar:
        model = constrained(model, grammar)
    limiter = shared_limiter(model.model_id, requests_per_minute) if requests_per_minute else None
    if limiter is not None or slots is not None:
        model = PacedModel(model, limiter, slots)
    return CachedModel(model, mode=CacheMode(cache_mode))


def constrained(model: Any, grammar: str) -> Any:
    """`model` held to `grammar`: the packaged local model, or an endpoint whose grammar field is configured.

    Any other model says so (LLMConfigError) before a request is sent.
    """
    from t2c_lib.llm.local import LocalModel
    from t2c_lib.llm.openai_compat import OpenAICompatModel

    if isinstance(model, (LocalModel, OpenAICompatModel)):
        return model.variant(grammar=grammar)
    raise LLMConfigError(
        f"decoding: constrained needs a model that takes a GBNF grammar; {getattr(model, 'model_id', model)!r} "
        "takes none. Use a packaged local model (model: local), an endpoint with T2C_LLM_GRAMMAR_FIELD set, "
        "or decoding: free"
    )
