"""`t2c chat` as a user meets it: in a real terminal (pexpect) with the packaged local model, killed and resumed;
and driven by a script through standard input (one message per line, ends at EOF).

The smallest packaged model (Gemma 3 270M) answers: these tests check the conversation's mechanics (turns answered,
saved after every turn, logged, resumed after a kill), not that its answers are right.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from t2c_lib.chat.log import TURN_FIELDS, read_log

pytestmark = pytest.mark.slow  # a real terminal (pexpect) running t2c chat

T2C = str(Path(sys.executable).with_name("t2c"))
PROMPT = "\r\n> "
TURN_TIMEOUT_S = 900


def _env(results: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("T2C_LLM_", "GROQ_", "OPENROUTER_"))}
    env.update(
        {"T2C_RESULTS_DIR": str(results), "T2C_MODEL": "local/gemma-3-270m", "TERM": "dumb", "PYTHONUNBUFFERED": "1"}
    )
    return env


def _spawn(session_id: str, results: Path, new: bool = False):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(
        T2C,
        ["chat", "--session", session_id, *(["--new"] if new else []), "--max-iterations", "1", "--max-tokens", "64"],
        env=_env(results),
        encoding="utf-8",
        timeout=TURN_TIMEOUT_S,
        dimensions=(50, 200),
    )
    return child


@pytest.mark.slow
def test_chat_in_a_terminal_killed_and_resumed(tmp_path):
    session_id = "terminal-e2e"
    child = _spawn(session_id, tmp_path, new=True)
    child.expect(f"session {session_id} started")
    child.expect(PROMPT)
    transcript = [child.before]
    for message in ("Mata kuliah apa saja yang diambil pada semester 3?", "Urutkan dari SKS terbesar."):
        child.sendline(message)
        child.expect(PROMPT)
        transcript.append(child.before)
    directory = tmp_path / "chat" / session_id
    saved = json.loads((directory / "session.json").read_text(encoding="utf-8"))
    assert [t["turn"] for t in saved["turns"]] == [1, 2] and saved["pending"] is None
    child.kill(signal.SIGKILL)  # no goodbye: the process dies at the prompt
    child.wait()
    assert not child.isalive()

    resumed = _spawn(session_id, tmp_path)
    resumed.expect(f"session {session_id} resumed \\(2 turn\\(s\\) so far\\)")
    resumed.expect(PROMPT)
    resumed.sendline("Terima kasih!")
    resumed.expect(PROMPT)
    transcript.append(resumed.before)
    resumed.sendline("exit")
    resumed.expect(f"session {session_id} saved")
    resumed.expect(pytest.importorskip("pexpect").EOF)
    resumed.close()
    assert resumed.exitstatus == 0, "\n".join(transcript)

    state = json.loads((directory / "session.json").read_text(encoding="utf-8"))
    turns = state["turns"]
    assert [t["turn"] for t in turns] == [1, 2, 3] and state["pending"] is None
    assert turns[2]["message"] == "Terima kasih!"
    assert all(t["intent"] in ("EXECUTE_QUERY", "REQUEST_MODIFICATION", "ACKNOWLEDGE", "UNKNOWN") for t in turns)
    assert all(t["status"] in ("answered", "failed", "acknowledged", "unclear") for t in turns)
    for turn, shown in zip(turns, transcript[1:]):
        assert turn["text"].splitlines()[0] in shown.replace("\r\n", "\n")
    lines = read_log(directory / "analytics.jsonl")
    assert [line["turn"] for line in lines] == [1, 2, 3]
    assert all(set(TURN_FIELDS) <= set(line) and line["session_id"] == session_id for line in lines)
    assert all(line["llm_calls"] >= 1 for line in lines)  # the model routed (or tried to) every message


def test_chat_reads_messages_from_stdin_until_eof(tmp_path):
    """Rules routing: a greeting (unclear) and thanks need no model call and no query; the script ends at EOF."""
    run = subprocess.run(
        [T2C, "chat", "--router", "rules", "--session", "script", "--new"],
        input="Halo, apa kabar?\n\nok\n",
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "> Halo, apa kabar?" in run.stdout and "> ok" in run.stdout
    assert "Maaf, saya tidak memahami" in run.stdout and "Sama-sama!" in run.stdout
    lines = read_log(tmp_path / "chat" / "script" / "analytics.jsonl")
    assert [(line["intent"], line["intent_source"], line["llm_calls"]) for line in lines] == [
        ("UNKNOWN", "rules", 0),
        ("ACKNOWLEDGE", "rules", 0),
    ]


def test_chat_refuses_a_bad_session_id(tmp_path):
    run = subprocess.run(
        [T2C, "chat", "--session", "../escape"],
        input="",
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=300,
    )
    assert run.returncode == 1 and "invalid session id" in run.stderr


def test_a_mistyped_session_id_is_an_error_listing_the_saved_sessions_not_a_new_session(tmp_path):
    """Issue 28, item 5: `--session ID` resumes; an id nobody saved stops with the saved ids, and `--new` starts one."""
    started = subprocess.run(
        [T2C, "chat", "--router", "rules", "--session", "20261123-a", "--new"],
        input="ok\n",
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=300,
    )
    assert started.returncode == 0, started.stderr
    mistyped = subprocess.run(
        [T2C, "chat", "--router", "rules", "--session", "20261123-b"],
        input="ok\n",
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=300,
    )
    assert mistyped.returncode == 1
    assert "no saved session '20261123-b'" in mistyped.stderr and "20261123-a" in mistyped.stderr
    assert "--session 20261123-b --new" in mistyped.stderr
    assert not (tmp_path / "chat" / "20261123-b").exists()
    again = subprocess.run(
        [T2C, "chat", "--router", "rules", "--session", "20261123-a", "--new"],
        input="",
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=300,
    )
    assert again.returncode == 1 and "already exists" in again.stderr
