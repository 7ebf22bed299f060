"""The test suite (a package, so that tests import their helpers one way: `tests.helpers`)."""
