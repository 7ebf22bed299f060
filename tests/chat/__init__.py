"""Tests of conversations: routing, follow-up edits, sessions, the terminal and the notebook (`t2c_lib/chat/`)."""
