"""The version of mcpsync, kept in one place: pyproject.toml reads it (``[tool.setuptools.dynamic]``), and the
release tag is ``v`` plus this string (see CHANGELOG.md, "Versions and tags")."""

__version__ = "0.1.0"
