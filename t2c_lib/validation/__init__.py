"""The read-only guard and the ordered validator chain."""
