"""CyVer steps without a server: a transaction the server stopped at its time limit is a TIMEOUT, never a finding."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from t2c_lib.graph.base import QueryTimeout
from t2c_lib.graph.neo4j import is_timeout_error
from t2c_lib.records import ErrorType
from t2c_lib.validation.base import ValidationContext
from t2c_lib.validation.cyver import CyVerSession, CyVerSyntaxStep, server_timed_out

SERVER_TIMEOUT = {
    "code": "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    "description": "The transaction has not completed within the timeout specified at its start by the client.",
}
SYNTAX = {"code": "Neo.ClientError.Statement.SyntaxError", "description": "Invalid input 'RETURN'"}


def _session(reply: tuple) -> CyVerSession:
    """A CyVer session whose syntax validator answers `reply` (CyVer's own shape: verdict, metadata)."""
    session = CyVerSession.__new__(CyVerSession)
    session.driver = SimpleNamespace(t2c_timeout_s=1.0)
    session.store = SimpleNamespace()
    session.database = "neo4j"
    session.syntax = SimpleNamespace(validate=lambda query, database_name: reply)
    return session


def test_the_servers_timeout_codes_are_recognised():
    assert is_timeout_error(SERVER_TIMEOUT["code"], SERVER_TIMEOUT["description"])
    assert is_timeout_error("Neo.TransientError.Transaction.Terminated", "the transaction timed out")
    assert not is_timeout_error(SYNTAX["code"], SYNTAX["description"])
    assert server_timed_out((False, [SYNTAX, SERVER_TIMEOUT]))
    assert not server_timed_out((False, [SYNTAX])) and not server_timed_out((1.0, [])) and not server_timed_out(None)


def test_a_server_timeout_reported_as_a_finding_is_a_timeout():
    """CyVer catches the server's timeout error and returns it as a failed syntax check; the step says TIMEOUT."""
    with pytest.raises(QueryTimeout, match="the server's timeout"):
        _session((False, [SERVER_TIMEOUT])).call(lambda query, database_name: (False, [SERVER_TIMEOUT]), "RETURN 1")
    ctx = ValidationContext(store=None, schema=None, timeout_s=1.0)  # type: ignore[arg-type]
    verdict = CyVerSyntaxStep(_session((False, [SERVER_TIMEOUT]))).validate("RETURN 1", ctx)
    assert verdict.error_type is ErrorType.TIMEOUT and "cyver_error" not in verdict.details
    verdict = CyVerSyntaxStep(_session((False, [SYNTAX]))).validate("RETURN 1", ctx)
    assert verdict.error_type is ErrorType.SYNTAX_ERROR
