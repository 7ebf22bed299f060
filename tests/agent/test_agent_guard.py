"""The whole write/admin corpus through the loop: every query refused, the graph unchanged."""

from __future__ import annotations

from t2c_lib.agent import AgentLoop, ErrorType
from t2c_lib.feedback import FeedbackBuilder
from t2c_lib.prompts import Configuration, PromptBuilder
from t2c_lib.validation import build_chain, make_context
from tests.helpers import FIXTURES, ScriptedModelStandIn, read_cases

WRITE_CASES = read_cases(FIXTURES / "guard" / "write_queries.cypher")


def test_write_corpus_through_the_loop_leaves_the_graph_unchanged(kurikulum_store, kurikulum):
    before = kurikulum_store.counts()
    ctx = make_context(kurikulum_store)
    config = Configuration.from_name("Zero-Shot_Full")
    prompts = PromptBuilder(config, ctx.schema.render(config.schema_format), kurikulum.language)
    model = ScriptedModelStandIn([f"<cypher>{query}</cypher>" for _, query in WRITE_CASES])
    loop = AgentLoop(
        model, build_chain(kurikulum_store), ctx, prompts, FeedbackBuilder(ctx.schema, "id"), max_iterations=1
    )
    for index, (title, query) in enumerate(WRITE_CASES):
        state = loop.run("Hapus semua mata kuliah.", f"write-{index}")
        attempt = state.attempts[0]
        assert not state.success, title
        assert attempt.query == query.strip(), title  # the response parser hands the query over unchanged
        assert attempt.error_type is ErrorType.UNSAFE_QUERY, (title, attempt.query, attempt.validations[-1].message)
        assert [v.validator for v in attempt.validations] == ["guard"], title
    assert not model.responses
    assert kurikulum_store.counts() == before
