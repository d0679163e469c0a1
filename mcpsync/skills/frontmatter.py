"""YAML frontmatter of a ``SKILL.md`` (Agent Skills), read with PyYAML.

:func:`split_frontmatter` separates the ``---`` delimited header from the body; :func:`parse_yaml` reads the
header with PyYAML's safe loader, so a skill's frontmatter means here what
it means to the Python tools that wrote it: ``yes`` is ``True``, ``012`` is ``10``, ``1_000`` is ``1000``, and
``a: b: c`` is an error. Two departures, both refusals or JSON-shaped answers, never a different reading:

* dates and times stay strings (a skill entry's ``frontmatter`` is JSON, where a date is a string);
* aliases and duplicate keys are refused: a host that cannot be sure what a skill's frontmatter says must not
  load the skill.

Any failure raises :class:`FrontmatterError`. PyYAML is imported on the first call (skills are the only users).
Pure functions; thread-safe; no I/O.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Type

__all__ = ["FrontmatterError", "parse_yaml", "split_frontmatter"]


class FrontmatterError(ValueError):
    """The frontmatter is missing or not YAML that a skill may carry."""


def split_frontmatter(text: str) -> Tuple[str, str]:
    """``(frontmatter_yaml, body)`` of a document that starts with a ``---`` line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r").rstrip() != "---":
        raise FrontmatterError("SKILL.md does not begin with a '---' frontmatter block")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r").rstrip() in ("---", "..."):
            header = "\n".join(line.rstrip("\r") for line in lines[1:i])
            return header, "\n".join(lines[i + 1 :])
    raise FrontmatterError("SKILL.md frontmatter has no closing '---' line")


def _loader_class() -> Type[Any]:
    try:
        import yaml
    except ImportError as exc:  # a runtime dependency; only a broken install lacks it
        raise FrontmatterError("reading skill frontmatter needs PyYAML (pip install PyYAML)") from exc
    base: Any = yaml.SafeLoader  # the pure-Python one: its composer is where aliases are refused

    class Loader(base):  # type: ignore[misc]
        """The safe loader without timestamps, aliases or duplicate keys."""

        yaml_implicit_resolvers = {
            first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for first, resolvers in base.yaml_implicit_resolvers.items()
        }

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise FrontmatterError("aliases are not allowed in skill frontmatter")
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Dict[Any, Any]:
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:
                    raise FrontmatterError("a frontmatter key is not a scalar") from None
                if duplicate:
                    raise FrontmatterError("duplicate frontmatter key %r" % (key,))
                seen.add(key)
            return dict(super().construct_mapping(node, deep=deep))

    return Loader


def parse_yaml(text: str) -> Any:
    """The value of one YAML document (``None`` for an empty one). Raises :class:`FrontmatterError`."""
    loader_class = _loader_class()
    import yaml

    loader: Optional[Any] = None
    try:
        loader = loader_class(text)
        return loader.get_single_data()
    except FrontmatterError:
        raise
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise FrontmatterError("not valid YAML: %s" % (str(exc).splitlines() or ["?"])[0]) from None
    finally:
        if loader is not None:
            loader.dispose()
