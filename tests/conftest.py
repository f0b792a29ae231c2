"""The suite's fixtures, from tests/support (a package on pytest's pythonpath)."""

pytest_plugins = ("support.projects", "support.docs_site")
