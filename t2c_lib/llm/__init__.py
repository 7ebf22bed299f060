"""Language-model backends behind one `ChatModel` protocol.

`make_model(spec)` picks a backend (the packaged local model or any OpenAI-compatible
endpoint; environment variables are listed in `t2c_lib.llm.factory`), `CachedModel`
puts the response cache in front of it, and `parse_response` pulls the query out.
Backends import their heavy dependencies (llama-cpp-python, openai) only when built.
"""

from t2c_lib.llm.base import ChatModel, Completion, LLMError, Message, Usage
from t2c_lib.llm.cache import CachedModel, CacheMode, ResponseCache, default_cache_path
from t2c_lib.llm.factory import make_model
from t2c_lib.llm.parse import ParsedResponse, QuerySource, parse_response

__all__ = [
    "CacheMode",
    "CachedModel",
    "ChatModel",
    "Completion",
    "LLMError",
    "Message",
    "ParsedResponse",
    "QuerySource",
    "ResponseCache",
    "Usage",
    "default_cache_path",
    "make_model",
    "parse_response",
]
